"""VLMEvalKit's published evaluation records as a panel: real files (tests/fixtures/
openvlm_records, four models), the scoring rules by hand, and agreement with VLMEvalKit's own
code where it is installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness_adapters.harnesses.vlmeval.records import (
    builtin_can_infer,
    ocrbench_hit,
    read_records,
    records_panel,
)
from primebench_tasks.errors import InputError
from tests.extras import installed

RECORDS = Path(__file__).parents[1] / "fixtures" / "openvlm_records"
DATASETS = ["BLINK", "OCRBench", "RealWorldQA"]


def test_builtin_can_infer_by_hand():
    ch = {"A": "Left", "B": "Straight", "C": "Right"}
    assert builtin_can_infer("B", ch) == "B"
    assert builtin_can_infer("The answer is (C).", ch) == "C"
    assert builtin_can_infer("The correct answer is **A** because ...", ch) == "A"
    assert builtin_can_infer("It turns right", ch) == "C"  # the option text, alone
    assert builtin_can_infer("A or B", ch) is False  # two letters: no answer
    assert builtin_can_infer("Cannot determine the answer", ch) == "Z"
    assert builtin_can_infer("", ch) is False


def test_ocrbench_rule_by_hand():
    assert ocrbench_hit('The word is "Centre."', ["CENTRE"], "Regular Text Recognition")
    assert not ocrbench_hit("Friends", ["CENTRE"], "Regular Text Recognition")
    # handwritten math: spaces ignored on both sides
    assert ocrbench_hit(
        "x ^ { 2 } + 1", ["x^{2}+1"], "Handwritten Mathematical Expression Recognition"
    )


def test_real_records_every_file_accounted_for():
    scores, items, rep = read_records(RECORDS, DATASETS, rule="builtin")
    assert rep.files_seen == 12
    assert len(rep.scored) + len(rep.skipped) == rep.files_seen
    # Aria: the top-level record counts, the T<date>_G<commit> run is listed as not used
    assert "Aria/Aria_OCRBench.xlsx" in rep.scored
    assert "another run of Aria" in rep.skipped["Aria/T20241127_Ged9aa101/Aria_OCRBench.xlsx"]
    # mostly unparseable or empty predictions: reported and left out, not scored 0
    assert rep.not_scored[("XComposer", "BLINK")] > 0.9
    assert rep.not_scored[("qwen_base", "OCRBench")] > 0.7
    assert not ((scores.model == "XComposer") & (scores.benchmark == "BLINK")).any()
    n = scores.groupby("benchmark").item_id.nunique().to_dict()
    assert n == {"BLINK": 1901, "OCRBench": 1000, "RealWorldQA": 765}
    assert set(items.columns) >= {"question", "options", "answer", "source_index"}
    blink = items[items.benchmark == "BLINK"].set_index("item_id")
    assert blink.loc["val_Art_Style_1", "answer"] == "A"  # BLINK's idx is the key


def test_real_records_panel_and_ocrbench_accuracy():
    panel, rep = records_panel(RECORDS, DATASETS, rule="builtin")
    assert sorted(panel.benchmark_names) == sorted(DATASETS)
    X = panel.matrix("OCRBench")
    m = panel.model_names.index("InternVL2-2B")
    # the OpenVLM leaderboard's published OCRBench figure for InternVL2-2B: 78.1
    assert 100 * np.nanmean(X[m]) == pytest.approx(78.1, abs=0.5)
    assert np.isnan(panel.matrix("BLINK")[panel.model_names.index("XComposer")]).all()


@pytest.mark.skipif(not installed("vlmeval"), reason="needs VLMEvalKit (README, VLMEvalKit)")
def test_vlmeval_own_rule_agrees_with_the_builtin_one_on_every_row():
    _, _, rep = read_records(RECORDS, DATASETS, rule="vlmeval")
    assert rep.rule == "VLMEvalKit can_infer"
    for ds, (same, n) in rep.agreement.items():
        assert n > 0 and same == n, ds
    a, _, _ = read_records(RECORDS, DATASETS, rule="vlmeval")
    b, _, _ = read_records(RECORDS, DATASETS, rule="builtin")
    assert a.equals(b)


def test_bad_requests_are_clear_errors(tmp_path):
    with pytest.raises(InputError, match="no scoring rule"):
        read_records(RECORDS, ["MathVista_MINI"])
    with pytest.raises(InputError, match="not a folder"):
        read_records(tmp_path / "none", DATASETS)


def test_a_blank_index_cell_is_named_and_a_float_column_keeps_the_ids(tmp_path):
    """#54: one blank `index` cell made pandas read the column as float, so one model's ids
    became '0.0', '1.0', ... and the panel held 1,530 items for a 765-item benchmark."""
    import shutil

    import pandas as pd

    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    path = root / "qwen_base" / "qwen_base_RealWorldQA.xlsx"
    df = pd.read_excel(path, engine="openpyxl")
    n = len(df)
    df["index"] = df["index"].astype(float)  # as a reader makes it when a cell is blank
    df.to_excel(path, index=False)
    panel, _ = records_panel(root, ["RealWorldQA"], rule="builtin")
    assert len(panel.item_ids("RealWorldQA")) == n
    assert not any("." in str(i) for i in panel.item_ids("RealWorldQA"))
    df.loc[4, "index"] = None
    df.to_excel(path, index=False)
    with pytest.raises(InputError, match=r"qwen_base_RealWorldQA.xlsx, row 6, field 'index'"):
        records_panel(root, ["RealWorldQA"], rule="builtin")


def test_import_records_into_an_existing_panel_appends_or_refuses(tmp_path, capsys):
    """#54: `ingest vlmeval-records --out P` on an existing panel replaced it silently."""
    from primebench_tasks.cli import main
    from primebench_tasks.data.panel import Panel

    out = tmp_path / "p"
    base = ["ingest", "vlmeval-records", str(RECORDS), "--rule", "builtin", "--out", str(out)]
    assert main([*base, "--datasets", "OCRBench"]) == 0
    assert main([*base, "--datasets", "RealWorldQA"]) == 0
    assert "appended to" in capsys.readouterr().out
    assert sorted(Panel.load(out).benchmark_names) == ["OCRBench", "RealWorldQA"]
    held = Panel.load(out).content_hash
    assert main([*base, "--datasets", "OCRBench"]) == 2
    assert "already holds OCRBench" in capsys.readouterr().err
    assert Panel.load(out).content_hash == held
    assert main([*base, "--datasets", "OCRBench", "--replace"]) == 0
    assert Panel.load(out).benchmark_names == ["OCRBench"]


YORN_CASES = {
    "Yes": "Yes",
    "No.": "No",
    "yes, there is a dog": "Yes",
    "No, there is no cat in the image": "No",
    "Yes and no": "Unknown",  # both words: no answer
    "I cannot tell": "Unknown",
    "YES!": "Yes",
    "(no)": "No",
    "yes-no": "Unknown",
    "1,000 yes": "Yes",
    "": "Unknown",
}


def test_yes_no_rule_by_hand():
    from harness_adapters.harnesses.vlmeval.records import builtin_yorn

    for pred, want in YORN_CASES.items():
        assert builtin_yorn(pred) == want, pred


@pytest.mark.skipif(not installed("vlmeval"), reason="needs VLMEvalKit (the vendored snapshot)")
def test_yes_no_rule_is_vlmeval_own_extraction():
    from harness_adapters.harnesses.vlmeval.records import _vlmeval_yorn, builtin_yorn

    theirs = _vlmeval_yorn()
    assert theirs is not None
    many = [*YORN_CASES, "Is it? Yes.", "no; yes", "There is no... yes", "Answer: NO", "yes/no"]
    for pred in many:
        assert builtin_yorn(pred) == theirs(pred), pred


def test_yes_no_records_import(tmp_path):
    """POPE-style records (index, question, answer Yes/No, prediction): a model's items are right
    when the extracted word is the gold one; a model with mostly unreadable answers is left out
    (missing, not 0), as for multiple choice."""
    import pandas as pd

    rows = [
        ("0", "Is there a dog?", "Yes"),
        ("1", "Is there a cat?", "No"),
        ("2", "Is there a car?", "Yes"),
    ]
    preds = {
        "ModelA": ["Yes, there is.", "Yes.", "yes"],  # right, wrong, right
        "ModelB": ["I am not sure", "hard to say", "No."],  # 2 of 3 unreadable: left out
    }
    for model, answers in preds.items():
        folder = tmp_path / model
        folder.mkdir()
        pd.DataFrame(
            [
                {"index": i, "question": q, "answer": a, "prediction": p}
                for (i, q, a), p in zip(rows, answers, strict=True)
            ]
        ).to_excel(folder / f"{model}_POPE.xlsx", index=False)
    scores, items, rep = read_records(tmp_path, ["POPE"], rule="builtin")
    got = {(r.model, r.item_id): r.score for r in scores.itertuples()}
    assert got == {("ModelA", "0"): 1.0, ("ModelA", "1"): 0.0, ("ModelA", "2"): 1.0}
    assert ("ModelB", "POPE") in rep.not_scored
    assert items["answer"].tolist() == ["Yes", "No", "Yes"]
