"""The engines that answer a run's requests (docs/architecture.md, "The adapters"): ``vllm/``
(offline and server backends, LoRA scope, Ray replicas, the training callback). They plug into
the run layer (:mod:`harness_adapters.run`) and import no harness plug."""
