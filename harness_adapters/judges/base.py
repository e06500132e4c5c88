"""The judge protocol and its backends.

Every call is deterministic (temperature 0), cached on disk by (backend id, prompt version,
messages) and retried; a call that still fails, or returns a reply that does not parse, leaves the
item unanswered (``None``), never scored 0. Generation and grading are separate calls, so they run
in separate contexts.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Protocol

from harness_adapters.lmms_eval.task_functions import exact_answer_score
from primebench_tasks.data.io import atomic_write_text, canonical_json


class Judge(Protocol):
    id: str

    def complete(self, prompt: str, version: str) -> str | None: ...


def parse_verdict(reply: str | None) -> bool | None:
    """``{"correct": true|false}`` (possibly inside a code fence) → bool; anything else None."""
    if reply is None:
        return None
    m = re.search(r"\{.*\}", reply, re.S)
    if not m:
        return None
    try:
        obj = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    v = obj.get("correct") if isinstance(obj, dict) else None
    return v if isinstance(v, bool) else None


class OpenAICompatibleJudge:
    """A chat-completions endpoint (``{base_url}/chat/completions``), e.g. ``vllm serve``."""

    def __init__(self, base_url: str, model: str, cache_dir: str | Path, retries: int = 3,
                 timeout: float = 60.0, backoff: float = 0.5, api_key: str = "EMPTY") -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.cache = Path(cache_dir)
        self.retries = retries
        self.timeout = timeout
        self.backoff = backoff
        self.api_key = api_key
        self.id = f"openai:{model}"
        self.failures: list[str] = []
        self.calls = 0

    def _key(self, prompt: str, version: str) -> Path:
        h = hashlib.sha256(f"{self.id}\0{version}\0{prompt}".encode()).hexdigest()
        return self.cache / h[:2] / f"{h}.json"

    def complete(self, prompt: str, version: str) -> str | None:
        path = self._key(prompt, version)
        if path.exists():
            return json.loads(path.read_text("utf-8"))["reply"]
        body = json.dumps({"model": self.model, "temperature": 0, "max_tokens": 256,
                           "messages": [{"role": "user", "content": prompt}]}).encode()
        last = ""
        for attempt in range(self.retries + 1):
            self.calls += 1
            req = urllib.request.Request(
                f"{self.base_url}/chat/completions", data=body, method="POST",
                headers={"Content-Type": "application/json",
                         "Authorization": f"Bearer {self.api_key}"})
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    data: Any = json.loads(resp.read().decode("utf-8"))
                reply = data["choices"][0]["message"]["content"]
                if not isinstance(reply, str):
                    raise ValueError("reply content is not text")
                atomic_write_text(path, canonical_json({"version": version, "prompt": prompt,
                                                        "reply": reply, "judge": self.id}))
                return reply
            except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError, KeyError,
                    IndexError, json.JSONDecodeError) as exc:
                last = f"{type(exc).__name__}: {exc}"
                if isinstance(exc, urllib.error.HTTPError) and exc.code < 500 and exc.code != 429:
                    break
                time.sleep(self.backoff * (2 ** attempt))
        self.failures.append(last)
        return None


class RuleBasedJudge:
    """Closed answer spaces: the benchmark's own answer match (q), an exact integer (c), A/B
    (vis). It cannot generate, so it never answers an open prompt."""

    id = "rules/v1"

    def complete(self, prompt: str, version: str) -> str | None:
        return None

    @staticmethod
    def grade_q(item: dict[str, Any], answer: str) -> float:
        return exact_answer_score(item, answer)

    @staticmethod
    def grade_count(gold: int, answer: str) -> float | None:
        nums = re.findall(r"-?\d+", answer)
        return None if not nums else float(int(nums[-1]) == int(gold))

    @staticmethod
    def grade_ab(gold: str, answer: str) -> float | None:
        m = re.search(r"\b([AB])\b", answer.strip().upper())
        return None if not m else float(m.group(1) == gold.upper())
