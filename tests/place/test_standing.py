import json
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.place.standing import leaderboard_rank
from primebench_tasks.suite.manifest import as_suite

SUITES = Path(__file__).parents[2] / "task_configs" / "suites"


def test_rank_by_hand():
    """Scores 0.9, 0.8, 0.8, 0.5, NaN: 0.85 beats two of four → rank 2; its interval
    [0.75, 0.95] → ranks 1 (0.95) to 4 (0.75: three above it); out of 5."""
    r = leaderboard_rank(0.85, 0.75, 0.95, np.array([0.9, 0.8, 0.8, 0.5, np.nan]))
    assert r == {"value": 2.0, "lo": 1.0, "hi": 4.0, "out_of": 5}
    # a tie with a leaderboard score is not counted as being beaten
    assert leaderboard_rank(0.8, 0.8, 0.8, np.array([0.9, 0.8]))["value"] == 2.0


def _replay(manifest, panels, model):
    """``model``'s own recorded answers on the suite's items, as a new run (NaN on a benchmark
    whose panel does not hold the model)."""
    from primebench_tasks.pipeline.manifest import manifest_items

    cols = [
        (b, str(i))
        for by_b in manifest_items(manifest).values()
        for b, v in by_b.items()
        for i in v
    ]
    row = []
    for b, i in cols:
        p = panels[b]
        if model not in p.model_names:
            row.append(np.nan)
            continue
        row.append(p.matrix(b)[p.model_names.index(model), list(map(str, p.item_ids(b))).index(i)])
    return pd.DataFrame([row], index=[f"{model} again"], columns=pd.MultiIndex.from_tuples(cols))


def test_the_vlmeval_suite_reports_the_leaderboard_standing():
    """On primebench_vlmeval (VLMEvalKit's records), AI2D, MMMU and OCRBench are on the OpenVLM
    leaderboard; BLINK and RealWorldQA are not. A reference model replayed: the interval of its
    leaderboard rank holds the leaderboard rank of its own full score on the panel (its
    leaderboard figure differs from it by the harness offset: MMMU 0.512 vs 0.489)."""
    from primebench_tasks.data.leaderboard import Leaderboard
    from primebench_tasks.pipeline.multi_source import source_panels
    from primebench_tasks.place.suite import place_on_suite

    manifest = as_suite(json.loads((SUITES / "primebench_vlmeval.json").read_text()))
    panels = source_panels(manifest)
    doc = place_on_suite(
        manifest, panels, _replay(manifest, panels, "InternVL2-8B"), n_boot=50
    ).to_json()
    bench = doc["models"]["InternVL2-8B again"]["benchmarks"]
    assert {b for b, e in bench.items() if "leaderboard" in e} == {
        "AI2D_TEST",
        "MMMU_DEV_VAL",
        "OCRBench",
    }
    lb = Leaderboard.load_default("openvlm").scores
    for b, col in (("AI2D_TEST", "AI2D"), ("MMMU_DEV_VAL", "MMMU_VAL"), ("OCRBench", "OCRBench")):
        e = bench[b]["leaderboard"]
        assert e["column"] == col and e["models"] == 284 and e["rank"]["out_of"] == 285
        r = e["rank"]
        assert r["lo"] <= r["value"] <= r["hi"]
        p = panels[b]
        full = float(np.nanmean(p.matrix(b)[p.model_names.index("InternVL2-8B")]))
        own = 1 + int((lb[col] > full).sum())
        assert r["lo"] <= own <= r["hi"], (b, r, own)  # its own full score's rank is inside


def test_benchmarks_not_scored_as_vlmevalkit_get_no_leaderboard_standing():
    """The flagship's MathVista is placed among M3IRT's own runs, not VLMEvalKit's records: no
    leaderboard standing although the leaderboard has it; its MMMU, AI2D and OCRBench are
    VLMEvalKit's records (the merged MMMU panel: 168 of its 185 rows): they get one."""
    from primebench_tasks.place.result import (
        BenchmarkPlacement,
        Estimate,
        ModelPlacement,
        Placement,
        Rank,
        SuitePlacement,
    )
    from primebench_tasks.place.standing import add_leaderboard_standing

    manifest = as_suite(json.loads((SUITES / "primebench.json").read_text()))
    full = Estimate(0.5, 0.4, 0.6)
    rank = Rank(3.0, 2.0, 5.0, 10)

    def entry() -> BenchmarkPlacement:
        return BenchmarkPlacement(
            "p", 10, 10, 9, full, rank, full, rank, "interior", False, "held_out", {}
        )

    suite = SuitePlacement(20, 20, full, full, rank)
    doc = Placement(
        "v",
        "primebench",
        "greg",
        10,
        0,
        {},
        {"m": ModelPlacement(suite, {}, {"MMMU_DEV_VAL": entry(), "MathVista_MINI": entry()})},
    )
    add_leaderboard_standing(doc, manifest)
    got = doc.to_json()["models"]["m"]["benchmarks"]
    assert "leaderboard" not in got["MathVista_MINI"] and "leaderboard" in got["MMMU_DEV_VAL"]
