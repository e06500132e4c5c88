"""Panel writers: a save removes only what a save wrote, and concurrent appends all land
(the second hostile battery's two high findings on panels, reproduced first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from primebench_tasks.cli import main
from primebench_tasks.data.importers import save_imported_panel
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from tests.conftest import make_panel


def _csv(path: Path, name: str, rows: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    f = path / name
    f.write_text(rows, encoding="utf-8")
    return f


def test_a_save_keeps_the_users_files(tmp_path, monkeypatch):
    """`primebench panel import --scores data-raw/s.csv ... --out .` deleted data-raw/."""
    raw = _csv(tmp_path / "data-raw", "s.csv", "item_id,mA,mB,mC\n0,1,0,1\n1,0,0,1\n")
    (tmp_path / "scores.parquet").write_bytes(b"the user's own file")
    (tmp_path / "embeddings").mkdir()
    (tmp_path / "embeddings" / "mine.npy").write_bytes(b"x")
    monkeypatch.chdir(tmp_path)
    args = ["panel", "import", "--scores", "data-raw/s.csv", "--category", "Chart Understanding"]
    assert main([*args, "--benchmark", "b", "--out", "."]) == 0
    assert raw.read_text(encoding="utf-8").startswith("item_id")
    assert (tmp_path / "scores.parquet").read_bytes() == b"the user's own file"
    assert (tmp_path / "embeddings" / "mine.npy").exists()
    first = Panel.load(tmp_path).content_hash
    # a second save (another benchmark) removes the first save's data folder, nothing else
    assert main([*args, "--benchmark", "c", "--out", "."]) == 0
    data = {p.name for p in tmp_path.iterdir() if p.name.startswith("data-")}
    assert data == {"data-raw", f"data-{Panel.load(tmp_path).content_hash}"}
    assert f"data-{first}" not in data
    assert Panel.load(tmp_path).benchmark_names == ["b", "c"]


def test_concurrent_appends_all_land(tmp_path):
    """Two `panel import --out P` for different benchmarks at once: both must be in P."""
    out = tmp_path / "P"
    cmd = [sys.executable, "-m", "primebench_tasks.cli", "panel", "import"]
    for round_ in range(3):
        procs = []
        for j in range(2):
            name = f"r{round_}b{j}"
            f = _csv(tmp_path / "in", f"{name}.csv", "item_id,mA,mB,mC\n0,1,0,1\n1,0,1,1\n")
            procs.append(
                subprocess.Popen(
                    [
                        *cmd,
                        "--scores",
                        str(f),
                        "--benchmark",
                        name,
                        "--category",
                        "Text Recognition",
                    ]
                    + ["--out", str(out)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
    names = Panel.load(out).benchmark_names
    assert sorted(names) == sorted(f"r{r}b{j}" for r in range(3) for j in range(2))


def test_every_whole_panel_writer_appends_or_refuses_never_replaces(tmp_path, capsys):
    """The third battery (#54): `simulate`, `ingest lmms-eval-logs` and `vlmeval
    import-records` with --out on an existing panel printed "wrote", deleted its data and left
    only the new panel. Now (one rule, `save_imported_panel`): new benchmarks are appended to
    it, one it already holds is refused naming it (the panel intact), --replace replaces."""
    out = tmp_path / "p"
    raw = _csv(tmp_path / "raw", "s.csv", "item_id,mA,mB,mC\n0,1,0,1\n1,0,0,1\n")
    imp = ["panel", "import", "--scores", str(raw), "--category", "Chart Understanding"]
    assert main([*imp, "--benchmark", "mine", "--out", str(out)]) == 0
    sim = ["simulate", "--scale", "0.001", "--models", "12", "--out", str(out)]
    assert main(sim) == 0
    assert "appended to" in capsys.readouterr().out
    p = Panel.load(out)
    assert "mine" in p.benchmark_names and len(p.benchmark_names) > 1
    assert {"mA", "mB", "mC"} <= set(p.model_names)
    assert p.matrix("mine")[p.model_names.index("mA")].tolist() == [1.0, 0.0]
    held = p.content_hash
    # the same benchmarks again: refused, nothing written
    assert main(sim) == 2
    err = capsys.readouterr().err
    assert "already holds" in err and "--replace" in err and "panel.json" in err
    assert Panel.load(out).content_hash == held
    # explicitly replaced: the new panel alone
    assert main([*sim, "--replace"]) == 0
    assert "replaced" in capsys.readouterr().out
    assert "mine" not in Panel.load(out).benchmark_names


def test_two_whole_panel_writers_at_once_both_land(tmp_path):
    """Two imports of different benchmarks into one new folder at the same moment: the second
    waits for the first's lock and appends — both benchmarks are there."""
    code = (
        "import sys, numpy as np\n"
        "from tests.conftest import make_panel\n"
        "from primebench_tasks.data.importers import save_imported_panel\n"
        "p = make_panel({sys.argv[2]: np.eye(4)}, {sys.argv[2]: 'Math Reasoning'})\n"
        "print(save_imported_panel(p, sys.argv[1]))\n"
    )
    out = tmp_path / "p"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(out), b],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        for b in ("b1", "b2")
    ]
    said = sorted(p.communicate(timeout=120)[0].strip() for p in procs)
    assert said == ["appended to", "wrote"]
    assert sorted(Panel.load(out).benchmark_names) == ["b1", "b2"]
    # in process: a panel holding b1 refuses b1 again by name
    with pytest.raises(InputError, match="already holds b1"):
        save_imported_panel(make_panel({"b1": np.eye(4)}, {"b1": "Math Reasoning"}), out)
