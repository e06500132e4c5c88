"""vLLM as a PRIMEBench engine: the ``primebench.engines`` entry point ``vllm``
(:class:`~harness_adapters.run.engine.Engine`). Light on purpose — ``primebench --help`` loads it
to add its options —: the engine itself (:mod:`harness_adapters.engines.vllm.engine`) is imported
when a run checks its request."""

from __future__ import annotations

from typing import Any


class VllmEngine:
    """vLLM: one offline engine here, a running OpenAI-compatible server (``--backend
    server``), or ``--replicas`` engines on a Ray cluster (``--ray``); every LoRA adapter on one
    engine."""

    name = "vllm"
    summary = "vLLM: the offline engine, an OpenAI-compatible server, or replicas on Ray"

    def add_options(self, parser: Any) -> None:
        from harness_adapters.engines.vllm.cli_options import vllm_options

        vllm_options(parser)

    def request_fields(self, args: Any) -> dict[str, Any]:
        """The request fields of the vLLM options (``--ray`` is ``--backend ray``)."""
        from harness_adapters.run.plug import engine_settings

        return {
            "backend": "ray" if args.ray else args.backend,
            "base_url": args.base_url,
            "served_model": args.served_model,
            "timeout_s": args.timeout,
            "engine": engine_settings(
                max_model_len=args.max_model_len,
                tensor_parallel_size=args.tensor_parallel_size,
                gpu_memory_utilization=args.gpu_memory_utilization,
                max_lora_rank=args.max_lora_rank,
                max_loras=args.max_loras,
                max_num_seqs=args.max_num_seqs,
                enforce_eager=args.enforce_eager or None,
                dtype=args.dtype,
            ),
            "concurrency": args.concurrency,
            "api_key_env": args.api_key_env,
            "replicas": args.replicas,
            "ray_address": args.ray_address,
            "cpus_per_replica": args.cpus_per_replica,
            "lora_language_model_only": args.lora_language_model_only,
            "server_tower_lora": args.server_tower_lora,
        }

    def check(self, req: Any) -> Any:
        """The model and every adapter checked, the spec, the backend ``req`` names, and on Ray
        the replicas' whole run (:func:`~harness_adapters.engines.vllm.engine.check_run`)."""
        from harness_adapters.engines.vllm.engine import check_run

        return check_run(req)


ENGINE = VllmEngine()
"""The vLLM engine (the ``primebench.engines`` entry point ``vllm``)."""
