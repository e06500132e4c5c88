"""Malformed run-folder files are errors naming the file, the line and the field — never a
traceback, never taken at face value (#54: a truncated ``run_spec.json``, a JSON list, one
without ``adapters`` or with ``adaptive`` as a string; a non-UTF-8 tail in ``records.jsonl``; a
resumed record with ``"score": 7.0`` or ``true`` counted as a score)."""

from __future__ import annotations

import json

import pytest

from harness_adapters.run.records import RecordFile
from harness_adapters.run.request import freeze_spec, read_run_spec
from primebench_tasks.errors import InputError

SPEC = {"schema": "primebench.run/1", "suite": "v", "model": "m", "adapters": {}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"schema": "primebench.run/1", "suite', r"row 1: .*not valid JSON"),
        ("[1, 2]", r"not a run spec document: is a list, not an object"),
        (json.dumps({k: v for k, v in SPEC.items() if k != "adapters"}), r"'adapters'.*missing"),
        (json.dumps({**SPEC, "adaptive": "yes"}), r"field 'adaptive'.*is a string, not an obj"),
        (json.dumps({**SPEC, "adapters": {"a": 3}}), r"field 'adapters.a'.*not an object"),
    ],
)
def test_a_damaged_frozen_spec_is_named(tmp_path, text, message):
    (tmp_path / "run_spec.json").write_text(text)
    with pytest.raises(InputError, match=rf"run_spec.json.*{message}"):
        freeze_spec(tmp_path, dict(SPEC))
    with pytest.raises(InputError, match=message):
        read_run_spec(tmp_path / "run_spec.json")


def _line(**kw):
    rec = {"model": "m", "benchmark": "b", "item_id": "1", "status": "ok", "score": 1.0}
    return json.dumps({**rec, **kw}) + "\n"


def test_a_non_utf8_line_is_named_not_a_traceback(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_bytes(_line().encode() + _line(item_id="2").encode()[:-3] + b"\xff\xfe}\n")
    rf = RecordFile(path)
    with pytest.raises(InputError, match=r"records.jsonl, row 2: not UTF-8 text \(byte 0xff"):
        rf.read()
    with pytest.raises(InputError, match=r"row 2: not UTF-8"):
        rf.append([json.loads(_line(item_id="3"))])


@pytest.mark.parametrize("score", [7.0, -0.5, True, "1", float("inf")])
def test_an_ok_line_whose_score_is_not_in_0_1_is_refused(tmp_path, score):
    path = tmp_path / "records.jsonl"
    text = _line() + json.dumps(json.loads(_line(item_id="2")) | {"score": score}) + "\n"
    path.write_text(text)
    with pytest.raises(InputError, match=r"row 2, field 'score'.*a number in \[0, 1\]"):
        RecordFile(path).read()


def test_a_line_under_the_unicode_line_separator_reads_whole(tmp_path):
    """A model's answer holding U+2028 (written raw by json.dumps(ensure_ascii=False)) stays
    one record: lines end at '\\n' only."""
    path = tmp_path / "records.jsonl"
    rf = RecordFile(path)
    rf.append([{**json.loads(_line()), "response": "a\u2028b\u0085c"}])
    (rec,) = rf.read()
    assert rec["response"] == "a\u2028b\u0085c"


def test_a_resume_refuses_an_adapter_whose_weights_changed_in_place(tmp_path):
    """#54: rank-variants resumed an adapter whose weights had changed under the same name and
    path; its weights' digest is now frozen in the spec."""
    from harness_adapters.engines.vllm.engine import adapter_weights_digest
    from harness_adapters.run.errors import BackendError

    ad = tmp_path / "a1"
    ad.mkdir()
    (ad / "adapter_model.safetensors").write_bytes(b"weights one")

    def spec():
        entry = {"path": str(ad), "rank": 8, "weights": adapter_weights_digest(ad)}
        return {**SPEC, "adapters": {"a1": entry}}

    out = tmp_path / "run"
    out.mkdir()
    freeze_spec(out, spec())
    freeze_spec(out, spec())  # the same weights: resumes
    (ad / "adapter_model.safetensors").write_bytes(b"weights two")
    with pytest.raises(BackendError, match="adapter a1 was run from .*give it another name"):
        freeze_spec(out, spec())
    assert adapter_weights_digest(tmp_path) is None  # no weights file: nothing to compare


def test_the_run_spec_is_typed_and_reads_back_as_written(tmp_path):
    """#73: run_spec.json read and written as a typed RunSpec; the fields another writer adds
    kept as written; a field of the wrong type refused by name."""
    from harness_adapters.run.request import RunSpec

    doc = {
        "schema": "primebench.run/1",
        "suite": "v1",
        "suite_name": "s",
        "model": "m",
        "model_path": "/models/m",
        "prompt_kwargs": {"pre_prompt": ""},
        "generation": {"temperature": 0},
        "conditions": {"harness": "h"},
        "adapters": {"a": {"path": "/a", "rank": 8}},
        "documents": {"B": "0123"},
        "later_field": [1, 2],
    }
    spec = RunSpec.from_json(doc)
    assert spec.to_json() == doc and spec.extra == {"later_field": [1, 2]}
    assert spec.kind == "static" and spec.with_(adaptive={"max_items": 5}).kind == "adaptive"
    written = freeze_spec(tmp_path, spec)
    assert read_run_spec(tmp_path / "run_spec.json") == written == spec
    with pytest.raises(InputError, match="is a list, not an object or null") as e:
        RunSpec.from_json({**doc, "generation": []}, "run_spec.json")
    assert e.value.field == "generation"


def test_a_record_row_is_declared_once_and_reads_back_typed(tmp_path):
    """#73: the record line's fields are RecordRow's; a line reads back as the row written; an
    answer fact it does not declare, or a status other than ok/failed, is refused."""
    from harness_adapters.run.records import RECORD_FIELDS, SCHEMA, RecordRow

    row = RecordRow(
        model="m+a",
        adapter="a",
        benchmark="B",
        category="C",
        item_id="7",
        answer="A",
        condition="vl",
        suite="v1",
        status="ok",
        response="A",
        score=1.0,
        error=None,
        seconds=0.5,
        facts={"parsed": "A", "finish_reason": "stop"},
    )
    records = RecordFile(tmp_path / "records.jsonl")
    records.append([row])
    line = json.loads((tmp_path / "records.jsonl").read_text())
    assert line == {"schema": SCHEMA, **row.to_json()}
    assert set(line) - {"schema"} <= set(RECORD_FIELDS)
    assert records.rows() == [row]
    with pytest.raises(ValueError, match="not among"):
        RecordRow(**{**row.__dict__, "facts": {"tokens": 3}})
    with pytest.raises(ValueError, match="not 'ok' or 'failed'"):
        RecordRow(**{**row.__dict__, "status": "done"})
    (tmp_path / "partial.jsonl").write_text(
        json.dumps({k: v for k, v in line.items() if k != "seconds"}) + "\n"
    )
    with pytest.raises(InputError, match="required field is missing") as e:
        RecordFile(tmp_path / "partial.jsonl").rows()
    assert e.value.field == "seconds"


def test_a_prism_run_spec_names_its_suite_by_an_object(tmp_path):
    """PRISM's run spec (``prism_run_spec.json``) names the build's suite by an object: frozen,
    read back and resumed like a run's."""
    spec = {
        "schema": "primebench.prism_record/1",
        "suite": {"name": "s", "version": "v1"},
        "model": "m",
        "adapters": {},
    }
    freeze_spec(tmp_path, spec, "prism_run_spec.json")
    freeze_spec(tmp_path, spec, "prism_run_spec.json")  # resumed
    assert read_run_spec(tmp_path / "prism_run_spec.json").suite == spec["suite"]


@pytest.mark.parametrize(
    "second",
    [
        {"kind": "openai", "base_url": "http://other:8000/v1", "served_model": "m"},
        {"kind": "openai", "base_url": "http://one:8000/v1", "served_model": "m2"},
        {"kind": "server", "base_url": "http://one:8000/v1", "served_model": "m"},
    ],
)
def test_a_resume_on_another_engine_or_endpoint_is_refused(tmp_path, second):
    """Battery 7: a resume against another endpoint mixed two servers' answers as one model's
    and rewrote the frozen conditions to the second's."""
    from harness_adapters.run.errors import BackendError

    first = {"kind": "openai", "base_url": "http://one:8000/v1", "served_model": "m"}
    freeze_spec(tmp_path, {**SPEC, "conditions": {"backend": first}})
    before = (tmp_path / "run_spec.json").read_bytes()
    with pytest.raises(BackendError, match="the two would be placed as one model's"):
        freeze_spec(tmp_path, {**SPEC, "conditions": {"backend": second}})
    assert (tmp_path / "run_spec.json").read_bytes() == before
    # the same endpoint resumes, whatever else of its conditions moved (a version)
    freeze_spec(tmp_path, {**SPEC, "conditions": {"backend": {**first, "vllm": "0.33"}}})
