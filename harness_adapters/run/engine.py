"""The generation interface an engine offers a run (docs/architecture.md, "The adapters")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from harness_adapters.run.messages import Messages


class Backend(Protocol):
    """What a run asks of an engine (the vLLM engine or server, a Ray replica, a judge's model):
    ``generate(messages, adapter, max_new_tokens=None, regex=None)`` answers each request with
    its text or the exception that failed it (a failed item, retried on resume); ``kind`` names
    the engine in the run's spec."""

    kind: str

    def generate(
        self,
        messages: Sequence[Messages],
        adapter: str | None,
        max_new_tokens: int | None = None,
        regex: str | None = None,
    ) -> list[str | Exception]: ...
