import numpy as np

from primebench_tasks import Leaderboard, Panel
from primebench_tasks.cli import main, panel_info_text
from primebench_tasks.data.defaults import default_names


def test_embedded_data_sets():
    assert default_names() == ["autojudger", "m3irt", "mathvision", "openvlm"]


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
