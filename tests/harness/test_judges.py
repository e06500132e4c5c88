"""Judges against a local stand-in chat-completions server on 127.0.0.1 (bounded requests)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from harness_adapters.judges.base import OpenAICompatibleJudge, RuleBasedJudge, parse_verdict
from harness_adapters.judges.prompts import render


class Handler(BaseHTTPRequestHandler):
    script: list = []
    seen: list = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.seen.append(body)
        status, reply = Handler.script.pop(0) if Handler.script else (200, '{"correct": true}')
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if status == 200:
            payload = reply if reply.startswith("RAW:") else json.dumps(
                {"choices": [{"message": {"content": reply}}]})
            self.wfile.write(payload.removeprefix("RAW:").encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = HTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    Handler.script, Handler.seen = [], []
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def test_cached_deterministic_calls(server, tmp_path):
    j = OpenAICompatibleJudge(server, "judge-model", tmp_path, backoff=0)
    version, prompt = render("grade_q", question="2+2?", gold="4", answer="4")
    assert parse_verdict(j.complete(prompt, version)) is True
    assert Handler.seen[0]["temperature"] == 0 and Handler.seen[0]["model"] == "judge-model"
    assert j.complete(prompt, version) == '{"correct": true}'
    assert len(Handler.seen) == 1  # the second call came from the cache


def test_retry_then_success_and_failure_is_unanswered(server, tmp_path):
    j = OpenAICompatibleJudge(server, "m", tmp_path, retries=2, backoff=0)
    Handler.script = [(500, ""), (200, '{"correct": false}')]
    assert parse_verdict(j.complete("p1", "v")) is False
    Handler.script = [(500, "")] * 3
    assert j.complete("p2", "v") is None and j.failures  # excluded, never scored 0
    Handler.script = [(200, "RAW:not json")] * 3
    assert j.complete("p3", "v") is None


def test_server_down_is_unanswered(tmp_path):
    j = OpenAICompatibleJudge("http://127.0.0.1:9/v1", "m", tmp_path, retries=1, backoff=0,
                              timeout=2)
    assert j.complete("p", "v") is None and "URLError" in j.failures[0]


def test_verdict_parsing_and_rules():
    assert parse_verdict('```json\n{"correct": false}\n```') is False
    assert parse_verdict("I think it is right") is None
    assert parse_verdict('{"correct": "yes"}') is None
    r = RuleBasedJudge()
    assert r.complete("anything", "v") is None
    assert r.grade_count(12, "There are 12 apples.") == 1.0
    assert r.grade_count(12, "many") is None
    assert r.grade_ab("B", "Caption B") == 1.0 and r.grade_ab("A", "b") == 0.0
    assert r.grade_q({"answer": "C", "options": ["x", "y", "z"]}, "C") == 1.0
