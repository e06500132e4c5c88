"""Which Ray cluster ``primebench run --ray`` uses, on a real Ray head started the plain way
(``ray start --head``, which records itself in ``/tmp/ray/ray_current_cluster``): without
``--ray-address`` (and no ``$RAY_ADDRESS``) the run starts its own local instance of the CPUs
it asked for and leaves that cluster alone; with the address, or ``$RAY_ADDRESS``, it joins it.

Before this was fixed, the first case crashed: ``ray.init(num_cpus=...)`` without an address
joins the latest cluster on the machine and refuses ``num_cpus`` there (a ValueError)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.conftest import ray_head_port

# starts a real Ray head (part 2 of CI, with the ray extra)
pytestmark = [pytest.mark.slow, pytest.mark.ray_cluster]

pytest.importorskip("ray", reason="needs the 'ray' extra: pip install -e '.[ray]'")

BIN = Path(sys.executable).parent
# no token auth on a throw-away head (see test_ray_e2e.py); no address from the environment
ENV = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"RAY_AUTH_MODE": "disabled"}
PROBE = """
import json, sys
from harness_adapters.engines.vllm.ray_runner import _init_ray
ray = _init_ray(sys.argv[1] or None, int(sys.argv[2]), 1.0)  # replicas of 1 CPU
print(json.dumps({"port": int(ray.get_runtime_context().gcs_address.rsplit(":", 1)[1]),
                  "cpus": ray.cluster_resources()["CPU"]}))
ray.shutdown()
"""


def _probe(address: str, replicas: int, ray_address: str | None = None) -> dict:
    env = ENV if ray_address is None else ENV | {"RAY_ADDRESS": ray_address}
    r = subprocess.run(
        [sys.executable, "-c", PROBE, address, str(replicas)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_run_without_an_address_leaves_a_running_cluster_alone():
    port = ray_head_port()  # none of the ports a Ray head takes by default
    head = [str(BIN / "ray"), "start", "--head", "--num-cpus", "1", "--port", str(port)]
    up = subprocess.run(
        [*head, "--include-dashboard=false", "--disable-usage-stats"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=180,
    )
    assert up.returncode == 0, up.stderr[-3000:]
    try:
        own = _probe("", 3)  # no address: a local instance for this run, a CPU per replica
        assert own["port"] != port and own["cpus"] == 3.0
        named = _probe(f"127.0.0.1:{port}", 3)  # the address: that cluster, its 1 CPU
        assert named["port"] == port and named["cpus"] == 1.0
        from_env = _probe("", 3, ray_address=f"127.0.0.1:{port}")  # $RAY_ADDRESS names it
        assert from_env["port"] == port and from_env["cpus"] == 1.0
    finally:
        subprocess.run(
            [str(BIN / "ray"), "stop", "--force"], capture_output=True, env=ENV, timeout=120
        )
