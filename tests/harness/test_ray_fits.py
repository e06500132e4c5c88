"""Whether ``primebench run --ray --replicas N`` fits this machine, decided before any engine
starts (#79: the README's ``--replicas 8`` on a 2-core, 24 GiB CPU box started 8 engines, each
reserving half the RAM it saw free; nothing answered, the kernel killed workers, the rest
outlived the command). Hand cases with this machine's cores and RAM given."""

from __future__ import annotations

import importlib.util

import pytest

from harness_adapters.engines.vllm.ray_runner import (
    KV_CACHE_MIN_GIB,
    REPLICA_PROCESS_GIB,
    check_ray_fits,
)
from harness_adapters.engines.vllm.settings import EngineSettings
from harness_adapters.run.errors import BackendError

GIB = 1024**3
HAS_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAS_RAY, reason="needs the 'ray' extra: pip install -e '.[ray]'")


def _fits(replicas: int, **kw):
    machine = {"cores": 2, "available": 20 * GIB, "total": 24 * GIB, "gpus": False} | kw
    return check_ray_fits(replicas, 1.0, None, EngineSettings(), "no/such/model", **machine)


@needs_ray
def test_the_readme_line_on_a_two_core_box_is_refused_by_its_cores(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(BackendError, match=r"needs 8 CPUs .* it has 2: give --replicas 2") as e:
        _fits(8)
    assert "nothing was started" in str(e.value)


@needs_ray
def test_the_free_ram_is_divided_among_the_replicas(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    # 2 replicas, 20 GiB free of 24: the single engine's half of the free RAM (10 GiB), 5 each
    share = _fits(2)
    assert share == pytest.approx(round(0.5 * 20 / 24 / 2, 3))
    assert 2 * (REPLICA_PROCESS_GIB + share * 24) <= 20


@needs_ray
def test_replicas_whose_ram_is_not_free_are_refused(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    # 16 cores but 8 GiB free: 8 replicas get 0.5 GiB each, less than the KV cache alone
    with pytest.raises(BackendError, match="GiB of RAM") as e:
        _fits(8, cores=16, available=8 * GIB, total=24 * GIB)
    per = REPLICA_PROCESS_GIB + KV_CACHE_MIN_GIB
    assert f"{8 * per:.1f} GiB" in str(e.value) and "--replicas 2 or fewer" in str(e.value)


@needs_ray
def test_a_named_cluster_or_gpus_decide_for_themselves(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert _fits(8, gpus=True) is None
    assert (
        check_ray_fits(8, 1.0, "ray://head:10001", EngineSettings(), "m", cores=2, gpus=False)
        is None
    )
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6379")
    assert _fits(8) is None


@pytest.mark.skipif(HAS_RAY, reason="checks the refusal where Ray is not installed")
def test_without_ray_the_line_is_refused_naming_the_extra():
    with pytest.raises(BackendError, match=r"--ray needs Ray: pip install -e '\.\[ray\]'"):
        _fits(1)
