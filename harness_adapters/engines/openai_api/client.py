"""The OpenAI-compatible chat client every served model goes through (#81): ``vllm serve``,
SGLang, LMDeploy, TGI or a hosted API. The ``openai`` library does the HTTP — retries with
exponential backoff on 429, 5xx, timeouts and dropped connections (``max_retries``), a timeout
per request (``timeout_s``) —; this client adds what a run needs: the endpoint's own key (from an
environment variable only, never written to a run file, redacted from every error), at most
``concurrency`` requests in flight, greedy decoding, and a reply without text as a failed
request (never an empty answer). Engines share it: the ``openai`` engine
(:mod:`~harness_adapters.engines.openai_api.plugin`) and vLLM's server mode."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from harness_adapters.engines.openai_api.guards import (
    ERROR_TEXT_MAX,
    redact,
    whole_request_deadline,
)
from harness_adapters.run.plug import BackendError, Generation, JudgeBackend, Messages
from harness_adapters.suites.prompt import GENERATION


@dataclass(frozen=True)
class OpenAIArgs:
    """The ``openai`` engine's options: the endpoint (``http://HOST:PORT/v1``), seconds per
    request, requests in flight, the variable holding its key (none: no key), and the client's
    retries on 429, 5xx, timeouts and dropped connections."""

    base_url: str
    timeout_s: float = 120.0
    concurrency: int = 8
    api_key_env: str | None = None
    max_retries: int = 4


def endpoint_judge(
    kind: str, target: str, *, vllm_extensions: bool, timeout_s: float, api_key_env: str | None
) -> JudgeBackend:
    """A judge on an OpenAI-compatible endpoint (``target`` = ``MODEL@URL``): replies held to a
    pattern only with ``vllm_extensions`` (a ``vllm serve``), the client not retrying (the
    judge does), cached as ``kind:MODEL@URL``."""
    if "@" not in target:
        raise BackendError(f"judge {kind}:{target}: expected {kind}:MODEL@URL")
    model, url = target.split("@", 1)
    backend = OpenAIChatBackend(
        url, model, vllm_extensions=vllm_extensions, timeout_s=timeout_s, max_retries=0,
        api_key_env=api_key_env,
    )  # fmt: skip
    return JudgeBackend(backend, f"{kind}:{model}@{url.rstrip('/')}", vllm_extensions, True)


def sampling_kwargs(max_new_tokens: int | None) -> dict[str, Any]:
    """Greedy decoding (temperature 0) with ``max_new_tokens`` (default: the suite's budget)."""
    return {
        "temperature": 0.0,
        "top_p": 1.0,
        "max_tokens": int(max_new_tokens or GENERATION["max_new_tokens"]),
    }


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


class OpenAIChatBackend:
    """A running OpenAI-compatible server at ``base_url`` (``http://HOST:PORT/v1``): a vLLM
    server, or with ``vllm_extensions=False`` any OpenAI-compatible endpoint (then ``regex`` is
    not sent: replies are only parsed). Requests go through the ``openai`` client with this
    endpoint's own key (:func:`endpoint_key`), ``timeout_s`` and ``max_retries``; at most
    ``concurrency`` requests are in flight. A reply without text (no choices, ``content: null``,
    a non-string) is a failed request, never an empty answer."""

    kind = "openai"
    """The backend's name in the run spec (vLLM's server mode, a subclass: ``server``)."""

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
            http_client=openai.DefaultHttpxClient(event_hooks=whole_request_deadline(timeout_s)),
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
                **sampling_kwargs(max_new_tokens or self.max_new_tokens),
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
                f"server answered HTTP {exc.status_code}: "
                + redact(str(exc), self._key, limit=ERROR_TEXT_MAX)
            )
        except RecursionError:
            # a body nested deeper than the JSON parser follows: a failed request like any
            return RuntimeError(f"server {self.base_url} answered JSON nested too deeply to read")
        except (openai.APIError, OSError, ValueError, TypeError, AttributeError) as exc:
            return RuntimeError(
                redact(f"request to {self.base_url} failed: {exc!r}", self._key,
                       limit=ERROR_TEXT_MAX)
            )  # fmt: skip

    def generate(
        self,
        messages: Sequence[Messages],
        adapter: str | None,
        max_new_tokens: int | None = None,
        regex: str | None = None,
    ) -> list[str | Exception]:
        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(lambda m: self._one(m, adapter, max_new_tokens, regex), messages))


def served_conditions(
    kind: str, base_url: str, served_model: str, suite: str, max_new_tokens: int | None
) -> dict[str, Any]:
    """What a served model's answers were made under (the run spec's ``conditions``, shown in
    the placement report): the endpoint's address and the served name — never its key —, the
    prompt and greedy decoding, the suite."""
    from importlib.util import find_spec

    from harness_adapters.run.plug import installed_version

    if find_spec("openai") is None:
        raise BackendError(
            "a served model is asked through the openai client, which is not installed: "
            "pip install -e '.[openai]'"
        )
    return {
        "harness": f"primebench run ({kind} endpoint)",
        "primebench": installed_version("primebench"),
        "backend": {"kind": kind, "base_url": base_url.rstrip("/"), "served_model": served_model},
        "prompt": "the upstream lmms-eval task's prompt (harness_adapters.suites.prompt)",
        "decoding": {
            **GENERATION,
            "max_new_tokens": max_new_tokens or GENERATION["max_new_tokens"],
        },
        "suite": suite,
    }
