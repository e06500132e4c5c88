"""#82: the README's "Build, check and refresh your own suite" block, run verbatim top to bottom
in a fresh folder — the embedded AutoJudger panel's AI2D_TEST exported, imported back, built,
validated against random items, its lmms-eval tasks generated through content keys (AI2D's rows
carry no id: stand-ins of a VLMEvalKit TSV and of the upstream dataset, one row per item of the
panel) and refreshed with two new models' records. Every hint a command prints names a command
that works."""

from __future__ import annotations

import base64
import io
import os
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

from primebench_tasks.cli import main
from tests.harness.test_content_keys import _image, save_ai2d_rows

pytestmark = pytest.mark.slow  # a build and a validation on 169 models × 3,088 items (~1.5 min)

pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")
datasets = pytest.importorskip(
    "datasets", reason="needs the 'lmms' extra (datasets): pip install -e '.[lmms]'"
)
PIL = pytest.importorskip(
    "PIL.Image", reason="needs the 'embed' extra (pillow): pip install -e '.[embed]'"
)

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Build, check and refresh your own suite"


def readme_block() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    start = text.index(SECTION)
    body = re.search(r"```bash\n(.*?)```", text[start:], flags=re.S)
    assert body is not None
    return [ln for ln in body.group(1).splitlines() if ln.strip()]


def _standins(here: Path, ids: list[str]) -> None:
    """LMUData/AI2D_TEST.tsv (VLMEvalKit's columns, JPEG in base64) and ai2d_copy (the upstream
    schema: question, options, answer, PNG image; no id; another row order) for ``ids``."""
    lmu = here / "LMUData"
    lmu.mkdir()
    lines = ["index\tquestion\tA\tB\tC\tD\tanswer\timage"]
    recs = []
    for k, i in enumerate(ids):
        q, opts, a = (
            f"What does part {i} of the diagram show?",
            ["sun", "leaf", "root", "soil"],
            k % 4,
        )
        img = _image(k)
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=85)
        lines.append("\t".join([i, q, *opts, "ABCD"[a], base64.b64encode(buf.getvalue()).decode()]))
        recs.append({"question": q, "options": opts, "answer": str(a), "image": img})
    (lmu / "AI2D_TEST.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    save_ai2d_rows(recs[::-1], here / "ai2d_copy")


def test_the_readme_maintainer_block_runs_verbatim(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LMUData", str(tmp_path / "LMUData"))
    lines = readme_block()
    assert [ln.split()[1] for ln in lines] == [
        "panel", "panel", "build", "validate", "keys", "tasks", "refresh"
    ]  # fmt: skip
    for k, line in enumerate(lines):
        if k == 4:  # the user's own data: their VLMEvalKit TSV and a copy of the upstream rows
            ids = pd.read_csv("AI2D_TEST.csv", dtype={"item_id": str}, usecols=["item_id"])
            _standins(tmp_path, list(ids["item_id"]))
        if k == 6:  # two new models' records (as a runner or a harness writes them)
            wide = pd.read_csv("AI2D_TEST.csv", dtype={"item_id": str})
            rows = [
                {"model": new, "benchmark": "AI2D_TEST", "item_id": i, "score": v}
                for new, src in (("New-VLM-A", wide.columns[1]), ("New-VLM-B", wide.columns[2]))
                for i, v in zip(wide["item_id"], wide[src], strict=True)
                if pd.notna(v)
            ]
            pd.DataFrame(rows).to_csv("new.csv", index=False)
        words = shlex.split(os.path.expandvars(line.split("#")[0]))
        assert words[0] == "primebench"
        assert main(words[1:]) == 0, line
        printed = capsys.readouterr()
        assert "Traceback" not in printed.err
        if words[1] == "tasks":  # its printed place line names the panel the suite needs
            assert "--panel P" in printed.out
    assert (tmp_path / "SUITE" / "manifest.json").exists()
    assert (tmp_path / "V" / "mae_vs_items.png").exists()
    yaml = next((tmp_path / "TASKS").glob("*ai2d_test.yaml")).read_text()
    assert "filter_list" in yaml and "item_ids" in yaml
    assert (tmp_path / "SUITE_DIR").is_dir()


def test_the_docs_walk_is_the_readme_block():
    text = (ROOT / "docs" / "library.md").read_text("utf-8")
    start = text.index("## A maintainer's walk")
    body = re.search(r"```bash\n(.*?)```", text[start:], flags=re.S)
    assert body is not None
    assert [ln for ln in body.group(1).splitlines() if ln.strip()] == readme_block()
