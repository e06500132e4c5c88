"""The hostile battery, outputs: an output option naming a file the same command reads (by any
spelling, or through a link) is refused before any work, and the file is left as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from primebench_tasks.cli import main


@pytest.fixture
def tsv(tmp_path: Path) -> Path:
    path = tmp_path / "AI2D_TEST.tsv"
    path.write_text("index\tquestion\n1\twhat?\n")
    return path


@pytest.mark.parametrize("spelling", ["same", "dotted", "link"])
def test_keys_out_equal_to_the_vlmeval_tsv_is_refused(tmp_path, tsv, capsys, spelling) -> None:
    out = {
        "same": str(tsv),
        "dotted": str(tmp_path / "." / tsv.name),
        "link": str(tmp_path / "link.tsv"),
    }[spelling]
    if spelling == "link":
        os.symlink(tsv, out)
    before = tsv.read_bytes()
    code = main(
        [
            "keys", "lmms-eval", "--vlmeval-tsv", str(tsv), "--upstream", str(tmp_path / "up"),
            "--out", out,
        ]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "is the input given as vlmeval-tsv" in err and "would overwrite what it reads" in err
    assert tsv.read_bytes() == before


def test_panel_import_into_its_own_scores_file_is_refused(tmp_path, capsys) -> None:
    scores = tmp_path / "scores.csv"
    scores.write_text("model,i1\nm,1\n")
    code = main(
        ["panel", "import", "--scores", str(scores), "--benchmark", "B", "--out", str(scores)]
    )
    assert code == 2
    assert "is the input given as scores" in capsys.readouterr().err
    assert scores.read_text() == "model,i1\nm,1\n"
