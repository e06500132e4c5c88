"""Judge backends for the PRISM builders and graders (``primebench_tasks.prism.judging``).

:class:`BackendJudge` puts a disk cache, retries and failure bookkeeping in front of a generation
backend an engine opens (found by name: :func:`~harness_adapters.run.engine.judge_engine`): a
local model through vLLM's offline engine, a running vLLM server, or any OpenAI-compatible
endpoint. Every call is deterministic (temperature 0), cached by
(judge id, prompt version, prompt, image bytes, pattern, budget), and retried; a call that still
fails answers ``None`` (the item is left unanswered, never scored 0). Generation and grading are
separate calls, so they never share a context. Closed answer spaces (if, c, vis; and every axis's
fallback) are graded by rules in ``primebench_tasks.prism.graders``: no judge needed.

Judge specs (CLI ``--judge`` / ``--audit-judge``): ``vllm:MODEL_DIR`` (offline engine in this
process), ``vllm-server:MODEL@URL`` (a ``vllm serve`` endpoint, replies constrained by each
prompt's regex), ``openai:MODEL@URL`` (any OpenAI-compatible endpoint, replies only parsed),
``rules`` (no judge).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness_adapters.run.messages import ItemInputError, Messages, user_turn
from primebench_tasks.data.io import atomic_write_text, canonical_json, read_image_bytes
from primebench_tasks.prism.judging import JudgeRequest
from primebench_tasks.progress import progress_bar


def judge_messages(req: JudgeRequest) -> Messages:
    """One user turn: the image (if any) as a PNG data URL, then the prompt."""
    return [user_turn(req.image, req.prompt)]


class BackendJudge:
    """A cached, retrying judge over a runner backend (``generate(messages, adapter,
    max_new_tokens, regex)``). Requests go out in chunks of ``chunk_size``, each reply cached as
    its chunk returns (a killed build or scoring loses at most one chunk) and ``progress``
    called after each. ``calls`` counts backend requests; ``failures`` keeps the last error of
    every request that gave up."""

    def __init__(
        self,
        backend: Any,
        cache_dir: str | Path,
        judge_id: str | None = None,
        retries: int = 3,
        backoff: float = 0.5,
        use_patterns: bool = True,
        chunk_size: int = 64,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.chunk_size = chunk_size
        self.progress = progress
        self.backend = backend
        self.cache = Path(cache_dir)
        self.id = judge_id or f"{backend.kind}:{backend.model}"
        self.retries = retries
        self.backoff = backoff
        self.use_patterns = use_patterns
        self.calls = 0
        self.failures: list[str] = []

    def _key(self, req: JudgeRequest) -> Path:
        img = b""
        if req.image:
            img = hashlib.sha256(read_image_bytes(req.image)).digest()
        h = hashlib.sha256(
            b"\0".join(
                [
                    self.id.encode(),
                    req.version.encode(),
                    req.prompt.encode(),
                    img,
                    (req.pattern or "").encode(),
                    str(req.max_tokens).encode(),
                ]
            )
        ).hexdigest()
        return self.cache / h[:2] / f"{h}.json"

    def complete(self, req: JudgeRequest) -> str | None:
        return self.complete_many([req])[0]

    def complete_many(self, requests: Sequence[JudgeRequest]) -> list[str | None]:
        out: list[str | None] = [None] * len(requests)
        pending: list[int] = []
        keys: list[Path | None] = []
        for n, req in enumerate(requests):
            try:
                key = self._key(req)
            except OSError as exc:
                self.failures.append(f"image {req.image}: {exc}")
                keys.append(None)
                continue
            keys.append(key)
            if key.exists():
                out[n] = json.loads(key.read_text("utf-8"))["reply"]
            else:
                pending.append(n)
        last: dict[int, str] = {}
        done, total = 0, len(pending)
        bar = progress_bar(total, f"judge {self.id}", unit="call")
        for attempt in range(self.retries + 1):
            if not pending:
                break
            if attempt:
                time.sleep(self.backoff * (2 ** (attempt - 1)))
            still: list[int] = []
            groups: dict[tuple[str | None, int], list[int]] = {}
            for n in pending:
                r = requests[n]
                groups.setdefault(
                    (r.pattern if self.use_patterns else None, r.max_tokens), []
                ).append(n)
            for (pattern, budget), ns in groups.items():
                msgs: list[Messages] = []
                sendable: list[int] = []
                for n in ns:
                    try:
                        msgs.append(judge_messages(requests[n]))
                        sendable.append(n)
                    except ItemInputError as exc:
                        self.failures.append(str(exc))
                for start in range(0, len(sendable), self.chunk_size):
                    part = sendable[start : start + self.chunk_size]
                    self.calls += len(part)
                    replies = self.backend.generate(
                        msgs[start : start + self.chunk_size], None, budget, pattern
                    )
                    for n, reply in zip(part, replies, strict=True):
                        if isinstance(reply, Exception):
                            last[n] = f"{type(reply).__name__}: {reply}"
                            still.append(n)
                            continue
                        if not reply.strip():  # an empty verdict is a failed call: asked again,
                            last[n] = "empty reply"  # never cached
                            still.append(n)
                            continue
                        out[n] = reply
                        cache_file = keys[n]
                        assert cache_file is not None
                        atomic_write_text(
                            cache_file,
                            canonical_json(
                                {
                                    "judge": self.id,
                                    "version": requests[n].version,
                                    "prompt": requests[n].prompt,
                                    "image": requests[n].image,
                                    "reply": reply,
                                }
                            ),
                        )
                    done += len(part)
                    bar.update(len(part))
            pending = still
        bar.close()
        if total and self.progress is not None:
            self.progress(f"{self.id}: {done}/{total} judge call(s)")
        self.failures.extend(last[n] for n in pending)
        return out


def make_judge(
    spec: str,
    cache_dir: str | Path,
    progress: Callable[[str], None] | None = None,
    *,
    timeout_s: float = 120.0,
    max_retries: int = 2,
    api_key_env: str | None = None,
    **engine: Any,
) -> BackendJudge | None:
    """A judge from its spec (module docstring); ``rules`` → None. The engine the spec names
    opens the model (:func:`~harness_adapters.run.engine.judge_engine`: ``vllm`` for a local
    model or a ``vllm serve`` endpoint, ``openai`` for any OpenAI-compatible one; an installed
    engine with a ``judge`` method is a judge kind too). ``engine``: the local engine's settings
    (vLLM's :class:`EngineSettings` fields). A served judge gets ``timeout_s`` per request, the
    judge's own ``max_retries`` further tries after a failed one with backoff (the client does
    not retry as well, so a request is tried at most ``max_retries + 1`` times), and a key only
    from ``api_key_env`` (or ``OPENAI_API_KEY`` for OpenAI's own host); its cache is keyed by
    model *and* where it runs."""
    from harness_adapters.run.engine import judge_engine

    if spec == "rules":
        return None
    found, kind, target = judge_engine(spec)
    opened = found.judge(  # type: ignore[attr-defined]
        kind, target, timeout_s=timeout_s, api_key_env=api_key_env, settings=engine
    )
    return BackendJudge(
        opened.backend,
        cache_dir,
        opened.judge_id,
        use_patterns=opened.constrained,
        retries=max_retries if opened.served else 3,
        progress=progress,
    )
