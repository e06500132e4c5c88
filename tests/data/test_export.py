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


def _panel_with_images(tmp_path: Path, bench: str = "B") -> Path:
    """A panel of two models on four items whose images share file names in two folders."""
    import json

    src = tmp_path / "src"
    for folder in ["a", "b"]:
        (src / "img" / folder).mkdir(parents=True)
        (src / "img" / folder / "x.png").write_bytes(b"png-of-" + folder.encode())
    (src / "scores.csv").write_text("item_id,m1,m2\ni1,1,0\ni2,0,1\ni3,1,1\ni4,0,0\n")
    (src / "items.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "question": f"q{i}?", "answer": "A", "image": img}) + "\n"
            for i, img in [
                ("i1", "img/a/x.png"), ("i2", "img/b/x.png"), ("i3", "img/a/x.png"),
                ("i4", "img/b/x.png"),
            ]
        )
    )  # fmt: skip
    out = tmp_path / "P0"
    rc = main(
        ["panel", "import", f"--scores={src / 'scores.csv'}", f"--benchmark={bench}",
         "--items", str(src / "items.jsonl"), "--image-dir", str(src), "--category", "Comprehensive", "--out", str(out)]
    )  # fmt: skip
    assert rc == 0
    return out


def test_images_of_one_file_name_in_two_folders_come_back_as_they_were(tmp_path):
    """Battery 7, high 2: ``img/a/x.png`` and ``img/b/x.png`` were copied to one file, and after
    import.sh half the items carried another item's image."""
    panel = Panel.load(_panel_with_images(tmp_path))
    export = tmp_path / "export"
    export_panel(panel, export)
    assert len(list((export / "images" / "B").iterdir())) == 2  # two images, each once
    back = _reimport(export)
    a, b = panel.items_of("B"), back.items_of("B")
    for ref_a, ref_b in zip(a["image_ref"], b["image_ref"], strict=True):
        assert (panel.root / ref_a).read_bytes() == Path(str(ref_b)).read_bytes()


def test_a_benchmark_named_like_an_option_round_trips(tmp_path):
    """A benchmark named ``-x`` broke import.sh (read as an option)."""
    panel = Panel.load(_panel_with_images(tmp_path, "-x"))
    export_panel(panel, tmp_path / "export")
    _same(panel, _reimport(tmp_path / "export"))


def test_a_benchmark_named_models_is_refused_at_import_and_export(tmp_path, capsys):
    """``models.csv`` is the export's own file: a benchmark ``models`` would overwrite it."""
    scores = tmp_path / "s.csv"
    scores.write_text("item_id,m1\ni1,1\n")
    out = tmp_path / "P"
    rc = main(
        ["panel", "import", "--scores", str(scores), "--benchmark", "models", "--category",
         "Comprehensive", "--out", str(out)]
    )  # fmt: skip
    assert rc == 2 and "models.csv" in capsys.readouterr().err
    assert not out.exists()
    from primebench_tasks.data.export import check_benchmark_file_name

    with pytest.raises(InputError, match="models.csv"):  # export checks each name before writing
        check_benchmark_file_name("models")


def test_the_hint_quotes_a_folder_with_a_space(tmp_path, capsys):
    out = tmp_path / "my files"
    assert main(["panel", "export", "--default", "m3irt", "--out", str(out)]) == 0
    hint = capsys.readouterr().out.split("import them back: ")[1].strip()
    assert hint == f"cd {shlex.quote(str(out))} && bash import.sh"
    assert shlex.split(hint)[1] == str(out)


def test_a_failed_first_import_leaves_no_folder_and_no_lock(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,m1\ni1,7\n")  # outside the default range [0, 1]
    out = tmp_path / "P"
    rc = main(
        ["panel", "import", "--scores", str(bad), "--benchmark", "B", "--category",
         "Comprehensive", "--out", str(out)]
    )  # fmt: skip
    assert rc == 2, capsys.readouterr().err
    assert not out.exists()
