"""``primebench panel export``: a panel written as the files ``panel import`` reads, and the import
of an export is the panel it came from (#82) — scores, missing cells, conditions, item content and
images, model metadata."""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pytest

from primebench_tasks.cli import main
from primebench_tasks.data.export import export_panel
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError


def _reimport(folder: Path) -> Panel:
    """Run every line of the export's import.sh through the CLI (in ``folder``)."""
    import os

    here = os.getcwd()
    os.chdir(folder)
    try:
        for line in (folder / "import.sh").read_text().splitlines():
            if line.startswith("primebench "):
                assert main(shlex.split(line)[1:]) == 0, line
    finally:
        os.chdir(here)
    return Panel.load(folder / "P")


def _same(a: Panel, b: Panel) -> None:
    assert a.model_names == b.model_names and a.benchmark_names == b.benchmark_names
    for bench in a.benchmark_names:
        assert [str(i) for i in a.item_ids(bench)] == [str(i) for i in b.item_ids(bench)]
        for c in a.conditions:
            if a.has_condition(bench, c):
                np.testing.assert_array_equal(a.matrix(bench, c), b.matrix(bench, c))
        assert a.category_of(bench) == b.category_of(bench)
    cols = ["model", "release_date", "params_b"]
    assert a.model_table[cols].fillna(-1).equals(b.model_table[cols].fillna(-1))


@pytest.mark.parametrize("name", ["m3irt", "mathvision"])
def test_import_of_an_export_is_the_identity(tmp_path, name):
    panel = Panel.load_default(name)
    export_panel(panel, tmp_path)
    back = _reimport(tmp_path)
    _same(panel, back)
    if name == "mathvision":  # item text, answers and images came through
        a, b = panel.items_of("MATH-Vision_MINI"), back.items_of("MATH-Vision_MINI")
        assert list(a["question"]) == list(b["question"]) and list(a["answer"]) == list(b["answer"])
        first = Path(str(b["image_ref"].iloc[0]))
        assert (
            first.exists()
            and first.read_bytes() == (panel.root / a["image_ref"].iloc[0]).read_bytes()
        )


def test_the_command_writes_the_layouts_and_says_how_to_import(tmp_path, capsys):
    assert (
        main(
            [
                "panel",
                "export",
                "--default",
                "autojudger",
                "--benchmark",
                "AI2D_TEST",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    assert "import.sh" in capsys.readouterr().out
    head = (tmp_path / "AI2D_TEST.csv").read_text().splitlines()[0].split(",")
    assert head[0] == "item_id" and len(head) == 170
    assert (tmp_path / "models.csv").read_text().startswith("model,family,release_date,params_b\n")
    assert not (tmp_path / "MMMU_DEV_VAL.csv").exists()
    with pytest.raises(InputError, match="has no benchmark 'NOPE'"):
        export_panel(Panel.load_default("autojudger"), tmp_path, ["NOPE"])


def test_panel_import_help_states_the_layouts(capsys):
    with pytest.raises(SystemExit):
        main(["panel", "import", "--help"])
    out = capsys.readouterr().out
    assert "item_id,Qwen2-VL-7B" in out and "model,release_date,params_b" in out
