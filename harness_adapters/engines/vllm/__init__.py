"""The vLLM engine (docs/architecture.md, "The adapters"): offline and server backends with LoRA
adapters per request, its runner (``primebench run``, ``rank-variants``: resumable records,
placement, variant ranking), adaptive runs on it, Ray replicas and the training callback. It
plugs into the run layer (:mod:`harness_adapters.run`) and imports no harness plug. vLLM is
imported only when an offline engine is built."""
