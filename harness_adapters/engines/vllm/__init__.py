"""The vLLM engine (docs/architecture.md, "The adapters"): offline and server backends with LoRA
adapters per request (:mod:`.backends`, :mod:`.lora_scope`), its side of a run — checks,
conditions, the backend it starts (:mod:`.engine`) —, adaptive runs on it
(:mod:`.adaptive_session`), Ray replicas (:mod:`.ray_runner`), the training callback
(:mod:`.training`) and the ``primebench run`` / ``rank-variants`` commands (:mod:`.cli`). The
loops and reports are the run layer's (:mod:`harness_adapters.run`); it imports no harness plug.
vLLM is imported only when an offline engine is built."""
