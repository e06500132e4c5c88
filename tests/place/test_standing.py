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


def _doc(benchmarks, full=None):
    from primebench_tasks.place.misfit import PersonFit
    from primebench_tasks.place.result import (
        BenchmarkPlacement,
        Estimate,
        ModelPlacement,
        Placement,
        Rank,
        SuitePlacement,
    )

    full = full or Estimate(0.5, 0.4, 0.6)
    rank = Rank(3.0, 2.0, 5.0, 10)
    fit = PersonFit(None, None, None, 10, 9, 0.01, False, why_not="9 reference models")

    def entry() -> BenchmarkPlacement:
        return BenchmarkPlacement(
            "p", 10, 10, 9, full, rank, full, rank, "interior", False, "held_out", fit
        )

    suite = SuitePlacement(20, 20, full, full, rank)
    return Placement(
        "v", "primebench", "greg", 10, 0, {},
        {"m": ModelPlacement(suite, {}, {b: entry() for b in benchmarks})},
    )  # fmt: skip


def test_a_benchmark_of_another_harness_is_ranked_with_its_caveat():
    """The flagship's MathVista is placed among M3IRT's own runs, not VLMEvalKit's records: it
    is ranked on the leaderboard too (on 4d9a95b it got none), the harness named and the offset
    caveat said; MMMU (VLMEvalKit's records) without a caveat; the suite on both."""
    from primebench_tasks.place.standing import add_leaderboard_standing

    manifest = as_suite(json.loads((SUITES / "primebench.json").read_text()))
    doc = _doc(["MMMU_DEV_VAL", "MathVista_MINI"])
    add_leaderboard_standing(doc, manifest)
    got = doc.to_json()["models"]["m"]
    mv, mmmu = (
        got["benchmarks"]["MathVista_MINI"]["leaderboard"],
        got["benchmarks"]["MMMU_DEV_VAL"]["leaderboard"],
    )
    assert mv["column"] == "MathVista" and "M3IRT" in mv["harness"] and "offset" in mv["caveat"]
    assert "caveat" not in mmmu and mmmu["newest_release"] == "2025-09-17"
    assert got["suite"]["leaderboard"]["benchmarks"] == ["MMMU_DEV_VAL", "MathVista_MINI"]


def _snapshot(tmp_path, rows):
    import csv

    f = tmp_path / "lb.csv"
    with open(f, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["name", "date", "MMMU_VAL", "MathVista"])
        w.writerows(rows)
    return f


def test_ranks_among_all_and_among_the_models_of_its_year_by_hand(tmp_path):
    """Five models: a 2023 one at 70, a 2024-01 one at 60, three of the last 12 months before
    the newest (2025-06) at 55, 45 and 40 (MMMU, %). A placed 0.50 [0.42, 0.58]: rank 4 of 6
    among all (70, 60, 55 above), [3, 5] (two above 0.58, four above 0.42); among its year's 3:
    2 of 4 (55 above), [1, 3]. The suite on the mean of MMMU and MathVista (the four models that
    report both: 70, 55, 45, 40): 3 of 5, [2, 4]."""
    from primebench_tasks.data.leaderboard import Leaderboard
    from primebench_tasks.place.result import Estimate
    from primebench_tasks.place.standing import add_leaderboard_standing

    lb = Leaderboard.from_csv(
        _snapshot(
            tmp_path,
            [
                ["old", "2023-03-01", "70", "70"],
                ["mid", "2024-01-10", "60", ""],
                ["a", "2024-09-01", "55", "55"],
                ["b", "2025-01-01", "45", "45"],
                ["c", "2025-06-30", "40", "40"],
            ],
        )
    )
    manifest = as_suite(json.loads((SUITES / "primebench.json").read_text()))
    doc = _doc(["MMMU_DEV_VAL", "MathVista_MINI"], Estimate(0.5, 0.42, 0.58))
    add_leaderboard_standing(doc, manifest, lb)
    got = doc.to_json()["models"]["m"]
    e = got["benchmarks"]["MMMU_DEV_VAL"]["leaderboard"]
    assert e["newest_release"] == "2025-06-30" and e["models"] == 5 and e["recent_models"] == 3
    assert e["rank"] == {"value": 4.0, "lo": 3.0, "hi": 5.0, "out_of": 6}
    assert e["recent_rank"] == {"value": 2.0, "lo": 1.0, "hi": 3.0, "out_of": 4}
    s = got["suite"]["leaderboard"]
    assert s["models"] == 4 and s["rank"] == {"value": 3.0, "lo": 2.0, "hi": 4.0, "out_of": 5}


def test_a_newer_snapshot_imported_by_the_user_changes_the_ranks(tmp_path, capsys):
    """`primebench panel import-leaderboard` reads a snapshot of the embedded one's shape; ranked
    on it (place --leaderboard), the same placement stands among its models and its newest
    release date is said — no code change."""
    from primebench_tasks.cli import main
    from primebench_tasks.data.leaderboard import Leaderboard
    from primebench_tasks.place.report import leaderboard_lines
    from primebench_tasks.place.result import Estimate
    from primebench_tasks.place.standing import add_leaderboard_standing

    rows = [[f"new-{k}", f"2026-0{k}-15", str(80 + k), str(80 + k)] for k in range(1, 7)]
    f = _snapshot(tmp_path, rows)
    assert main(["panel", "import-leaderboard", str(f), "--out", str(tmp_path / "snap")]) == 0
    assert "6 models × 2 benchmarks" in capsys.readouterr().out
    assert main(["panel", "import-leaderboard", str(f), "--out", str(tmp_path / "snap")]) == 2
    lb = Leaderboard.load(tmp_path / "snap")
    manifest = as_suite(json.loads((SUITES / "primebench.json").read_text()))
    doc = _doc(["MMMU_DEV_VAL"], Estimate(0.5, 0.42, 0.58))
    add_leaderboard_standing(doc, manifest, lb)
    e = doc.models["m"].benchmarks["MMMU_DEV_VAL"].leaderboard
    assert e is not None and e["rank"]["value"] == 7.0 and e["newest_release"] == "2026-06-15"
    lines = leaderboard_lines(doc.models["m"])
    assert "newest model released 2026-06-15" in lines[0] and "rank 7 of 7" in lines[1]
