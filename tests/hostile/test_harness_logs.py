"""The hostile battery, harness logs: malformed or foreign lmms-eval result files give one
clear error naming the file and the field — never a traceback, never "0 suite versions"."""

from __future__ import annotations

import json

import pytest

from harness_adapters.harnesses.lmms_eval.ingest import read_run
from primebench_tasks.errors import InputError

GOOD_META = {"primebench_suite": "v1", "benchmark": "B"}


def _run(tmp_path, results: bytes, samples: bytes | None = None):
    d = tmp_path / "run"
    d.mkdir()
    (d / "20260101_results.json").write_bytes(results)
    if samples is not None:
        (d / "20260101_samples_primebench_x.jsonl").write_bytes(samples)
    return d


CASES = {
    "configs is a list": (json.dumps({"configs": [1, 2]}).encode(), None, "'configs' is a list"),
    "configs is null": (json.dumps({"configs": None}).encode(), None, "missing or null"),
    "no configs": (json.dumps({"results": {}}).encode(), None, "missing or null"),
    "a string config": (
        json.dumps({"configs": {"primebench_x": "yaml text"}}).encode(),
        None,
        "configuration of task 'primebench_x' is a str",
    ),
    "metadata a string": (
        json.dumps({"configs": {"primebench_x": {"metadata": "m"}}}).encode(),
        None,
        "metadata of task 'primebench_x' is a str",
    ),
    "a JSON list": (b"[1, 2, 3]", None, "a JSON list, not an object"),
    "UTF-16 results": (
        json.dumps({"configs": {}}).encode("utf-16"),
        None,
        "not UTF-8 text",
    ),
    "Latin-1 samples": (
        json.dumps({"configs": {"primebench_x": {"metadata": GOOD_META}}}).encode(),
        '{"doc_id": 0, "primebench_item": {"item_id": "é", "score": 1}}\n'.encode("latin-1"),
        "not UTF-8 text",
    ),
    "a lone surrogate in an answer": (
        json.dumps({"configs": {"primebench_x": {"metadata": GOOD_META}}}).encode(),
        b'{"doc_id": 0, "resps": [["\\ud800"]], "primebench_item": {"item_id": "1", "score": 1}}\n',
        "row 1, field 'resps\\[0\\]\\[0\\]': holds an escaped lone UTF-16 surrogate",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_lmms_eval_logs_are_one_clear_error(tmp_path, case):
    results, samples, message = CASES[case]
    d = _run(tmp_path, results, samples)
    with pytest.raises(InputError, match=message) as exc:
        read_run(d)
    assert "20260101_" in str(exc.value)  # names the file


SIDECAR = {
    "schema": "primebench.vlmeval-result/1",
    "suite": "v1",
    "model": "m",
    "dataset": "PrimeBench_AI2D_TEST",
    "benchmark": "AI2D_TEST",
    "upstream_class": "ImageMCQDataset",
    "result_file": "m_PrimeBench_AI2D_TEST_result.xlsx",
    "score_rule": "hit",
    "index_to_item": {"1": "1"},
}


@pytest.mark.parametrize(
    "change,message",
    [
        ({"score_rule": None}, "unknown score_rule"),
        ({"score_rule": "regex"}, "unknown score_rule 'regex'"),
        ({"result_file": "../../etc/passwd"}, "not a file name beside the sidecar"),
        ({"result_file": "/etc/passwd"}, "not a file name beside the sidecar"),
        ({"model": None}, "no valid 'model'"),
        ({"index_to_item": ["1"]}, "no valid 'index_to_item'"),
        ({"suite": None}, "no valid 'suite'"),
        ({"suite": ["v1", "v2"]}, "no valid 'suite'"),
    ],
)
def test_malformed_vlmeval_sidecars_are_one_clear_error(tmp_path, change, message):
    from harness_adapters.harnesses.vlmeval.ingest import read_sidecar

    path = tmp_path / "m_PrimeBench_AI2D_TEST_primebench.json"
    path.write_text(json.dumps({**SIDECAR, **change}), encoding="utf-8")
    with pytest.raises(InputError, match=message) as exc:
        read_sidecar(path)
    assert "m_PrimeBench_AI2D_TEST_primebench.json" in str(exc.value)


def test_vlmeval_empty_predictions_are_empty_answers_not_missing_ones(tmp_path):
    """An empty prediction comes back from VLMEvalKit's table as an empty cell; on 4d9a95b it was
    read as "no response", so a run whose every answer was empty got no response check (the
    lmms-eval and runner paths flag the same fault)."""
    from harness_adapters.harnesses.vlmeval.ingest import read_sidecar

    table = tmp_path / "m_PrimeBench_AI2D_TEST_result.tsv"
    table.write_text("index\tprediction\thit\n1\t\t0\n2\t\t0\n", "utf-8")
    side = tmp_path / "m_PrimeBench_AI2D_TEST_primebench.json"
    side.write_text(
        json.dumps({**SIDECAR, "result_file": table.name, "index_to_item": {"1": "a", "2": "b"}}),
        encoding="utf-8",
    )
    _, rows = read_sidecar(side)
    assert rows["response"].tolist() == ["", ""]


@pytest.mark.parametrize(
    "line,message,row",
    [
        ('" m0",b,1,,1\n', "model ' m0' is padded with spaces", 3),
        ("m0,b,1,blnd,1\n", "condition 'blnd' is not one of vl, blind", 3),
        ("m0,,1,,1\n", "benchmark .* is empty", 3),
        ("m0,b,1,,inf\n", "score inf outside", 3),
    ],
)
def test_bad_refresh_records_name_row_and_field(tmp_path, line, message, row):
    """`refresh --records` added ' m0' (padded) as a new model and accepted condition 'blnd'."""
    from primebench_tasks.refresh.records import read_records

    f = tmp_path / "r.csv"
    f.write_text("model,benchmark,item_id,condition,score\nm0,b,0,vl,1\n" + line, "utf-8")
    with pytest.raises(InputError, match=message) as exc:
        read_records(f)
    assert f"row {row}" in str(exc.value)


def _results(path, model: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"model_name": model, "configs": {"mmmu_val": {}}}))


def test_a_results_file_without_a_time_stamp_is_never_taken_as_the_newest(tmp_path):
    from harness_adapters.harnesses.lmms_eval.logs_panel import LogsReport, _runs

    _results(tmp_path / "m" / "20260101_120000_results.json", "m")
    _results(tmp_path / "m" / "zzz_results.json", "m")
    with pytest.raises(InputError, match="zzz_results.json has no lmms-eval time stamp") as e:
        _runs(tmp_path, LogsReport())
    assert "which counts cannot be told" in str(e.value)
    # alone, or with stamps on both, the newest stamp counts
    (tmp_path / "m" / "zzz_results.json").unlink()
    _results(tmp_path / "m" / "20250101_120000_results.json", "m")
    ((model, path, task),) = _runs(tmp_path, LogsReport())
    assert path.name == "20260101_120000_results.json" and task == "mmmu_val"


def test_lmms_evals_unknown_version_is_replaced_by_the_installed_one_said_as_such(tmp_path):
    """A pip-installed lmms-eval writes ``lmms_eval_version: "unknown@unknown"`` (its version
    comes from git); on 4d9a95b the report showed that although lmms-eval 0.7.3 was installed."""
    from harness_adapters.harnesses.lmms_eval.ingest import _unknown, run_conditions
    from harness_adapters.run.versions import installed_version

    res = {
        "configs": {"primebench_x": {"metadata": {**GOOD_META, "primebench_suite": "v1"}}},
        "lmms_eval_version": "unknown@unknown",
        "git_hash": "unknown",
    }
    d = _run(tmp_path, json.dumps(res).encode(), b"")
    cond = run_conditions(d)
    here = installed_version("lmms_eval", "lmms-eval")
    assert "git_hash" not in cond
    if here is None:
        assert "lmms_eval_version" not in cond
    else:
        assert cond["lmms_eval_version"] == f"{here} (installed where placed; the run wrote none)"
    assert _unknown("unknown@unknown") and _unknown("unknown") and not _unknown("main@2f4a081")
    # #79: "main@2f4a081" is git's branch@commit of the folder lmms-eval ran in (the newcomer's
    # report showed this checkout's commit as lmms-eval's version): said as what it is
    res["lmms_eval_version"] = "main@2f4a081"
    (d / "20260101_results.json").write_text(json.dumps(res))
    cond = run_conditions(d)
    assert cond["run_folder_git"] == "main@2f4a081 (git of the folder lmms-eval ran in)"
    assert cond.get("lmms_eval_version") != "main@2f4a081"
