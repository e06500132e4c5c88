"""The vLLM engine (docs/architecture.md, "The adapters"), an engine of the run
(:class:`harness_adapters.run.engine.Engine`; entry point :mod:`.plugin`): offline and server
backends with LoRA adapters per request (:mod:`.backends`, :mod:`.lora_scope`), its side of a run —
checks, conditions, the backend it starts (:mod:`.engine`) —, Ray replicas (:mod:`.ray_runner`),
the tiny test model (:mod:`.tiny_model`, ``primebench tiny-model``: :mod:`.cli`) and the Trainer
glue (:mod:`.training`). The verbs, loops and reports are the run layer's
(:mod:`harness_adapters.run`), reached through :mod:`harness_adapters.run.plug`; it imports no
harness plug. vLLM is imported only when an offline engine is built."""
