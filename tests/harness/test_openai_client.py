"""The OpenAI-compatible client against hostile endpoints (battery 7): a 401 whose text echoes
the key across the 300-character cut, a body trickled a byte at a time past ``--timeout``, and a
200 body of JSON nested past the parser's depth — each a failed request in one line, the key in
no text the client returns."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.extras import requires

KEY = "sk-t8SECRETkey0123456789abcdefghij"  # 33 characters, as the battery's


class _Hostile(BaseHTTPRequestHandler):
    mode = "echo"

    def _raw(self, status: int, raw: bytes, trickle: float = 0.0) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        if not trickle:
            self.wfile.write(raw)
            return
        for i in range(len(raw)):
            self.wfile.write(raw[i : i + 1])
            self.wfile.flush()
            time.sleep(trickle)

    def do_GET(self):  # noqa: N802
        self._raw(200, json.dumps({"object": "list", "data": [{"id": "m"}]}).encode())

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        mode = type(self).mode
        if mode == "echo":  # the key straddles the client's 300-character cut
            msg = "p" * 255 + " key=" + str(self.headers.get("Authorization"))
            return self._raw(401, json.dumps({"error": {"message": msg}}).encode())
        if mode == "echo-cut":  # the server itself cut the key it echoes
            msg = "denied for " + str(self.headers.get("Authorization"))[:20]
            return self._raw(401, json.dumps({"error": {"message": msg}}).encode())
        if mode == "nested":
            return self._raw(200, b"[" * 100_000 + b"]" * 100_000)
        reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "A"}}]}
        return self._raw(200, json.dumps(reply).encode() + b" " * 40, trickle=0.1)

    def log_message(self, *args):
        pass


@pytest.fixture
def hostile(monkeypatch):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    monkeypatch.setenv("HOSTILE_KEY", KEY)
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def _ask(url: str, timeout_s: float = 30.0) -> str | Exception:
    from harness_adapters.engines.openai_api.client import OpenAIChatBackend

    backend = OpenAIChatBackend(
        url, "m", vllm_extensions=False, api_key_env="HOSTILE_KEY", timeout_s=timeout_s,
        max_retries=0,
    )  # fmt: skip
    msgs = [[{"role": "user", "content": [{"type": "text", "text": "q"}]}]]
    return backend.generate(msgs, None)[0]


@requires("openai", "openai")
@pytest.mark.parametrize("mode", ["echo", "echo-cut"])
def test_a_key_the_server_echoes_is_in_no_error_text(hostile, mode) -> None:
    _Hostile.mode = mode
    out = _ask(hostile)
    assert isinstance(out, RuntimeError)
    text = str(out)
    assert "HTTP 401" in text and "***" in text
    # not the key, nor any piece of it of 4 characters or more
    assert not any(KEY[i : i + 4] in text for i in range(len(KEY) - 3)), text


def test_redact_removes_a_key_cut_at_either_end_and_then_cuts() -> None:
    from harness_adapters.engines.openai_api.guards import redact

    assert redact("a sk-abcdef b", "sk-abcdef") == "a *** b"
    assert redact("denied sk-abc", "sk-abcdef") == "denied ***"  # a prefix ends the text
    assert redact("cdef was the key", "sk-abcdef") == "*** was the key"  # a suffix begins it
    assert redact("x" * 8 + "sk-abcdef", "sk-abcdef", limit=10) == "x" * 8 + "**"
    assert redact("ends with sk-", "sk-abcdef") == "ends with sk-"  # 3 characters tell nothing
    assert redact("no key", None) == "no key"


@requires("openai", "openai")
def test_a_body_trickled_past_the_timeout_fails_the_request_in_time(hostile) -> None:
    _Hostile.mode = "trickle"  # about 10 s of body, a byte every 0.1 s
    t0 = time.monotonic()
    out = _ask(hostile, timeout_s=1.0)
    took = time.monotonic() - t0
    assert isinstance(out, RuntimeError), out
    assert "timed out" in str(out).lower() or "took over" in str(out)
    assert took < 5.0, took


@requires("openai", "openai")
def test_a_body_nested_past_the_parser_is_a_failed_request(hostile) -> None:
    _Hostile.mode = "nested"
    out = _ask(hostile)
    assert isinstance(out, RuntimeError)
    assert "nested too deeply" in str(out)
