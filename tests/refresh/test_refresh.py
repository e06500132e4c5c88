import os
import random
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from primebench_tasks.cli import main
from primebench_tasks.data.leaderboard import Leaderboard
from primebench_tasks.data.simulate import simulate_panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import read_manifest, write_manifest
from primebench_tasks.pipeline.primebench import run_pipeline
from primebench_tasks.refresh.loop import history, refresh
from primebench_tasks.refresh.policy import RefreshPolicy
from primebench_tasks.refresh.records import append_records, read_records
from primebench_tasks.refresh.replay import replay_leaderboard
from primebench_tasks.refresh.store import LockedError, SuiteLock, versions


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A panel of 30 models; a suite built on the 20 oldest; the 10 newest as records files:
    5 fully evaluated, 5 only on the suite's items."""
    tmp = tmp_path_factory.mktemp("world")
    full = simulate_panel(scale=0.004, seed=3)
    order = full.model_table.sort_values(["release_date", "model"])["model"].tolist()
    old, new = order[:20], order[20:]
    from primebench_tasks.data.importers import panel_records

    rec = panel_records(full)
    base = full.subset_models(old)
    base_panel_dir = tmp / "base"
    from primebench_tasks.data.panel import Panel

    Panel.from_records(
        "base",
        rec[rec["model"].isin(old)],
        full.models[full.models["model"].isin(old)],
        full.benchmarks,
        full.items,
    ).save(base_panel_dir)
    base = Panel.load(base_panel_dir)
    res = run_pipeline(base)
    manifest = res.manifest(base)
    write_manifest(manifest, tmp / "suite.json")
    suite_items = {
        (b, i)
        for c in manifest["categories"].values()
        for b, e in c["benchmarks"].items()
        for i in e["item_ids"]
    }
    vl = rec[rec["condition"] == "vl"]
    full_new = vl[vl["model"].isin(new[:5])]
    on_suite = vl[vl["model"].isin(new[5:])]
    on_suite = on_suite[
        [
            (b, i) in suite_items
            for b, i in zip(on_suite["benchmark"], on_suite["item_id"], strict=True)
        ]
    ]
    full_new.to_csv(tmp / "full.csv", index=False)
    on_suite.to_json(tmp / "partial.jsonl", orient="records", lines=True)
    return tmp, base_panel_dir, new


def test_append_is_idempotent_and_refuses_conflicts(world):
    tmp, base_dir, new = world
    from primebench_tasks.data.panel import Panel

    base = Panel.load(base_dir)
    recs = read_records(tmp / "full.csv")
    p1, r1 = append_records(base, recs)
    assert r1.n_new == len(recs) and sorted(r1.new_models) == sorted(new[:5])
    p2, r2 = append_records(p1, recs)
    assert r2.n_new == 0 and r2.n_identical == len(recs)
    assert p2.content_hash == p1.content_hash
    bad = recs.copy()
    bad.loc[0, "score"] = 1.0 - bad.loc[0, "score"]
    with pytest.raises(InputError, match="but the panel holds"):
        append_records(p1, bad)
    with pytest.raises(InputError, match="not in the panel"):
        append_records(base, recs.assign(item_id="nope"))
    # a design-only benchmark's answers (a wide suite's run): left out, counted and said
    drawn = pd.DataFrame(
        {"model": "m", "benchmark": "POPE", "item_id": ["k1", "k2"], "condition": "vl",
         "score": [1.0, 0.0], "stratum": "random", "pool": [{"fingerprint": "f"}] * 2}
    )  # fmt: skip
    p3, r3 = append_records(p1, pd.concat([recs.assign(pool=None), drawn], ignore_index=True))
    assert r3.n_new == 0 and r3.n_identical == len(recs) and r3.design_only == {"POPE": 2}
    assert p3.content_hash == p1.content_hash
    assert "left out: the answers to design-only benchmarks POPE (2)" in "\n".join(r3.lines())


def test_bad_records_files(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("model,benchmark,item_id,score\nm,b,1,1.5\n")
    with pytest.raises(InputError, match=r"row 2, field 'score'.*outside"):
        read_records(f)
    f.write_text("model,benchmark,item_id\nm,b,1\n")
    with pytest.raises(InputError, match="field 'score'"):
        read_records(f)
    f.write_text("model,benchmark,item_id,score,status\nm,b,1,,failed\nm,b,2,1,ok\n")
    assert len(read_records(f)) == 1  # a failed runner record is missing, not 0


def test_refresh_publishes_versions_and_is_reproducible(world, tmp_path):
    tmp, base_dir, new = world
    from primebench_tasks.data.panel import Panel

    base = Panel.load(base_dir)
    out = tmp_path / "suite"
    force = RefreshPolicy.always()
    r = refresh(
        base,
        [tmp / "full.csv", tmp / "partial.jsonl"],
        tmp / "suite.json",
        out,
        force,
        explore=3,
        n_random=30,
    )
    assert r.refit and r.published is not None and r.published.name == "v0002"
    assert [v.name for v in versions(out)] == ["v0001", "v0002"]
    v1 = read_manifest(out / "versions" / "v0001" / "manifest.json")
    assert v1 == read_manifest(tmp / "suite.json")
    assert "Predicted rank of partially evaluated models" in r.report
    assert "partial models" in r.report
    diff = (out / "versions" / "v0002" / "diff.md").read_text()
    assert "rho_old" in diff and "Capability Frontier" in diff
    ex = (out / "exploration.json").read_text()
    assert '"items"' in ex
    before = (out / "last_refresh.md").read_bytes()
    r2 = refresh(
        base, [tmp / "full.csv", tmp / "partial.jsonl"], None, out, force, explore=3, n_random=30
    )
    assert not r2.refit and len(versions(out)) == 2  # same inputs: same suite, nothing new
    h = history(out)
    assert list(h["version"]) == ["v0001", "v0002"]
    assert main(["suites", "history", str(out)]) == 0
    # a third run with identical inputs gives identical bytes
    refresh(
        base, [tmp / "full.csv", tmp / "partial.jsonl"], None, out, force, explore=3, n_random=30
    )
    after = (out / "last_refresh.md").read_bytes()
    r3 = refresh(
        base, [tmp / "full.csv", tmp / "partial.jsonl"], None, out, force, explore=3, n_random=30
    )
    assert (out / "last_refresh.md").read_bytes() == after
    assert r3.report.encode() == after and before != b""


def test_lock_refuses_concurrent_refresh(tmp_path):
    with (
        SuiteLock(tmp_path),
        pytest.raises(LockedError, match=f"process {os.getpid()}.*concurrent"),
        SuiteLock(tmp_path),
    ):
        pass
    (tmp_path / ".lock").write_text("999999")  # a leftover file is no lock: flock is released
    with SuiteLock(tmp_path):  # by the kernel when its holder dies
        assert (tmp_path / ".lock.owner").read_text() == str(os.getpid())


def _contend(root, barrier, held, results, k):
    barrier.wait()
    try:
        with SuiteLock(root):
            with held.get_lock():
                held.value += 1
                overlap = held.value
            time.sleep(0.2)
            with held.get_lock():
                held.value -= 1
            results[k] = overlap  # 1 = alone inside the lock
    except LockedError:
        results[k] = 0


def test_lock_is_held_by_one_process_at_a_time_under_a_barrier(tmp_path):
    """Processes released together by a barrier: in every trial exactly one holds the lock and
    nobody ever shares it (the pid-file lock let two in, 5 of 40 trials)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    for trial in range(15):
        n = 4
        barrier, held = ctx.Barrier(n), ctx.Value("i", 0)
        results = ctx.Array("i", [-1] * n)
        procs = [
            ctx.Process(target=_contend, args=(tmp_path / f"t{trial}", barrier, held, results, k))
            for k in range(n)
        ]
        for p in procs:
            p.start()
        for p in procs:
            p.join(30)
        assert sorted(results[:]) == [0] * (n - 1) + [1], (trial, results[:])


@pytest.mark.slow
def test_killed_refreshes_never_corrupt_published_versions(world, tmp_path):
    tmp, base_dir, new = world
    out = tmp_path / "suite"
    cmd = [
        sys.executable,
        "-m",
        "primebench_tasks.cli",
        "refresh",
        "--panel",
        str(base_dir),
        "--records",
        str(tmp / "full.csv"),
        str(tmp / "partial.jsonl"),
        "--suite",
        str(tmp / "suite.json"),
        "--out",
        str(out),
        "--force",
        "--random-suites",
        "20",
    ]
    rng = random.Random(0)
    seen: dict[str, bytes] = {}
    for _ in range(20):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for v in versions(out):
            data = (v / "manifest.json").read_bytes()
            read_manifest(v / "manifest.json")  # valid: schema and content hash
            assert seen.setdefault(v.name, data) == data  # never rewritten
        assert set(seen) == {v.name for v in versions(out)}  # never lost
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert [v.name for v in versions(out)][:2] == ["v0001", "v0002"]


def test_replay_leaderboard_shape():
    t = replay_leaderboard(Leaderboard.load_default("openvlm"), k=5, waves=2)
    assert list(t.columns[:6]) == [
        "models",
        "scored",
        "dated_only",
        "frozen_rho",
        "subsets_mean_rho",
        "percentile",
    ]
    assert (t["percentile"].between(0, 100)).all() and (t["gap"] >= -1e-12).all()
    assert len(t.attrs["frozen"]) == 5
