from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import build_manifest
from primebench_tasks.suite.manifest import SuiteManifest


def small_suite(panel: Panel, n: int, name: str = "primebench_tiny") -> SuiteManifest:
    """A manifest of the first ``n`` items of each of the panel's benchmarks."""
    selected = {panel.category_of(b): {b: np.arange(n)} for b in panel.benchmark_names}
    return SuiteManifest.from_document(
        build_manifest(name, panel, selected, {"n": n}, [], {"rho": None})
    )


def flagship_benchmark(benchmark: str, name: str) -> tuple[Any, Panel, list[str]]:
    """The released flagship with only ``benchmark`` (renamed ``name``: the stand-in datasets
    are not the hub's), that benchmark's reference panel, and its adaptive pool: every item id
    of the panel."""
    from harness_adapters.run.report import reference_panels
    from harness_adapters.suites.released import suites_path
    from primebench_tasks.pipeline.manifest import read_manifest

    flagship = read_manifest(suites_path() / "primebench.json")
    suite = flagship.restricted({benchmark: flagship.entry(benchmark).item_ids}, name=name)
    panel = reference_panels(flagship)[benchmark]
    return suite, panel, [str(i) for i in panel.item_ids(benchmark)]


@pytest.fixture(scope="session")
def mathvision() -> Panel:
    return Panel.load_default("mathvision")


@pytest.fixture(scope="session")
def suite20(mathvision: Panel) -> SuiteManifest:
    return small_suite(mathvision, 20)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


RAY_FIXED_PORTS = {6379, 8265, 10001, 52365, 52366, *range(10002, 20000)}
"""Ports a Ray head takes by default (GCS, dashboard, client server, the dashboard agent's, the
workers' range): a head given one of them as ``--port`` refuses to start ("trying to use a port
number 52365 that is used by other components", CI 2026-12-07)."""


def ray_head_port() -> int:
    """A free port for ``ray start --head --port`` that none of Ray's default ports clash with."""
    while (port := free_port()) in RAY_FIXED_PORTS:
        pass
    return port


@contextmanager
def vllm_server(
    model: Path, log_path: Path, flags: list[str], env: dict[str, str]
) -> Iterator[str]:
    """A vLLM OpenAI-compatible server for ``model`` (served as ``tiny``, engine ``flags``) on a
    free local port, its log at ``log_path``; yields the ``/v1`` base URL, stopped on exit."""
    from harness_adapters.engines.vllm.backends import stop_server, wait_until_healthy

    port = free_port()
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model)]
    cmd += ["--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port), *flags]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(url, proc, 300, str(log_path))
            yield url + "/v1"
        finally:
            stop_server(proc)


def kill_after(cmd: list[str], records: Path, lines: int, env: dict[str, str]) -> None:
    """Start ``cmd`` and SIGKILL it once ``records`` holds ``lines`` lines (it must still be
    running then: a run that finished first cannot show a resume)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if records.exists() and records.read_bytes().count(b"\n") >= lines:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
