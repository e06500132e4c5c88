"""The runner's contracts without vLLM: records, resume, failures, requests, input checks, the
session's spec and reports (a fake backend stands in for the engine)."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from harness_adapters.engines.vllm.backends import ServerBackend, check_adapter, check_model
from harness_adapters.lmms_eval_upstream.functions import doc_to_text
from harness_adapters.run.errors import BackendError
from harness_adapters.run.messages import chat_messages
from harness_adapters.run.records import RecordFile
from harness_adapters.run.request import RunRequest
from harness_adapters.run.session import execute, write_run_report, write_variant_report
from harness_adapters.run.static_loop import run_variants
from harness_adapters.suites.documents import SuiteDoc, suite_docs
from harness_adapters.suites.prompt import PROMPT_KWARGS
from primebench_tasks.errors import InputError
from primebench_tasks.suite.manifest import as_suite
from tests.extras import requires


class FakeBackend:
    """Answers the gold answer when (adapter, item) hashes even, else 'Z'; fails on ``fail``."""

    kind = "fake"

    def __init__(self, fail: set[str] = frozenset()):
        self.calls: list[tuple[str | None, str]] = []
        self.fail = set(fail)

    def generate(self, messages, adapter):
        out = []
        for m in messages:
            text = m[0]["content"][-1]["text"]
            item = text.split("\n", 1)[0]
            self.calls.append((adapter, item))
            if item in self.fail:
                out.append(RuntimeError("boom"))
            else:
                out.append(text)
        return out


def _docs(suite20, mathvision):
    return suite_docs(suite20, mathvision)


def test_suite_docs_follow_the_manifest(suite20, mathvision):
    docs = _docs(suite20, mathvision)
    assert [d.item_id for d in docs] == suite20["categories"][docs[0].category]["benchmarks"][
        docs[0].benchmark
    ]["item_ids"]
    assert all(Path(d.doc["image"]).is_absolute() and Path(d.doc["image"]).exists() for d in docs)


def test_chat_messages_are_lmms_eval_style(suite20, mathvision):
    d = _docs(suite20, mathvision)[0]
    (msg,) = chat_messages(d)
    assert msg["role"] == "user" and [c["type"] for c in msg["content"]] == ["image_url", "text"]
    url = msg["content"][0]["image_url"]["url"]
    # an RGB JPEG goes as its own bytes: the pixels any decoder gets are doc_to_visual's
    assert url.startswith("data:image/jpeg;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == Path(d.doc["image"]).read_bytes()
    assert msg["content"][1]["text"] == doc_to_text(d.doc, PROMPT_KWARGS)


@pytest.mark.parametrize("mode", ["RGBA", "P", "L", "RGB"])
def test_an_image_reaches_the_model_as_its_rgb_pixels(tmp_path, mode):
    import io

    from PIL import Image

    from harness_adapters.run.messages import image_data_url

    rng = np.random.default_rng(0)
    im = Image.fromarray(rng.integers(0, 255, (9, 7, 4), dtype=np.uint8), "RGBA").convert(mode)
    for fmt in ("PNG", "GIF") if mode == "P" else ("PNG",):
        path = tmp_path / f"x_{mode}.{fmt.lower()}"
        im.save(path, format=fmt)
        url = image_data_url(str(path))
        mime, data = url.split(";base64,")
        assert mime == "data:image/png"  # RGB PNGs as they are, the rest converted to RGB PNG
        with Image.open(io.BytesIO(base64.b64decode(data))) as got, Image.open(path) as src:
            assert got.mode == "RGB"
            assert np.array_equal(np.asarray(got), np.asarray(src.convert("RGB")))


def _run(backend, docs, records, adapters=(None, "a1")):
    return run_variants(
        backend, docs, "base", list(adapters), records, "v1", batch_size=7, progress=None
    )


def test_records_one_line_per_variant_item_and_resume_recomputes_nothing(
    tmp_path, suite20, mathvision
):
    docs = _docs(suite20, mathvision)
    rec = RecordFile(tmp_path / "records.jsonl")
    b1 = FakeBackend()
    s = _run(b1, docs[:12], rec)
    assert s.scored == {"base": 12, "base+a1": 12} and len(b1.calls) == 24
    b2 = FakeBackend()
    s = _run(b2, docs, rec)
    assert s.skipped == {"base": 12, "base+a1": 12} and len(b2.calls) == 16
    lines = rec.read()
    assert len(lines) == 40
    assert len({(r["model"], r["item_id"]) for r in lines}) == 40
    r = lines[0]
    assert r["schema"] == "primebench.run_record/1" and r["status"] == "ok"
    assert r["adapter"] is None and lines[-1]["adapter"] == "a1"
    assert r["model"] == "base" and lines[-1]["model"] == "base+a1"


def test_refresh_reads_runner_records_without_failed_lines(tmp_path, suite20, mathvision):
    from primebench_tasks.refresh.records import read_records

    docs = _docs(suite20, mathvision)[:4]
    bad = docs[1].doc["question"].replace("<image1>", "").strip().split("\n", 1)[0]
    rec = RecordFile(tmp_path / "r.jsonl")
    _run(FakeBackend(fail={bad}), docs, rec, adapters=[None, "a1"])
    df = read_records(rec.path)
    assert len(df) == 6 and set(df["model"]) == {"base", "base+a1"}
    assert docs[1].item_id not in set(df["item_id"])
    assert set(df.columns) == {"model", "benchmark", "item_id", "condition", "score"}
    # records of another suite version are refused (refresh passes its published versions)
    from primebench_tasks.errors import InputError as _IE

    assert len(read_records(rec.path, {"v1"})) == 6
    with pytest.raises(_IE, match=r"row 1, field 'suite': record of suite 'v1', not a version"):
        read_records(rec.path, {"other-version"})


def test_failed_items_are_missing_and_retried(tmp_path, suite20, mathvision):
    docs = _docs(suite20, mathvision)[:5]
    bad = docs[2].doc["question"].replace("<image1>", "").strip().split("\n", 1)[0]
    rec = RecordFile(tmp_path / "r.jsonl")
    s = _run(FakeBackend(fail={bad}), docs, rec, adapters=[None])
    assert s.failed == {"base": 1} and s.scored == {"base": 4}
    failed = [r for r in rec.read() if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["score"] is None and "boom" in failed[0]["error"]
    assert ("base", docs[2].benchmark, docs[2].item_id) not in rec.finished()
    b = FakeBackend()
    s = _run(b, docs, rec, adapters=[None])
    assert s.scored == {"base": 1} and len(b.calls) == 1
    assert ("base", docs[2].benchmark, docs[2].item_id) in rec.finished()


def test_an_image_that_fails_to_decode_is_a_failed_item(tmp_path, suite20, mathvision):
    d = _docs(suite20, mathvision)[0]
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG not really")
    doc = SuiteDoc(d.item_id, d.benchmark, d.category, {**d.doc, "image": str(broken)})
    rec = RecordFile(tmp_path / "r.jsonl")
    b = FakeBackend()
    s = _run(b, [doc], rec, adapters=[None])
    assert s.failed == {"base": 1} and b.calls == []
    (r,) = rec.read()
    assert r["status"] == "failed" and "failed to decode" in r["error"]


def test_a_partial_last_line_from_a_kill_is_dropped_and_cut(tmp_path):
    rec = RecordFile(tmp_path / "r.jsonl")
    ok = {"model": "m", "item_id": "1", "benchmark": "b", "status": "ok", "score": 1.0}
    rec.append([ok])
    with open(rec.path, "ab") as fh:
        fh.write(b'{"model": "m", "item_id": "2", "benchm')
    assert [r["item_id"] for r in rec.read()] == ["1"]
    rec.append([{**ok, "item_id": "3"}])
    assert [r["item_id"] for r in rec.read()] == ["1", "3"]
    assert rec.path.read_bytes().count(b"\n") == 2


def test_bad_record_lines_are_named(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(
        '{"model": "m", "item_id": "1", "benchmark": "b", "status": "ok"}\nnot json\n{"x": 1}\n'
    )
    with pytest.raises(InputError, match=r"r.jsonl, row 2: invalid JSON"):
        RecordFile(p).read()
    p.write_text('{"model": "m", "item_id": "1", "benchmark": "b"}\n')
    with pytest.raises(InputError, match=r"row 1, field 'status'"):
        RecordFile(p).read()
    line = '{"model": "m", "item_id": "1", "benchmark": "b", "status": "ok"}\n'
    p.write_text(line * 2)
    with pytest.raises(InputError, match="recorded twice"):
        RecordFile(p).finished()


def _adapter_dir(path: Path, r: int, hidden: int, rank_pattern=None) -> Path:
    path.mkdir(parents=True)
    (path / "adapter_config.json").write_text(
        json.dumps(
            {"r": r, "rank_pattern": rank_pattern or {}, "base_model_name_or_path": "other/base"}
        )
    )
    header = {
        "base_model.model.model.language_model.layers.0.self_attn.q_proj.lora_A.weight": {
            "dtype": "F32",
            "shape": [r, hidden],
            "data_offsets": [0, 4 * r * hidden],
        }
    }
    raw = json.dumps(header).encode()
    (path / "adapter_model.safetensors").write_bytes(
        struct.pack("<Q", len(raw)) + raw + bytes(4 * r * hidden)
    )
    return path


def _model_dir(path: Path, hidden: int = 128) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(
        json.dumps({"text_config": {"hidden_size": hidden, "num_hidden_layers": 2}})
    )
    return path


def test_adapter_and_model_checks(tmp_path):
    model = check_model(str(_model_dir(tmp_path / "base")))
    a = check_adapter("ok", _adapter_dir(tmp_path / "ok", 8, 128), model, 8)
    assert a.rank == 8
    with pytest.raises(BackendError, match=r"rank 16 > max_lora_rank 8"):
        check_adapter("big", _adapter_dir(tmp_path / "big", 8, 128, {"q_proj": 16}), model, 8)
    with pytest.raises(BackendError, match=r"does not fit base model.*hidden size 128.*other/b"):
        check_adapter("wrong", _adapter_dir(tmp_path / "wrong", 4, 256), model, 8)
    with pytest.raises(BackendError, match="adapter_config.json does not exist"):
        check_adapter("none", tmp_path / "nowhere", model, 8)
    with pytest.raises(BackendError, match="no such directory, and not in the local"):
        check_model(str(tmp_path / "missing-model"))
    # no --max-lora-rank: any rank passes the check, and the engine gets the adapters' rank
    # rounded up to one vLLM supports
    from harness_adapters.engines.vllm.backends import lora_rank_for
    from harness_adapters.engines.vllm.settings import EngineSettings

    big = check_adapter("big", tmp_path / "big", model, None)
    assert big.rank == 16 and lora_rank_for([8, 16]) == 16 and lora_rank_for([9]) == 16
    assert lora_rank_for([4]) == 8 and EngineSettings().max_model_len is None


@requires("vllm", "openai")
def test_a_server_that_is_down_is_a_clear_error():
    with pytest.raises(BackendError, match="is down or not answering"):
        ServerBackend("http://127.0.0.1:9/v1", "m", timeout_s=2)


def test_session_writes_spec_records_and_reports(tmp_path, suite20, mathvision):
    model = _model_dir(tmp_path / "base")
    adapters = {
        "a1": str(_adapter_dir(tmp_path / "a1", 8, 128)),
        "a2": str(_adapter_dir(tmp_path / "a2", 8, 128)),
    }
    req = RunRequest(model=str(model), suite=suite20, out=tmp_path / "run", adapters=adapters)
    backend = FakeBackend()
    execute(req, mathvision, None, backend=backend)
    assert len(RecordFile(req.out / "records.jsonl").read()) == 60
    spec = json.loads((req.out / "run_spec.json").read_text())
    assert spec["suite"] == suite20["version"] and set(spec["adapters"]) == {"a1", "a2"}
    placed = write_run_report(req, mathvision, n_boot=50)
    assert list(placed.index) == ["base", "base+a1", "base+a2"]
    assert (placed["n_scored"] == 20).all()
    assert (
        (placed.predicted_rank_lo <= placed.predicted_rank)
        & (placed.predicted_rank <= placed.predicted_rank_hi)
    ).all()
    report = json.loads((req.out / "report.json").read_text())
    assert report["schema"] == "primebench.placement/1"  # the one placement path
    assert (req.out / "placement.png").read_bytes()[:4] == b"\x89PNG"
    table, pairwise, ceiling = write_variant_report(req, n_boot=50)
    assert np.allclose(pairwise.to_numpy() + pairwise.to_numpy().T, 1.0)
    assert (req.out / "variants.md").exists() and (req.out / "variants.png").exists()
    # a rerun with everything recorded starts no engine (no backend given: none is built)
    import harness_adapters.engines.vllm.engine as session

    def no_engine(*a, **k):
        raise AssertionError("an engine was started although nothing was left to compute")

    orig = session.OfflineBackend
    session.OfflineBackend = no_engine
    try:
        summary = execute(req, mathvision, None)
    finally:
        session.OfflineBackend = orig
    assert summary.skipped == {"base": 20, "base+a1": 20, "base+a2": 20}
    again = RunRequest(
        model=str(model), suite=as_suite({**suite20, "version": "other"}), out=req.out
    )
    with pytest.raises(BackendError, match="different suite"):
        execute(again, mathvision, None, backend=backend)


def test_documents_digest_by_hand(suite20, mathvision):
    import dataclasses
    import hashlib

    from harness_adapters.suites.documents import documents_digest

    docs = _docs(suite20, mathvision)
    b = docs[0].benchmark
    rows = sorted([d.item_id, d.text(), d.answer()] for d in docs)
    by_hand = hashlib.sha256(
        (json.dumps(rows, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
    ).hexdigest()[:16]
    assert documents_digest(docs) == {b: by_hand}
    assert documents_digest(docs[::-1]) == {b: by_hand}  # the order asked does not count
    other = dataclasses.replace(docs[3], doc={**docs[3].doc, "answer": "not the answer"})
    assert documents_digest([*docs[:3], other, *docs[4:]]) != {b: by_hand}


def test_a_resumed_run_with_other_documents_is_refused(tmp_path, suite20, mathvision):
    from harness_adapters.run.request import freeze_spec

    out = tmp_path / "run"
    out.mkdir()
    spec = {"schema": "s", "suite": "v", "adapters": {}, "documents": {"A": "1", "B": "2"}}
    freeze_spec(out, spec)
    freeze_spec(out, {**spec, "documents": {"A": "1", "B": "2"}})  # the same: resumed
    with pytest.raises(BackendError, match="static items of B had other ids"):
        freeze_spec(out, {**spec, "documents": {"A": "1", "B": "3"}})
    old = {k: v for k, v in spec.items() if k != "documents"}
    (out / "run_spec.json").write_text(json.dumps(old))  # a spec from before the digest
    freeze_spec(out, spec)
    assert json.loads((out / "run_spec.json").read_text())["documents"] == spec["documents"]
    pools = {**spec, "adaptive": {"documents": {"A": "1"}}}
    freeze_spec(out, pools)  # an adaptive run may continue a static one (#71)
    with pytest.raises(BackendError, match="holds an adaptive run; this one is static"):
        freeze_spec(out, spec)  # never the reverse
    adaptive = tmp_path / "adaptive"
    adaptive.mkdir()
    freeze_spec(adaptive, pools)
    with pytest.raises(BackendError, match="adaptive item pools of A"):
        freeze_spec(adaptive, {**spec, "adaptive": {"documents": {"A": "9"}}})


def test_benchmarks_that_share_item_ids_are_distinct_records(tmp_path, suite20, mathvision):
    """Records are keyed (variant, benchmark, item): the embedded AutoJudger panel has 34 ids
    shared by AI2D_TEST and MMMU_DEV_VAL; a suite with both runs, resumes and reports."""
    import dataclasses

    docs = _docs(suite20, mathvision)[:4]
    twins = [dataclasses.replace(d, benchmark="OTHER_BENCH") for d in docs]
    rec = RecordFile(tmp_path / "r.jsonl")
    s = _run(FakeBackend(), docs + twins, rec, adapters=[None])
    assert s.scored == {"base": 8}
    done = rec.finished()
    assert len(done) == 8 and ("base", "OTHER_BENCH", docs[0].item_id) in done
    b = FakeBackend()
    s = _run(b, docs + twins, rec, adapters=[None])  # resume: nothing recomputed, no error
    assert s.skipped == {"base": 8} and b.calls == []


def test_a_device_or_huge_file_as_image_is_refused_not_read(tmp_path):
    """An item image path of /dev/zero was read whole (MemoryError at 5.4 GB)."""
    from harness_adapters.run.messages import ItemInputError, image_data_url
    from primebench_tasks.data.io import read_image_bytes

    with pytest.raises(ItemInputError, match="not a regular file"):
        image_data_url("/dev/zero")
    with pytest.raises(OSError, match="not a regular file"):
        read_image_bytes("/dev/zero")
    big = tmp_path / "big.png"
    big.write_bytes(b"\0" * 2048)
    with pytest.raises(OSError, match="above the 1024-byte limit"):
        read_image_bytes(big, limit=1024)


def test_a_server_process_that_dies_is_a_clear_error(tmp_path):
    import subprocess
    import sys

    from harness_adapters.engines.vllm.backends import wait_until_healthy
    from harness_adapters.run.errors import BackendError

    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    proc.wait()
    with pytest.raises(BackendError, match="did not start; see server.log"):
        wait_until_healthy("http://127.0.0.1:9", proc, 30, "server.log")


def test_tiny_model_failure_leaves_no_half_written_folder(tmp_path, monkeypatch):
    """A build that fails part-way (e.g. torchvision missing when the processor is saved) leaves
    neither the output folder nor its temporary sibling."""
    import harness_adapters.engines.vllm.tiny_model as tm
    from primebench_tasks.cli import main

    def half_then_fail(out, seed=0, size="tiny"):
        out.mkdir(parents=True)
        (out / "config.json").write_text("{}")
        raise ImportError("torchvision is required to save the image processor")

    monkeypatch.setattr(tm, "build_tiny_qwen2vl", half_then_fail)
    out = tmp_path / "tiny"
    with pytest.raises(ImportError, match="torchvision"):
        main(["tiny-model", str(out), "--adapters", "1"])
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
