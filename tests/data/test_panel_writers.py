"""Panel writers: a save removes only what a save wrote, and concurrent appends all land
(the second hostile battery's two high findings on panels, reproduced first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from primebench_tasks.cli import main
from primebench_tasks.data.panel import Panel


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
