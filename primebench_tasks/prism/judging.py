"""What the PRISM builders and graders ask of a judge (the library never imports one).

A judge answers :class:`JudgeRequest` s in batches — ``complete_many(requests)`` returns one
reply per request, or ``None`` when the call failed after its retries (the item is then left
unanswered and excluded, never scored 0). Backends live in ``harness_adapters.judges``: a local
model through vLLM, an OpenAI-compatible endpoint, and rule-based graders.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

GRADE_MAX_TOKENS = 384
"""Output budget of a grading or synthesis call (App. C: the judge's 384-token verdicts)."""


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call. ``prompt``: the rendered text; ``version``: the prompt's version (part of
    every cache key); ``image``: path of an image shown before the text (None = text only);
    ``pattern``: a regular expression every valid reply matches (backends that support structured
    decoding, e.g. vLLM, constrain the output to it); ``max_tokens``: output budget."""

    prompt: str
    version: str
    image: str | None = None
    pattern: str | None = None
    max_tokens: int = GRADE_MAX_TOKENS


class Judge(Protocol):
    id: str

    def complete_many(self, requests: Sequence[JudgeRequest]) -> list[str | None]: ...


def parse_json_reply(reply: str | None) -> dict[str, Any] | None:
    """The JSON object in a reply (bare, or inside a code fence / surrounding prose); None when
    there is none. Control characters inside strings are accepted (``strict=False``)."""
    if reply is None:
        return None
    text = reply.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start : end + 1], strict=False)
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def parse_verdict(reply: str | None, key: str = "correct") -> bool | None:
    """``{"correct": true|false}`` → bool; anything else (malformed, refusal, non-bool) None."""
    obj = parse_json_reply(reply)
    v = None if obj is None else obj.get(key)
    return v if isinstance(v, bool) else None
