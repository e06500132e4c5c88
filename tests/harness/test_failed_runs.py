"""The third hostile battery (#54), failures: a run whose requests fail is never shown as a result. A
loopback OpenAI-compatible server that lists the model but answers every chat request with
401 (a wrong key) stands for any dead or refusing endpoint; the runner's real ``ServerBackend``
talks to it. Checked for ``run``, ``run --adaptive`` and ``rank-variants --adaptive``: no
score and no rank for a model with nothing scored, an error line naming how many items failed
and why, a non-zero exit — and, once the server answers, a rerun of the same command asks the
failed items again (a failure never spends the adaptive item budget)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tests.extras import requires


class _Server(BaseHTTPRequestHandler):
    status = 401
    answer = "A"
    posts = 0

    def _send(self, status: int, body: dict) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):  # noqa: N802
        self._send(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).posts += 1
        if type(self).status != 200:
            self._send(type(self).status, {"error": {"message": "Incorrect API key provided"}})
            return
        self._send(
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": type(self).answer},
                    }
                ],
            },
        )

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = HTTPServer(("127.0.0.1", 0), _Server)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    _Server.status, _Server.posts = 401, 0
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def _run(server, out, *extra):
    from primebench_tasks.cli import main

    return main(
        [
            "run",
            "--backend",
            "server",
            "--base-url",
            server,
            "--served-model",
            "m",
            "--model",
            "m",
            "--suite",
            "primebench_mathvision",
            "--out",
            str(out),
            *extra,
        ]
    )


@requires("vllm", "openai")
def test_an_adaptive_run_with_every_request_failed_places_nothing(server, tmp_path, capsys):
    out = tmp_path / "run"
    assert _run(server, out, "--adaptive", "--max-items", "10") != 0
    err = capsys.readouterr().err
    assert "primebench: error: nothing placed for m on MATH-Vision_MINI: no item scored" in err
    assert "items failed: " in err and "401" in err
    doc = json.loads((out / "adaptive.json").read_text())
    e = doc["models"]["m"]["benchmarks"]["MATH-Vision_MINI"]
    assert e["items"] == 0 and e["predicted_rank"] is None
    assert e["predicted_full"] == {"value": None, "lo": None, "hi": None}
    assert e["score_on_items_asked"] is None and e["failed"]["items"] == 5
    assert e["stopped_because"] == "every item of round 1 failed"
    md = (out / "adaptive.md").read_text()
    assert "of 17" not in md and "— (no item scored)" in md and "5 failed" in md
    # the server recovers: the same command asks the failed items again, to the full budget
    _Server.status, asked = 200, _Server.posts
    assert _run(server, out, "--adaptive", "--max-items", "10") == 0
    e = json.loads((out / "adaptive.json").read_text())["models"]["m"]["benchmarks"][
        "MATH-Vision_MINI"
    ]
    assert e["items"] == 10 and e["failed"]["items"] == 0 and e["predicted_rank"] is not None
    assert _Server.posts - asked == 10


@requires("vllm", "openai")
def test_a_static_run_with_every_request_failed_places_nothing(server, tmp_path, capsys):
    out = tmp_path / "run"
    assert _run(server, out) != 0
    err = capsys.readouterr().err
    assert "primebench: error: nothing placed for m:" in err and "401" in err
    assert "All-NaN" not in err
    report = json.loads((out / "report.json").read_text())["models"]["m"]["suite"]
    assert report["n_scored"] == 0 and report["predicted_rank"] is None
    assert report["score"]["value"] is None and report["predicted_full"]["value"] is None
    assert "no item scored" in report["no_rank_because"]
    assert "1 [1, 1]" not in (out / "report.md").read_text()


class _Refusing:
    """A backend whose every request for ``adapter`` fails as a refusing server's does (the
    runner records an exception as a failed item); other variants answer 'A'."""

    kind = "fake"

    def __init__(self, adapter):
        self.adapter, self.sent = adapter, 0

    def generate(self, messages, adapter, max_new_tokens=None, regex=None):
        self.sent += len(messages)
        if adapter == self.adapter:
            return [PermissionError("401 Incorrect API key provided") for _ in messages]
        return ["A" for _ in messages]


def test_a_race_with_a_variant_whose_every_request_failed_ranks_nothing(tmp_path, suite20):
    from harness_adapters.run.errors import BackendError
    from harness_adapters.run.race_loop import rank_variants_adaptive
    from harness_adapters.run.request import RunRequest
    from primebench_tasks.adaptive.result import AdaptiveSettings
    from primebench_tasks.data.panel import Panel
    from tests.harness.test_adaptive_run import _adapter_dir

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["X"]}))
    req = RunRequest(
        model=str(model),
        suite=suite20,
        out=tmp_path / "race",
        name="m",
        adapters={"a1": str(_adapter_dir(tmp_path / "a1"))},
    )
    panels = {"MATH-Vision_MINI": Panel.load_default("mathvision")}
    backend = _Refusing("a1")
    with pytest.raises(BackendError, match=r"^variant m\+a1: every one of its 5 requests .*401"):
        rank_variants_adaptive(req, panels, AdaptiveSettings(None, 20, 5), backend=backend)
    assert not (tmp_path / "race" / "adaptive_variants.json").exists()
