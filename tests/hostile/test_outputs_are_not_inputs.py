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


@pytest.mark.parametrize("where", ["a samples log", "a new file inside", "the folder itself"])
def test_pin_out_inside_the_run_it_reads_is_refused(tmp_path, capsys, where) -> None:
    """Battery 7, high 3: ``pin lmms-eval RUN --out RUN/…/samples.jsonl`` replaced the model's
    answers with the pinned manifest (rc 0). An output in the folder a command reads is refused
    before any work, the run left as it was."""
    run = tmp_path / "out"
    log = run / "model" / "20261208_samples_mmstar.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text('{"doc_id": 0}\n')
    out = {
        "a samples log": str(log),
        "a new file inside": str(run / "model" / "pinned.json"),
        "the folder itself": str(tmp_path / "." / "out"),
    }[where]
    before = sorted((p, p.read_bytes()) for p in run.rglob("*") if p.is_file())
    code = main(["pin", "lmms-eval", str(run), "--out", out])
    assert code == 2
    assert "the folder this command reads" in capsys.readouterr().err
    assert sorted((p, p.read_bytes()) for p in run.rglob("*") if p.is_file()) == before
