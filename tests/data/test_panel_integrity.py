"""A panel is written as a whole: random kills during import-append, ingest-style append and an
embeddings save, and a full disk at many free-space levels, leave the panel loadable as either
the previous or the new version; appends keep the embeddings of unchanged items."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.data.importers import import_matrix
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.refresh.records import append_records

ROOT = Path(__file__).parents[2]


def _csv(path: Path, models: list[str], n_items: int, seed: int, prefix: str = "i") -> Path:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.integers(0, 2, (n_items, len(models))), columns=models)
    df.insert(0, "item_id", [f"{prefix}{k}" for k in range(n_items)])
    df.to_csv(path, index=False)
    return path


def _panel_with_embeddings(tmp: Path) -> Path:
    p, _ = import_matrix(
        _csv(tmp / "a.csv", ["m1", "m2", "m3"], 40, 0),
        "bench_a",
        category="Science Knowledge",
        orientation="items-x-models",
        name="t",
    )
    ids = pd.DataFrame({"benchmark": "bench_a", "item_id": [f"i{k}" for k in range(40)]})
    p.set_embeddings("text", ids, np.arange(80, dtype=np.float32).reshape(40, 2))
    p.save(tmp / "p")
    return tmp / "p"


def test_append_keeps_embeddings_and_marks_new_items_missing(tmp_path):
    root = _panel_with_embeddings(tmp_path)
    before = Panel.load(root)
    # panel import (append another benchmark)
    p, _ = import_matrix(
        _csv(tmp_path / "b.csv", ["m1", "m4"], 10, 1, "j"),
        "bench_b",
        category="Academic Knowledge",
        orientation="items-x-models",
        existing=before,
    )
    p.save(root)
    p = Panel.load(root)  # loadable (was: "content hash ... does not match")
    v, has = p.embeddings("bench_a", "text")
    np.testing.assert_array_equal(v, before.embeddings("bench_a", "text")[0])
    assert has.all() and not p.embeddings("bench_b", "text")[1].any()  # new items: missing
    # ingest / refresh path: new records of a new model
    rec = pd.DataFrame(
        {
            "model": "m9",
            "benchmark": "bench_a",
            "item_id": ["i0", "i1"],
            "condition": "vl",
            "score": [1.0, 0.0],
        }
    )
    p2, rep = append_records(p, rec, "run")
    p2.save(root)
    assert Panel.load(root).embedding_spaces == ["text"] and rep.n_new == 2


CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np, pandas as pd
    import pyarrow.parquet as pq
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.data.importers import import_matrix
    from primebench_tasks.refresh.records import append_records

    import primebench_tasks.data.panel as panel_mod

    def step(fn):  # every write of the save announces itself, then waits to be killed
        def wrapped(*a, **k):
            print("STEP", flush=True)
            time.sleep(0.5)
            return fn(*a, **k)
        return wrapped

    pq.write_table = step(pq.write_table)  # the data files
    panel_mod.atomic_write_text = step(panel_mod.atomic_write_text)  # panel.json: the switch
    panel_mod.shutil.rmtree = step(panel_mod.shutil.rmtree)  # cleanup after the switch
    root, op, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    p = Panel.load(root)
    if op == "import":
        df = pd.DataFrame({"item_id": [f"x{k}_{j}" for j in range(5)], "m1": [1, 0, 1, 0, 1]})
        df.to_csv(f"{root}.{k}.csv", index=False)
        p, _ = import_matrix(f"{root}.{k}.csv", f"bench_x{k}", category="Chart Understanding",
                             orientation="items-x-models", existing=p)
    elif op == "ingest":
        rec = pd.DataFrame({"model": f"new{k}", "benchmark": "bench_a",
                            "item_id": ["i0", "i1", "i2"], "condition": "vl",
                            "score": [1.0, 0.0, 1.0]})
        p, _ = append_records(p, rec, "run")
    else:  # embed: a new space
        ids = pd.DataFrame({"benchmark": "bench_a", "item_id": [f"i{j}" for j in range(40)]})
        p.set_embeddings(f"s{k}", ids, np.full((40, 3), k, np.float32))
    print("READY", flush=True)
    p.save(root)
    print("SAVED", p.content_hash, flush=True)
""")


@pytest.mark.slow
def test_random_kills_never_leave_a_broken_panel(tmp_path):
    """54 saves (import, ingest, embed), each killed by SIGKILL while it is inside its j-th write
    (a data file, the panel.json switch or the cleanup after it; j drawn at random, or never):
    the kill lands where it is meant to whatever the machine's speed, and the panel is always
    the old one or the new one, never a broken mix; a finished save is never lost."""
    root = _panel_with_embeddings(tmp_path)
    rng = random.Random(0)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outcomes = {"old": 0, "new": 0}
    kills = 0
    for k in range(54):
        before = Panel.load(root).content_hash
        op = ("import", "ingest", "embed")[k % 3]
        target = rng.randrange(1, 12)  # the write to die in (a save has about 4-10)
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(root), op, str(k)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "READY"
        seen, saved = 0, []
        for line in proc.stdout:
            if line.startswith("STEP"):
                seen += 1
                if seen == target:  # the child now sleeps before this write: kill it there
                    os.kill(proc.pid, signal.SIGKILL)
                    kills += 1
                    break
            elif line.startswith("SAVED"):
                saved.append(line.split()[1])
        proc.communicate()
        p = Panel.load(root)  # never unloadable
        if p.content_hash == before:
            outcomes["old"] += 1
            assert not saved  # a finished save is never lost
        else:
            outcomes["new"] += 1
    # kills before the switch keep the old panel, kills after it (cleanup) or none: the new one
    assert kills >= 30 and outcomes["old"] > 0 and outcomes["new"] > 0, (kills, outcomes)
    # leftovers of killed saves are cleaned by the next save
    Panel.load(root).save(root)
    assert not [x for x in root.iterdir() if x.name.startswith(".tmp-data-")]
    assert len([x for x in root.iterdir() if x.name.startswith("data-")]) == 1


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    return r.returncode == 0


@pytest.mark.slow
def test_full_disk_leaves_the_previous_panel(tmp_path):
    src = _panel_with_embeddings(tmp_path)
    big = Panel.load(src)
    ids = pd.DataFrame({"benchmark": "bench_a", "item_id": [f"i{j}" for j in range(40)]})
    rng = np.random.default_rng(0)
    big.set_embeddings("big", ids, rng.random((40, 2000)).astype(np.float32))  # ~320 kB
    mnt = tmp_path / "small"
    if not _mount_tmpfs(mnt, "1M"):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        levels = 0
        for fill_kb in range(0, 1000, 60):
            for f in mnt.iterdir():
                shutil.rmtree(f) if f.is_dir() else f.unlink()
            Panel.load(src).save(mnt / "p")
            (mnt / "filler").write_bytes(b"\0" * 1)
            try:
                with open(mnt / "filler", "wb") as fh:
                    fh.write(b"\0" * (fill_kb * 1024))
            except OSError:
                pass
            try:
                big.save(mnt / "p")
                ok = "new"
            except InputError as exc:
                assert "the disk is full" in str(exc) and "intact" in str(exc)
                ok = "old"
                levels += 1
            p = Panel.load(mnt / "p")
            assert p.content_hash == (
                big.content_hash if ok == "new" else Panel.load(src).content_hash
            )
        assert levels >= 3
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_a_panel_json_that_is_not_an_object_or_names_a_folder_outside_is_named(tmp_path):
    """#54: panel.json holding a JSON list was an AttributeError traceback; one whose data is
    ``../../../etc`` read outside the panel folder."""
    import json

    import pytest

    from primebench_tasks.data.panel import Panel
    from primebench_tasks.errors import InputError

    (tmp_path / "panel.json").write_text("[1, 2]")
    with pytest.raises(InputError, match=r"panel.json: panel.json holds a JSON list"):
        Panel.load(tmp_path)
    meta = {"schema": "primebench.panel/1", "data": "../../../etc"}
    (tmp_path / "panel.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match=r"field 'data'.*inside the panel folder"):
        Panel.load(tmp_path)
