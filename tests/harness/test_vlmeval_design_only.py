"""Design-only benchmarks in VLMEvalKit (#81): the wide suite's five design-only members drawn
from VLMEvalKit's TSVs (``$LMUData/<dataset>.tsv``) through the cross-harness views give the
same items — content keys, strata, pool — as lmms-eval's generated task draws from the hub
rows of the same items. Stand-ins of both schemas hold the same items: VLMEvalKit's MMStar
holds the options in columns A-D (lmms-eval inlines them), its POPE one row per question and
image with the splits comma-joined, its images JPEG in base64 (one per image, later rows naming
the row that holds it); each TSV in two row orders."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness_adapters.harnesses.vlmeval.design_export import draw_from_tsv
from harness_adapters.harnesses.vlmeval.export import read_tsv
from primebench_tasks.cli import main
from primebench_tasks.data.cards import design_only_cards
from primebench_tasks.errors import InputError
from primebench_tasks.suite.content_design import ContentDesign, design_only_document
from tests.fixtures import design_standins as standins
from tests.harness.test_vlmeval import ROOT, needs_vlmeval

pytest.importorskip("PIL")

KINDS = standins.KINDS
N_ROWS, N_DRAWN = 60, 20


def designs() -> dict[str, ContentDesign]:
    return {
        c.name: ContentDesign.from_document(
            design_only_document(c, N_DRAWN)["design"], "card", c.name
        )
        for c in design_only_cards("primebench_wide")
    }


@pytest.mark.parametrize("name", sorted(KINDS))
@pytest.mark.parametrize("order", [1, 2])
def test_vlmevalkit_draws_the_items_lmms_eval_draws(name, order, tmp_path):
    design = designs()[name]
    rows = standins.ROWS[KINDS[name]](N_ROWS)
    theirs = standins.lmms_draw(rows, design, name)
    tsv = standins.vlmeval_tsv(KINDS[name], rows, tmp_path / f"{name}.tsv", seed=order)
    ours = draw_from_tsv(design, name, read_tsv(tsv), tsv)
    assert ours.draw["fingerprint"] == theirs.fingerprint
    assert ours.draw["strata"] == theirs.as_document()["strata"]
    assert ours.draw["items"] == theirs.as_document()["items"]
    assert list(ours.index_to_item.values()) == [k for k, _, _ in theirs.items]
    assert len(ours.rows) == N_DRAWN and list(ours.rows["index"]) == [
        str(k) for k in range(N_DRAWN)
    ]
    assert all(len(v) > 64 for v in ours.rows["image"])  # every image inline
    if name == "POPE":  # each drawn row asked in its one split, as lmms-eval asks it
        assert set(ours.rows["category"]) <= set(standins.POPE_CATEGORIES)
        got = dict(zip(ours.index_to_item.values(), ours.rows["category"], strict=True))
        assert got == {k: h for k, h, _ in theirs.items}


def test_a_tsv_the_view_cannot_read_is_refused_naming_file_row_and_field(tmp_path):
    design = designs()["ScienceQA_TEST"]
    rows = standins.ROWS["scienceqa"](N_ROWS)
    tsv = standins.vlmeval_tsv("scienceqa", rows, tmp_path / "ScienceQA_TEST.tsv")
    table = read_tsv(tsv)
    with pytest.raises(InputError, match=r"no 'hint' column.*field 'hint'|field 'hint'.*hint"):
        draw_from_tsv(design, "ScienceQA_TEST", table.drop(columns=["hint"]), tsv)
    broken = table.copy()
    at = int((broken["image"].str.len() > 64).to_numpy().nonzero()[0][3])
    broken.loc[at, "image"] = "bm90IGFuIGltYWdl" * 5
    with pytest.raises(InputError, match=rf"row {at + 2}.*field 'image'.*does not decode"):
        draw_from_tsv(design, "ScienceQA_TEST", broken, tsv)
    dangling = table.copy()
    dangling.loc[0, "image"] = "9999"
    with pytest.raises(InputError, match="row 2.*refers to row index '9999'"):
        draw_from_tsv(design, "ScienceQA_TEST", dangling, tsv)


def right(key: str) -> bool:
    """Whether the fake model answers the item of content key ``key`` right."""
    return int(key[:4], 16) % 3 != 0


@needs_vlmeval
@pytest.mark.slow  # VLMEvalKit's run.py end to end (CI)
def test_tasks_vlmeval_exports_the_design_only_members_and_place_places_them_as_lmms_eval(
    tmp_path,
):
    """``tasks vlmeval`` on a suite with the wide suite's design-only members draws them from the
    TSVs; VLMEvalKit's run.py asks and scores them (its own MCQ, VQA and yes/no evaluations);
    ``place --vlmeval`` places them — the same placement as the lmms-eval path's records of the
    same items and answers. A member whose TSV is absent is missing with why."""
    import pandas as pd

    from harness_adapters.run.report import write_placement
    from harness_adapters.suites.released import resolve_suite

    base = resolve_suite("primebench_mathvision")
    suite = base.with_design_only(
        [design_only_document(c, N_DRAWN) for c in design_only_cards("primebench_wide")],
        f"{base.name}_design",
    )
    suite_file = tmp_path / "suite.json"
    suite_file.write_text(suite.to_json(), "utf-8")
    src, lmu, work = tmp_path / "upstream", tmp_path / "LMUData", tmp_path / "outputs"
    src.mkdir()
    lmms, intended = [], {}
    for e in suite.design_only:
        if e.name == "TextVQA_VAL":  # its TSV absent: missing, with why
            continue
        rows = standins.ROWS[KINDS[e.name]](N_ROWS)
        standins.vlmeval_tsv(KINDS[e.name], rows, src / f"{e.vlmeval_dataset}.tsv", seed=5)
        drawn = standins.lmms_draw(rows, e.design, e.name)
        pool = json.dumps(
            {"strata": drawn.as_document()["strata"], "fingerprint": drawn.fingerprint}
        )
        intended[e.name] = {k: right(k) for k, _, _ in drawn.items}
        lmms += [
            {"model": "FakeVLM", "benchmark": e.name, "item_id": k, "score": float(right(k)),
             "stratum": h, "pool": pool}
            for k, h, _ in drawn.items
        ]  # fmt: skip
    only = ",".join(e.name for e in suite.design_only)
    export = ["tasks", "vlmeval", "--suite", str(suite_file), "--only", only]
    assert main([*export, "--source-tsv", str(src), "--lmudata", str(lmu)]) == 0
    config = json.loads((lmu / "primebench_vlmeval_config.json").read_text())
    assert set(config["missing"]) == {"TextVQA_VAL"} and "was not found" in str(config["missing"])
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(intended))
    env = {
        **os.environ,
        "LMUData": str(lmu),
        "PRIMEBENCH_FAKE_VLM": "1",
        "PRIMEBENCH_FAKE_VLM_ANSWERS": str(answers),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    cmd = [sys.executable, "-m", "primebench_tasks.cli", "evaluate", "vlmeval"]
    cmd += ["--import", "tests.fixtures.vlmeval_standins", "--", "--data", *config["data"]]
    cmd += ["--model", "FakeVLM", "--judge", "exact_matching", "--work-dir", str(work)]
    cmd += ["--api-nproc", "1"]
    proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = tmp_path / "report"
    place = ["place", "--vlmeval", str(work), "--suite", str(suite_file), "--out", str(out)]
    assert main([*place, "--allow-partial", "--n-boot", "50"]) == 0
    report = json.loads((out / "report.json").read_text())
    got = report["models"]["FakeVLM"]["design_only"]
    assert sorted(got) == sorted(set(KINDS) - {"TextVQA_VAL"})
    assert "design-only" in report["missing"]["FakeVLM"]["TextVQA_VAL"]["why"]
    for name, e in got.items():  # every drawn item asked and scored as intended
        assert e["n_scored"] == N_DRAWN, name
    frame = pd.DataFrame(lmms)
    doc = write_placement(
        frame, suite.version, tmp_path / "lmms", suite=suite_file, n_boot=50, allow_partial=True
    )
    assert doc.to_json()["models"]["FakeVLM"]["design_only"] == got


def test_the_vqa_and_yes_no_result_tables_are_read_or_refused_by_row_and_field():
    """The per-row scores of VLMEvalKit's VQA (``eval_score``) and yes/no (``score``) tables:
    read as they are, a value out of range or of another kind refused naming file, row, field."""
    from pathlib import Path

    import pandas as pd

    from harness_adapters.harnesses.vlmeval.ingest import _scores

    where = Path("m_PrimeBench_POPE_auxmatch.xlsx")
    assert _scores(pd.DataFrame({"eval_score": [0.3, 1, 0]}), "eval_score", where) == [0.3, 1, 0]
    assert _scores(pd.DataFrame({"score": [True, False, "True"]}), "yorn_score", where) == [1, 0, 1]
    assert _scores(pd.DataFrame({"hit": [0, 1.0]}), "hit", where) == [0.0, 1.0]
    for col, rule, values, why in (
        ("eval_score", "eval_score", [0.5, 1.2], r"row 3, field 'eval_score'.*1.2 is not a number"),
        ("eval_score", "eval_score", [None], r"row 2, field 'eval_score'.*is not a number in"),
        ("score", "yorn_score", [True, "maybe"], r"row 3, field 'score'.*is not True or False"),
        ("hit", "hit", [0, 2], r"row 3, field 'hit': hit 2 is not 0 or 1"),
    ):
        with pytest.raises(InputError, match=why):
            _scores(pd.DataFrame({col: values}), rule, where)
