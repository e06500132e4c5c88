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
        """The request fields of the vLLM options (:func:`~harness_adapters.engines.vllm.
        engine.request_fields`; read when a command runs, never for ``--help``)."""
        from harness_adapters.engines.vllm.engine import request_fields

        return request_fields(args)

    def check(self, req: Any) -> Any:
        """The model and every adapter checked, the spec, the backend ``req`` names, and on Ray
        the replicas' whole run (:func:`~harness_adapters.engines.vllm.engine.check_run`)."""
        from harness_adapters.engines.vllm.engine import check_run

        return check_run(req)

    def open_model(self, model: str, adapters: Any, engine_args: Any) -> Any:
        """The model and adapters checked, the backend on demand
        (:func:`~harness_adapters.engines.vllm.engine.open_model`)."""
        from harness_adapters.engines.vllm.engine import open_model

        return open_model(model, adapters, engine_args)

    def judge(self, kind: str, target: str, **options: Any) -> Any:
        """A judge on vLLM (``vllm:MODEL_DIR`` or ``vllm-server:MODEL@URL``:
        :func:`~harness_adapters.engines.vllm.engine.open_judge`)."""
        from harness_adapters.engines.vllm.engine import open_judge

        return open_judge(kind, target, **options)


ENGINE = VllmEngine()
"""The vLLM engine (the ``primebench.engines`` entry point ``vllm``)."""
