"""The vLLM engine's own settings (#81): what its options set, held by the run request as an
opaque ``engine_args`` (:class:`VllmArgs`) — the run never reads them — and the local engine's
knobs (:class:`EngineSettings`, vLLM's names)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class EngineSettings:
    """The local engine's options a run asks for (vLLM's names; the engine reads them). CPU
    defaults; on a GPU start from the settings in docs/runner.md."""

    max_model_len: int | None = None
    """None: the model's own context length (from its config)."""
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float | None = None
    """The share of the GPU's memory (on vLLM's CPU backend: of RAM) the engine reserves. None:
    0.9 on a GPU; on a CPU a share that fits what is free (the engine's ``memory_share``)."""
    max_lora_rank: int | None = None
    """None: the largest rank of the adapters given, rounded up to a rank vLLM supports."""
    max_loras: int = 4
    max_num_seqs: int = 32
    enforce_eager: bool = False
    limit_images: int = 1
    dtype: str | None = None
    """None: vLLM's ``auto`` (bfloat16 on CPU even for a float32 checkpoint)."""
    enable_tower_connector_lora: bool = False
    """Apply adapters' vision-tower and connector matrices too; set by the runner from what the
    adapters change (:mod:`harness_adapters.engines.vllm.lora_scope`), not by hand."""
    extra: dict[str, Any] = field(default_factory=dict)


def engine_settings(**kw: Any) -> EngineSettings:
    """EngineSettings from CLI values (None = default)."""
    base = asdict(EngineSettings())
    base.update({k: v for k, v in kw.items() if v is not None})
    return EngineSettings(**base)


@dataclass
class VllmArgs:
    """What the vLLM engine's options ask for: the backend (``vllm`` offline here, ``server`` a
    running OpenAI-compatible server, ``ray`` replicas on a cluster), the server's address, name,
    timeout (s), requests in flight and key variable, the Ray replicas, the engine's settings and
    the adapters' LoRA scope."""

    backend: str = "vllm"
    base_url: str | None = None
    served_model: str | None = None
    timeout_s: float = 120.0
    concurrency: int = 8
    api_key_env: str | None = None
    settings: EngineSettings = field(default_factory=EngineSettings)
    replicas: int = 1
    ray_address: str | None = None
    cpus_per_replica: float = 1.0
    lora_language_model_only: bool = False
    """Accept adapters with a vision-tower/connector part the engine cannot apply, applying only
    their language-model part (``--lora-language-model-only``; the report says so)."""
    server_tower_lora: bool = False
    """Server backend: the user asserts the server runs with ``--enable-tower-connector-lora``
    (used only when the server does not say so itself; the report says it was not verified)."""
