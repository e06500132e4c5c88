"""``--engine openai``: any OpenAI-compatible chat endpoint with images, by ``--base-url`` and the
served name (``--model``/``--base``; adapters are served names), through the shared client."""

from __future__ import annotations

from typing import Any

from harness_adapters.engines.openai_api.client import (
    OpenAIArgs,
    OpenAIChatBackend,
    endpoint_judge,
    served_conditions,
)
from harness_adapters.run.plug import CheckedRun, OpenedModel, RunRequest, base_spec


class OpenAIEngine:
    name = "openai"
    summary = "any OpenAI-compatible chat endpoint (vllm serve, SGLang, LMDeploy, TGI, an API)"
    adapters_served_by_name = True

    def add_options(self, p: Any) -> None:
        p.add_argument("--base-url", required=True, help="the endpoint: http://HOST:PORT/v1")
        p.add_argument("--timeout", type=float, default=120.0, help="seconds per whole request")
        p.add_argument("--concurrency", type=int, default=8, help="requests in flight")
        p.add_argument("--api-key-env", metavar="NAME", help="variable holding the key")
        p.add_argument("--max-retries", type=int, default=4, help="retries on 429/5xx/timeouts")

    def request_fields(self, args: Any) -> dict[str, Any]:
        a = (args.base_url, args.timeout, args.concurrency, args.api_key_env, args.max_retries)
        return {"engine_args": OpenAIArgs(*a)}

    def open_model(self, model: str, adapters: Any, a: OpenAIArgs, budget: Any = None) -> Any:
        def start() -> OpenAIChatBackend:
            return OpenAIChatBackend(a.base_url, model, sorted(adapters), timeout_s=a.timeout_s,
                                     concurrency=a.concurrency, max_new_tokens=budget,
                                     api_key_env=a.api_key_env, vllm_extensions=False,
                                     max_retries=a.max_retries)  # fmt: skip

        return OpenedModel({n: {"path": n, "rank": 0, "served": True} for n in adapters}, start)

    def check(self, req: RunRequest) -> CheckedRun:
        a: OpenAIArgs = req.engine_args
        cond = served_conditions(
            "openai", a.base_url, req.model, req.suite["version"], req.max_new_tokens
        )
        opened = self.open_model(req.model, req.adapters, a, req.max_new_tokens)
        return CheckedRun(spec=base_spec(req, cond, opened.adapters), start=opened.start)

    def judge(self, kind: str, target: str, *, timeout_s: float, api_key_env: Any, **_: Any) -> Any:
        return endpoint_judge(
            kind, target, vllm_extensions=False, timeout_s=timeout_s, api_key_env=api_key_env
        )


ENGINE = OpenAIEngine()  # the ``primebench.engines`` entry point ``openai``
