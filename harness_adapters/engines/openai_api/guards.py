"""What the OpenAI-compatible client holds a server to (battery 7): a key the server echoes is in
no text the client keeps — redacted before the text is cut, a piece of it at either end too —,
and a request ends at its deadline however slowly the server sends its body."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import Any

SECRET_PIECE_MIN = 4
"""The shortest piece of a secret that :func:`redact` removes from the ends of a text (a server
may have cut the key it echoes): shorter ones tell next to nothing of it."""

ERROR_TEXT_MAX = 300
"""Characters of a server's error text kept in a record (after redaction)."""


def redact(text: str, *secrets: str | None, limit: int | None = None) -> str:
    """``text`` with every secret replaced by ``***`` (an error body can echo the key), and a
    piece of a secret (≥ :data:`SECRET_PIECE_MIN` characters) that ends the text — a prefix, the
    rest cut by the server — or begins it — a suffix — as well; then cut to ``limit``
    characters. Redaction comes first: a cut cannot leave part of a key unmatched."""
    for sec in secrets:
        if not sec:
            continue
        text = text.replace(sec, "***")
        for n in range(len(sec) - 1, SECRET_PIECE_MIN - 1, -1):
            if text.endswith(sec[:n]):
                text = text[:-n] + "***"
                break
        for n in range(len(sec) - 1, SECRET_PIECE_MIN - 1, -1):
            if text.startswith(sec[-n:]):
                text = "***" + text[n:]
                break
    return text if limit is None else text[:limit]


def whole_request_deadline(seconds: float) -> dict[str, list[Any]]:
    """HTTP event hooks that bound a whole request — its body too — by ``seconds`` from its
    start: the HTTP library's own timeout bounds each read, so a server trickling its body a byte
    at a time would hold a request for ever. A body still arriving at the deadline raises the
    library's ``ReadTimeout``, which the ``openai`` client treats as any timeout (retried, then
    failed). The hooks take the HTTP module from the response (``openai`` ships its own fork of
    httpx in later versions)."""
    started: dict[int, float] = {}

    def on_request(request: Any) -> None:
        started[id(request)] = time.monotonic()

    def on_response(response: Any) -> None:
        http = sys.modules[type(response).__module__.split(".")[0]]
        request = response.request
        deadline = started.pop(id(request), time.monotonic()) + seconds
        inner = response.stream

        class _Bounded(http.SyncByteStream):  # type: ignore[name-defined]
            def __iter__(self) -> Iterator[bytes]:
                for chunk in inner:
                    if time.monotonic() > deadline:
                        raise http.ReadTimeout(
                            f"the whole request took over {seconds:g} s", request=request
                        )
                    yield chunk

            def close(self) -> None:
                close = getattr(inner, "close", None)
                if callable(close):
                    close()

        response.stream = _Bounded()

    return {"request": [on_request], "response": [on_response]}
