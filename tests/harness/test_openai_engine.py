"""``--engine openai`` (#81): any OpenAI-compatible chat endpoint, here a local fake server on
127.0.0.1 that answers MATH-Vision testmini from its answer key (the base model right on items
whose id is divisible by 3, the served adapter ``strong`` on all but every tenth, ``weak`` on
every fifth) — with the faults a served model gives: 429 and 500 once, a request that outlasts
the timeout, a truncated body, and an item that always fails. The real client (the ``openai``
library's retries with backoff) talks to it; the run places the suite through the run's own
loop, records and reports."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.extras import requires
from tests.harness.test_engine_protocol import StubBackend

KEY = "sk-fake-secret-0123456789"


class _Endpoint(BaseHTTPRequestHandler):
    key = StubBackend()
    plan: list[str] = []
    """The faults the next new items meet, one each, in order ("always": every request of it)."""
    faults: dict[str, list[str]] = {}
    """item id → the faults its next requests meet ("always" never clears)."""
    seen: list[tuple[str, str | None]] = []
    auth: set[str | None] = set()

    def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):  # noqa: N802
        models = ["base", "strong", "weak"]
        self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in models]})

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).auth.add(self.headers.get("Authorization"))
        text = body["messages"][0]["content"][-1]["text"]
        item, answer = self.key._item(text)
        model = body["model"]
        if type(self).plan and all(i != item for i, _ in type(self).seen):
            type(self).faults[item] = [type(self).plan.pop(0)]
        type(self).seen.append((item, model))
        todo = type(self).faults.get(item, [])
        fault = todo[0] if todo else None
        if fault and fault != "always":
            todo.pop(0)
        if fault == "429":
            return self._send(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "10"})
        if fault in ("500", "always"):
            return self._send(500, {"error": {"message": f"engine died, key {KEY}"}})
        if fault == "slow":
            time.sleep(1.5)  # past the client's timeout: it gives up and retries
        k = int(item)
        right = {"base": k % 3 == 0, "strong": k % 10 != 0, "weak": k % 5 == 0}[model]
        reply = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": answer if right else "Z"},
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
        }
        if fault == "truncated":  # the body cut short and the connection closed
            raw = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw[: len(raw) // 2])
            self.wfile.flush()
            self.close_connection = True
            return None
        return self._send(200, reply)

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint(monkeypatch):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    _Endpoint.seen, _Endpoint.auth = [], set()
    _Endpoint.plan, _Endpoint.faults = ["429", "500", "slow", "truncated"], {}
    monkeypatch.setenv("MY_ENDPOINT_KEY", KEY)
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def _files(out: Path) -> str:
    return "".join(p.read_text("utf-8", "replace") for p in out.rglob("*") if p.is_file())


@requires("openai", "openai")
def test_a_served_model_is_placed_through_every_fault(endpoint, tmp_path, capsys):
    from primebench_tasks.cli import main
    from primebench_tasks.place.result import Placement

    out = tmp_path / "run"
    rc = main(
        ["run", "--engine", "openai", "--base-url", endpoint, "--model", "base",
         "--api-key-env", "MY_ENDPOINT_KEY", "--timeout", "1", "--max-retries", "3",
         "--suite", "primebench_mathvision", "--out", str(out), "--n-boot", "50"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 0, err
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 100 and {r["status"] for r in records} == {"ok"}
    # each fault was met and its request tried again by the client; every answer scored
    asked = [i for i, _ in _Endpoint.seen]
    assert len(_Endpoint.faults) == 4
    for item in _Endpoint.faults:
        assert asked.count(item) == 2, item
    assert len(asked) == 104
    by_id = {r["item_id"]: r["score"] for r in records}
    assert all(by_id[i] == float(int(i) % 3 == 0) for i in by_id)
    placed = Placement.read(out / "report.json")
    b = placed.models["base"].benchmarks["MATH-Vision_MINI"]
    assert b.n_scored == 100 and b.predicted_full.value is not None
    spec = json.loads((out / "run_spec.json").read_text())
    assert spec["conditions"]["backend"] == {
        "kind": "openai", "base_url": endpoint, "served_model": "base"
    }  # fmt: skip
    # the key went to this endpoint only as its bearer token, and into no run file
    assert _Endpoint.auth == {f"Bearer {KEY}"}
    assert KEY not in _files(out)


@requires("openai", "openai")
def test_an_item_that_always_fails_is_recorded_failed_and_asked_again(endpoint, tmp_path, capsys):
    from primebench_tasks.cli import main

    _Endpoint.plan = ["always"]
    out = tmp_path / "run"
    line = ["run", "--engine", "openai", "--base-url", endpoint, "--model", "base",
            "--api-key-env", "MY_ENDPOINT_KEY", "--max-retries", "1",
            "--suite", "primebench_mathvision", "--out", str(out), "--n-boot", "50"]  # fmt: skip
    assert main(line) == 0
    err = capsys.readouterr().err
    assert "1 failed" in err or "failed" in err
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    (bad,) = [r for r in records if r["status"] != "ok"]
    (always,) = _Endpoint.faults
    assert bad["item_id"] == always and bad.get("score") is None and "500" in json.dumps(bad)
    assert KEY not in _files(out)  # the error body echoed the key: redacted
    _Endpoint.faults = {}
    before = len(_Endpoint.seen)
    assert main(line) == 0
    assert _Endpoint.seen[before:] == [(always, "base")]  # only the failed item asked again


@requires("openai", "openai")
def test_rank_variants_ranks_adapters_served_by_name(endpoint, tmp_path, capsys):
    from primebench_tasks.cli import main
    from primebench_tasks.place.variant_ranking import VariantRanking

    _Endpoint.plan = []
    out = tmp_path / "race"
    rc = main(
        ["rank-variants", "--engine", "openai", "--base-url", endpoint, "--base", "base",
         "--adapters", "strong", "weak", "--suite", "primebench_mathvision", "--out", str(out),
         "--n-boot", "50"]
    )  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    doc = VariantRanking.read(out / "variants.json")
    assert doc.order[0] == "base+strong"
    assert {m for _, m in _Endpoint.seen} == {"base", "strong", "weak"}


@requires("openai", "openai")
def test_an_adapter_the_endpoint_does_not_serve_is_refused_before_anything(endpoint, tmp_path):
    from primebench_tasks.cli import main

    out = tmp_path / "race"
    rc = main(
        ["rank-variants", "--engine", "openai", "--base-url", endpoint, "--base", "base",
         "--adapters", "nosuch", "--suite", "primebench_mathvision", "--out", str(out)]
    )  # fmt: skip
    assert rc != 0 and _Endpoint.seen == []
    assert not (out / "records.jsonl").exists()
