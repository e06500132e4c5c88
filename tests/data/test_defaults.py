import numpy as np
import pytest

from primebench_tasks import Leaderboard, Panel
from primebench_tasks.cli import main, panel_info_text
from primebench_tasks.data.defaults import default_names


def test_embedded_data_sets():
    assert default_names() == [
        "autojudger",
        "blink",
        "m3irt",
        "mathvision",
        "mmmu_merged",
        "openvlm",
        "openvlm_blink",
        "openvlm_ocrbench",
        "openvlm_ocrbench_text",
        "openvlm_realworldqa",
        "openvlm_realworldqa_text",
        "openvlm_records",
    ]


def test_openvlm_blink_panel_is_the_published_records_scored_by_the_import():
    """86 VLMs × 1,901 BLINK val items keyed by BLINK's idx (the blink panel's ids); the rows of
    a model whose real record file is vendored equal what the import scores from that file."""
    from pathlib import Path

    from harness_adapters.harnesses.vlmeval.records import records_panel

    p = Panel.load_default("openvlm_blink")
    assert len(p.model_names) == 86 and p.benchmark_names == ["BLINK"]
    assert set(p.item_ids("BLINK")) == set(Panel.load_default("blink").item_ids("BLINK"))
    assert p.benchmarks.set_index("benchmark").loc["BLINK", "lmms_eval_task"] == "blink"
    fixtures = Path(__file__).parents[1] / "fixtures" / "openvlm_records"
    small, _ = records_panel(fixtures, ["BLINK"], name="small", rule="builtin")
    assert set(small.model_names) <= set(p.model_names)
    ids = list(p.item_ids("BLINK"))
    order = [list(small.item_ids("BLINK")).index(i) for i in ids]
    for m in small.model_names:
        want = small.matrix("BLINK")[small.model_names.index(m)][order]
        got = p.matrix("BLINK")[p.model_names.index(m)]
        assert np.array_equal(got, want, equal_nan=True), m


def test_blink_panel_is_the_authors_predictions_scored_their_way():
    """19 VLMs × 1,901 BLINK val items; a hand-checked cell: GPT-4o answered (A) on
    val_Art_Style_1 whose gold is (A) → 1; on val_Art_Style_3 gold (B) → (A) is wrong → 0."""
    import json
    from pathlib import Path

    p = Panel.load_default("blink")
    assert len(p.model_names) == 19 and p.benchmark_names == ["BLINK"]
    X = p.matrix("BLINK")
    assert X.shape == (19, 1901) and np.isfinite(X).all()
    ids = list(p.item_ids("BLINK"))
    m = p.model_names.index("GPT4o")
    assert X[m, ids.index("val_Art_Style_1")] == 1.0
    assert X[m, ids.index("val_Art_Style_3")] == 0.0
    # micro-accuracy as the authors score it (exact option equality; their files, vendored)
    blink = Path(__file__).parents[1] / "fixtures" / "data" / "blink"
    gold = json.loads((blink / "val_answers.json").read_text())
    pred = json.loads((blink / "saved_val_predictions" / "GPT4o.json").read_text())
    acc = np.mean([pred[i] == g for i, g in gold.items()])
    assert np.nanmean(X[m]) == pytest.approx(acc, abs=1e-6)


def test_autojudger_panel(capsys):
    p = Panel.load_default("autojudger")
    assert len(p.model_names) >= 168
    assert p.benchmark_names == ["MMMU_DEV_VAL", "AI2D_TEST"]
    assert p.matrix("AI2D_TEST").shape == (169, 3088)
    assert main(["panel", "info", "--default", "autojudger"]) == 0
    out = capsys.readouterr().out
    assert "models: 169" in out and "Science Knowledge" in out and "Academic Knowledge" in out


def test_m3irt_blind_runs_load():
    p = Panel.load_default("m3irt")
    assert len(p.model_names) == 24
    B = p.matrix("MathVista_MINI", "blind")
    frac = float(np.mean(np.nanmean(B, axis=0) >= 2 / 3))
    assert 0.1 < frac < 0.3
    assert f"| {frac:.3f} |" in panel_info_text(p)
    assert {"no_question", "no_info"} <= set(p.conditions)


def test_mathvision_items_have_images():
    p = Panel.load_default("mathvision")
    items = p.items_of("MATH-Vision_MINI")
    assert len(items) == 304
    from primebench_tasks.data.defaults import default_path

    root = default_path("mathvision")
    assert all((root / ref).exists() for ref in items["image_ref"])


def test_openvlm_leaderboard():
    lb = Leaderboard.load_default("openvlm")
    assert lb.scores.shape == (284, 8)
    assert lb.scores.max().max() <= 1.0
    assert lb.models["release_date"].notna().all()


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--k", "100"], "has only 2 categories"),
        (["--floor", "-5"], "must be >= 0"),
        (["--alpha", "nan"], "not a finite number"),
        (["--tau", "nan"], "not a finite number"),
        (["--retention", "0"], "must be > 0 and <= 1"),
        (["--retention", "1.5"], "<= 1"),
    ],
)
def test_build_refuses_out_of_range_parameters(tmp_path, capsys, args, msg):
    try:
        rc = main(
            ["build", "primebench", "--default", "m3irt", "--out", str(tmp_path / "o"), *args]
        )
    except SystemExit as exc:  # argparse: exit 2 with the message on stderr
        rc = exc.code
    assert rc == 2 or rc == 1
    assert msg in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
