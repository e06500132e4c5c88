"""The generation interface an engine offers a run (docs/architecture.md, "The adapters")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from harness_adapters.run.messages import Messages


class Generation(str):
    """A generated text (a ``str``: every reader of a response takes it as one) that also says
    why generation stopped (``finish_reason``: ``stop``, ``length`` — at the token budget —, or
    None where the engine did not say) and how many tokens it took (``output_tokens``, or
    None). What the run records beside the response, for the response check."""

    finish_reason: str | None
    output_tokens: int | None

    def __new__(
        cls, text: str, finish_reason: str | None = None, output_tokens: int | None = None
    ) -> Generation:
        out = super().__new__(cls, text)
        out.finish_reason = finish_reason
        out.output_tokens = output_tokens
        return out


def generation_facts(out: str) -> dict[str, str | int | None]:
    """``finish_reason`` and ``output_tokens`` of a generated text (None for a plain str)."""
    return {
        "finish_reason": getattr(out, "finish_reason", None),
        "output_tokens": getattr(out, "output_tokens", None),
    }


class Backend(Protocol):
    """What a run asks of an engine (the vLLM engine or server, a Ray replica, a judge's model):
    ``generate(messages, adapter, max_new_tokens=None, regex=None)`` answers each request with
    its text (a :class:`Generation` where the engine says why it stopped) or the exception that
    failed it (a failed item, retried on resume); ``kind`` names
    the engine in the run's spec."""

    kind: str

    def generate(
        self,
        messages: Sequence[Messages],
        adapter: str | None,
        max_new_tokens: int | None = None,
        regex: str | None = None,
    ) -> list[str | Exception]: ...
