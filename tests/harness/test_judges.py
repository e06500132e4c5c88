"""Judges against a local stand-in chat-completions server on 127.0.0.1 (bounded requests)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from harness_adapters.engines.vllm.backends import ServerBackend
from harness_adapters.judges.base import BackendJudge, judge_messages, make_judge
from primebench_tasks.errors import PrimeBenchError
from primebench_tasks.prism.judging import JudgeRequest, parse_json_reply, parse_verdict
from primebench_tasks.prism.prompts import GRADE_Q
from tests.extras import requires


class Handler(BaseHTTPRequestHandler):
    script: list = []
    seen: list = []
    auth: list = []

    def do_GET(self):  # noqa: N802
        Handler.auth.append(self.headers.get("Authorization"))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps({"data": [{"id": "judge-model"}]}).encode())

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.seen.append(body)
        Handler.auth.append(self.headers.get("Authorization"))
        status, reply = Handler.script.pop(0) if Handler.script else (200, '{"correct": true}')
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if status == 200:
            payload = (
                reply
                if reply.startswith("RAW:")
                else json.dumps({"choices": [{"message": {"content": reply}}]})
            )
            self.wfile.write(payload.removeprefix("RAW:").encode())
        else:  # an error body that echoes what it was sent
            self.wfile.write(
                json.dumps(
                    {"error": {"message": "bad key " + str(self.headers.get("Authorization"))}}
                ).encode()
            )

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = HTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    Handler.script, Handler.seen, Handler.auth = [], [], []
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def _q(answer="4"):
    return JudgeRequest(
        GRADE_Q.render(question="2+2?", gold="4", answer=answer),
        GRADE_Q.version,
        None,
        GRADE_Q.pattern,
    )


@requires("vllm", "openai")
def test_cached_deterministic_calls_with_structured_pattern(server, tmp_path):
    j = make_judge(f"vllm-server:judge-model@{server}", tmp_path)
    assert j.id == f"vllm-server:judge-model@{server}"
    assert parse_verdict(j.complete(_q())) is True
    sent = Handler.seen[0]
    assert sent["temperature"] == 0 and sent["model"] == "judge-model"
    assert sent["structured_outputs"] == {"regex": GRADE_Q.pattern}
    assert sent["max_tokens"] == 384
    assert j.complete(_q()) == '{"correct": true}'
    assert len(Handler.seen) == 1 and j.calls == 1  # the second call came from the cache


@requires("vllm", "openai")
def test_plain_openai_endpoint_gets_no_vllm_fields(server, tmp_path):
    j = make_judge(f"openai:judge-model@{server}", tmp_path)
    j.complete(_q())
    assert "structured_outputs" not in Handler.seen[0]


@requires("vllm", "openai")
def test_retry_then_success_and_failure_is_unanswered(server, tmp_path):
    # the client's own retries off, so the judge's retry loop is what is tested
    j = BackendJudge(
        ServerBackend(server, "judge-model", max_retries=0), tmp_path, retries=2, backoff=0
    )
    Handler.script = [(500, ""), (200, '{"correct": false}')]
    assert parse_verdict(j.complete(_q("5"))) is False and j.calls == 2
    Handler.script = [(500, "")] * 3
    assert j.complete(_q("6")) is None and "HTTP 500" in j.failures[-1]  # excluded, not 0
    Handler.script = [(200, "RAW:not json")] * 3
    assert j.complete(_q("7")) is None


@requires("vllm", "openai")
def test_batch_mixes_cache_hits_and_new_calls(server, tmp_path):
    j = BackendJudge(ServerBackend(server, "judge-model"), tmp_path, backoff=0)
    j.complete(_q("1"))
    Handler.seen.clear()
    out = j.complete_many([_q("1"), _q("2"), _q("3")])
    assert out == ['{"correct": true}'] * 3 and len(Handler.seen) == 2


@requires("vllm", "openai")
def test_image_is_sent_first_and_hashed_into_the_key(server, tmp_path, mathvision):
    img = mathvision.items_of("MATH-Vision_MINI").image_ref.iloc[0]
    path = str(mathvision.root / img)
    req = JudgeRequest("Describe.", "v", path)
    msgs = judge_messages(req)
    assert msgs[0]["content"][0]["image_url"]["url"].startswith("data:image/")
    assert msgs[0]["content"][1] == {"type": "text", "text": "Describe."}
    j = BackendJudge(ServerBackend(server, "judge-model"), tmp_path, backoff=0)
    j.complete(req)
    j.complete(JudgeRequest("Describe.", "v", None))
    assert len(Handler.seen) == 2  # same text, different image: two cache keys


@requires("vllm", "openai")
def test_missing_image_fails_the_call_not_the_batch(server, tmp_path):
    j = BackendJudge(ServerBackend(server, "judge-model"), tmp_path, retries=0)
    out = j.complete_many([JudgeRequest("x", "v", str(tmp_path / "nope.png")), _q()])
    assert out[0] is None and out[1] == '{"correct": true}' and "nope.png" in j.failures[0]


@requires("vllm", "openai")
def test_server_down_is_a_clear_error(tmp_path):
    with pytest.raises(PrimeBenchError, match="down or not answering"):
        make_judge("vllm-server:m@http://127.0.0.1:9/v1", tmp_path)
    with pytest.raises(PrimeBenchError, match="expected vllm:MODEL_DIR"):
        make_judge("gpt5", tmp_path)
    assert make_judge("rules", tmp_path) is None


def test_reply_parsing():
    assert parse_verdict('```json\n{"correct": false}\n```') is False
    assert parse_verdict("I think it is right") is None
    assert parse_verdict('{"correct": "yes"}') is None
    assert parse_json_reply('Sure! {"a": "x\ny"} done') == {"a": "x\ny"}
    assert parse_json_reply("[1, 2]") is None and parse_json_reply(None) is None


@requires("vllm", "openai")
def test_replies_are_cached_chunk_by_chunk_with_a_summary(server, tmp_path):
    said = []
    j = BackendJudge(
        ServerBackend(server, "judge-model"),
        tmp_path,
        backoff=0,
        chunk_size=2,
        progress=said.append,
    )
    reqs = [_q(str(i)) for i in range(5)]
    assert j.complete_many(reqs) == ['{"correct": true}'] * 5
    # chunk progress is a tqdm bar (on a terminal); the callback gets the summary line
    assert len(said) == 1 and said[0].endswith("5/5 judge call(s)")
    assert sum(1 for _ in tmp_path.rglob("*.json")) == 5


@requires("vllm", "openai")
def test_keys_go_only_where_the_user_tied_them(server, tmp_path, monkeypatch):
    """OPENAI_API_KEY is not sent to a local server; a key tied with --api-key-env is; an error
    body that echoes the key is redacted; OpenAI's own host takes OPENAI_API_KEY."""
    from harness_adapters.engines.openai_api.client import endpoint_key

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("MY_SERVER_KEY", "sk-local-secret")
    b = ServerBackend(server, "judge-model", max_retries=0)
    assert b.generate([[{"role": "user", "content": "hi"}]], None) == ['{"correct": true}']
    assert Handler.auth and all("sk-" not in (a or "") for a in Handler.auth)
    Handler.auth.clear()
    b = ServerBackend(server, "judge-model", api_key_env="MY_SERVER_KEY", max_retries=0)
    Handler.script = [(401, "")]
    (err,) = b.generate([[{"role": "user", "content": "hi"}]], None)
    assert isinstance(err, RuntimeError) and "401" in str(err)
    assert "sk-local-secret" not in str(err) and "***" in str(err)
    assert Handler.auth[-1] == "Bearer sk-local-secret"
    assert endpoint_key("https://api.openai.com/v1") == "sk-openai-secret"
    assert endpoint_key("http://127.0.0.1:8000/v1") is None
    monkeypatch.delenv("MY_SERVER_KEY")
    with pytest.raises(PrimeBenchError, match="MY_SERVER_KEY: the variable is not set"):
        endpoint_key(server, "MY_SERVER_KEY")


@requires("vllm", "openai")
@pytest.mark.parametrize(
    "raw",
    [
        'RAW:{"choices": []}',
        "RAW:[1, 2]",
        'RAW:{"choices": [{"message": {"content": null}}]}',
        'RAW:{"choices": [{"message": {"content": 7}}]}',
    ],
)
def test_malformed_replies_are_failed_calls_never_cached(server, tmp_path, raw):
    j = BackendJudge(
        ServerBackend(server, "judge-model", max_retries=0), tmp_path, retries=1, backoff=0
    )
    Handler.script = [(200, raw), (200, raw)]
    assert j.complete(_q()) is None and j.failures
    assert not list(tmp_path.rglob("*.json"))  # nothing cached: a healthy judge is asked again
    assert j.complete(_q()) == '{"correct": true}'


@requires("vllm", "openai")
def test_judge_cache_is_keyed_by_url(server, tmp_path):
    a = make_judge(f"openai:judge-model@{server}", tmp_path)
    assert a is not None and server in a.id


@requires("vllm", "openai")
def test_a_models_reply_without_a_list_is_a_clear_error(tmp_path):
    """A server whose GET /models has no "data" printed 'primebench: error: data'."""

    class NoData(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"unexpected": 1}')

        def log_message(self, *args):
            pass

    srv = HTTPServer(("127.0.0.1", 0), NoData)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with pytest.raises(PrimeBenchError, match=r"does not serve \['m'\]"):
            ServerBackend(f"http://127.0.0.1:{srv.server_address[1]}/v1", "m", max_retries=0)
    finally:
        srv.shutdown()


def _logging_server():
    """A fake OpenAI-compatible server of its own class, logging every request's headers."""

    class H(Handler):
        headers_seen: list = []

        def do_GET(self):  # noqa: N802
            H.headers_seen.append(dict(self.headers))
            super().do_GET()

        def do_POST(self):  # noqa: N802
            H.headers_seen.append(dict(self.headers))
            super().do_POST()

    srv = HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, H, f"http://127.0.0.1:{srv.server_address[1]}/v1"


@requires("vllm", "openai")
def test_the_judges_key_never_reaches_the_audit_judge(tmp_path, monkeypatch):
    """`prism score --judge openai:j@A --audit-judge openai:j@B --judge-api-key-env MYKEY` sent
    MYKEY to B; OPENAI_ORG_ID / OPENAI_PROJECT_ID reached every endpoint as headers."""
    import argparse

    from harness_adapters.prism.cli import _judge

    monkeypatch.setenv("MYKEY", "sk-judge-secret")
    monkeypatch.setenv("AUDITKEY", "sk-audit-secret")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-secret")
    a_srv, a, url_a = _logging_server()
    b_srv, b, url_b = _logging_server()
    try:
        engine = dict.fromkeys(
            ["max_model_len", "max_num_seqs", "gpu_memory_utilization", "tensor_parallel_size"]
        )
        args = argparse.Namespace(
            judge_timeout=5.0, judge_api_key_env="MYKEY", enforce_eager=False, **engine
        )
        judge = _judge(f"openai:judge-model@{url_a}", tmp_path / "j", args)
        audit = _judge(
            f"openai:judge-model@{url_b}", tmp_path / "a", args, "audit_judge_api_key_env"
        )
        assert judge.complete(_q()) == '{"correct": true}'
        assert audit.complete(_q()) == '{"correct": true}'
        sent_a = json.dumps(a.headers_seen)
        sent_b = json.dumps(b.headers_seen)
        assert "sk-judge-secret" in sent_a and "sk-judge-secret" not in sent_b
        assert "org-secret" not in sent_a + sent_b and "proj-secret" not in sent_a + sent_b
        # the audit judge's own key, when the user ties one to it
        args.audit_judge_api_key_env = "AUDITKEY"
        b.headers_seen.clear()
        audit = _judge(
            f"openai:judge-model@{url_b}", tmp_path / "a2", args, "audit_judge_api_key_env"
        )
        audit.complete(_q("5"))
        assert "sk-audit-secret" in json.dumps(b.headers_seen)
        assert "sk-judge-secret" not in json.dumps(b.headers_seen)
    finally:
        a_srv.shutdown()
        b_srv.shutdown()


def test_local_judges_in_folders_of_the_same_name_do_not_share_a_cache(tmp_path):
    """`vllm:…/a/judge` and `vllm:…/b/judge` both got the id `vllm:judge` (one cache)."""
    from harness_adapters.engines.vllm.engine import local_judge_id

    a, b = tmp_path / "a" / "judge", tmp_path / "b" / "judge"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    assert local_judge_id(a) != local_judge_id(b)
    assert local_judge_id(a).startswith("vllm:judge@")
    assert local_judge_id(a) == local_judge_id(tmp_path / "a" / ".." / "a" / "judge")


@requires("vllm", "openai")
def test_a_models_endpoint_answering_html_is_a_clear_error():
    """GET /models answering an HTML page was a JSONDecodeError traceback."""

    class Html(Handler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html><body>Please log in</body></html>")

    srv = HTTPServer(("127.0.0.1", 0), Html)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with pytest.raises(PrimeBenchError, match="not a JSON"):
            ServerBackend(f"http://127.0.0.1:{srv.server_address[1]}/v1", "m", max_retries=0)
    finally:
        srv.shutdown()


@requires("vllm", "openai")
def test_an_empty_judge_reply_is_asked_again_and_never_cached(server, tmp_path):
    """One `content: ""` reply was final: the artifact was rejected for good."""
    j = BackendJudge(
        ServerBackend(server, "judge-model", max_retries=0), tmp_path, retries=2, backoff=0
    )
    Handler.script = [(200, ""), (200, "   ")]
    assert j.complete(_q()) == '{"correct": true}'  # the third answer is a verdict
    assert j.calls == 3 and not j.failures
    j2 = BackendJudge(
        ServerBackend(server, "judge-model", max_retries=0), tmp_path / "b", retries=1, backoff=0
    )
    Handler.script = [(200, ""), (200, "")]
    assert j2.complete(_q()) is None and j2.failures
    assert not list((tmp_path / "b").rglob("*.json"))


@requires("vllm", "openai")
def test_a_judge_that_times_out_is_tried_max_retries_plus_one_times(tmp_path):
    """--judge-timeout 2 took 141 s per item: 4 judge tries × 3 client tries, each timing out."""
    import time as _time

    class Slow(Handler):
        posts = 0

        def do_POST(self):  # noqa: N802
            Slow.posts += 1
            _time.sleep(1.5)
            super().do_POST()

    from http.server import ThreadingHTTPServer

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    srv.daemon_threads = True
    srv.handle_error = lambda *a: None  # the client hung up on the slow reply: expected
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
        j = make_judge(f"openai:judge-model@{url}", tmp_path, timeout_s=0.3, max_retries=2)
        j.backoff = 0.0
        t = _time.perf_counter()
        assert j.complete(_q()) is None and j.failures
        assert Slow.posts == 3  # max_retries + 1, not (retries + 1) × (client retries + 1)
        assert _time.perf_counter() - t < 5
    finally:
        srv.shutdown()
