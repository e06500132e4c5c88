"""The hostile battery, HELM imports: a damaged HELM run folder gives one clear error naming the
file, the entry and the field — never a traceback — and a score is never filed under an item the
model did not answer (two unperturbed instances with one id, a score for an absent instance).

The runs are written as HELM's runner writes them (JSON of its dataclasses without ``None``s), by
hand: these faults are in the files, not in HELM's classes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from primebench_tasks.cli import main
from primebench_tasks.data.helm import read_helm_runs
from primebench_tasks.errors import InputError


def _instance(iid: str, question: str, letter: str) -> dict[str, Any]:
    return {
        "input": {"text": f"{question}\nA. x\nB. y"},
        "references": [{"output": {"text": letter}, "tags": ["correct"]}],
        "split": "test",
        "id": iid,
    }


def _stat(iid: str, value: float) -> dict[str, Any]:
    return {
        "instance_id": iid,
        "train_trial_index": 0,
        "stats": [
            {
                "name": {"name": "exact_match", "split": "test"},
                "count": 1,
                "sum": value,
                "sum_squared": value,
                "min": value,
                "max": value,
                "mean": value,
            }
        ],
    }


def _run(root: Path, model: Any = "org/model", **files: Any) -> Path:
    """A two-instance run of ``model`` (id0 right, id1 wrong); ``files``: a file's content
    instead of the good one (``run_spec``, ``instances``, ``per_instance_stats``)."""
    run = root / "runs" / "v1" / "real_world_qa:model=m"
    run.mkdir(parents=True)
    good = {
        "run_spec": {
            "name": "real_world_qa:model=m",
            "adapter_spec": {"model": model, "model_deployment": "m"},
        },
        "instances": [_instance("id0", "Q one?", "A"), _instance("id1", "Q two?", "B")],
        "per_instance_stats": [_stat("id0", 1.0), _stat("id1", 0.0)],
    }
    for name, doc in {**good, **files}.items():
        if doc is not None:
            (run / f"{name}.json").write_text(json.dumps(doc))
    return run


def _stats_with(change: dict[str, Any], where: str = "entry") -> list[Any]:
    """The good stats with ``change`` applied to the first entry (``where="entry"``) or to its
    first stat (``"stat"``); a value of ``...`` removes the key."""
    stats: list[Any] = [_stat("id0", 1.0), _stat("id1", 0.0)]
    target = stats[0] if where == "entry" else stats[0]["stats"][0]
    for k, v in change.items():
        if v is ...:
            target.pop(k)
        else:
            target[k] = v
    return stats


CASES: dict[str, tuple[dict[str, Any], str, str]] = {
    # name: (files to replace, the file the error names, what the message says)
    "a stat without instance_id": (
        {"per_instance_stats": _stats_with({"instance_id": ...})},
        "per_instance_stats.json, row 0, field 'instance_id'",
        "must be a non-empty string",
    ),
    "a stat without sum": (
        {"per_instance_stats": _stats_with({"sum": ...}, "stat")},
        "per_instance_stats.json, row 0, field 'stats.sum'",
        "must be a number, not None",
    ),
    "sum a string": (
        {"per_instance_stats": _stats_with({"sum": "1"}, "stat")},
        "per_instance_stats.json, row 0, field 'stats.sum'",
        "must be a number, not '1'",
    ),
    "sum null": (
        {"per_instance_stats": _stats_with({"sum": None}, "stat")},
        "field 'stats.sum'",
        "must be a number",
    ),
    "count a string": (
        {"per_instance_stats": _stats_with({"count": "1"}, "stat")},
        "per_instance_stats.json, row 0, field 'stats.count'",
        "must be a number",
    ),
    "count null": (
        {"per_instance_stats": _stats_with({"count": None}, "stat")},
        "field 'stats.count'",
        "must be a number",
    ),
    "train_trial_index a string": (
        {"per_instance_stats": _stats_with({"train_trial_index": "0"})},
        "per_instance_stats.json, row 0, field 'train_trial_index'",
        "must be an integer",
    ),
    "train_trial_index null": (
        {"per_instance_stats": _stats_with({"train_trial_index": None})},
        "field 'train_trial_index'",
        "must be an integer",
    ),
    "a stat that is a string": (
        {"per_instance_stats": _stats_with({"stats": ["exact_match"]})},
        "per_instance_stats.json, row 0, field 'stats'",
        "stat 0 is a str, not an object",
    ),
    "a list entry that is a string": (
        {"per_instance_stats": ["id0", _stat("id1", 0.0)]},
        "per_instance_stats.json, row 0",
        "entry 0 is a str, not an object",
    ),
    "per_instance_stats.json an object": (
        {"per_instance_stats": {"id0": 1}},
        "per_instance_stats.json",
        "must be a JSON list of per-instance stats, not a dict",
    ),
    "run_spec.json a list": (
        {"run_spec": ["real_world_qa"]},
        "run_spec.json",
        "must be a JSON object, not a list",
    ),
    "scenario_state.json a list": (
        {"instances": None, "scenario_state": [1, 2]},
        "scenario_state.json",
        "must be a JSON object, not a list",
    ),
    "scenario_state.json request states an object": (
        {"instances": None, "scenario_state": {"request_states": {"a": 1}}},
        "scenario_state.json",
        "must be a JSON list of request states",
    ),
    "adapter_spec.model an object": (
        {"run_spec": {"name": "real_world_qa:x", "adapter_spec": {"model": {"name": "m"}}}},
        "run_spec.json, field 'adapter_spec.model'",
        "must be a string",
    ),
    "an instance that is a string": (
        {"instances": ["id0", _instance("id1", "Q two?", "B")]},
        "instances.json, row 0",
        "instance 0 is a str, not an object",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_helm_json_is_one_clear_error(tmp_path: Path, case: str) -> None:
    files, where, message = CASES[case]
    _run(tmp_path, **files)
    with pytest.raises(InputError, match=message) as exc:
        read_helm_runs(tmp_path, "real_world_qa", "RWQ")
    assert where in str(exc.value)


def test_a_second_unperturbed_instance_with_one_id_is_refused(tmp_path: Path) -> None:
    # a damaged or hand-merged instances.json: which text the id0 score belongs to is unknown
    instances = [
        _instance("id0", "Q one?", "A"),
        _instance("id1", "Q two?", "B"),
        _instance("id0", "Q three?", "B"),
    ]
    _run(tmp_path, instances=instances)
    with pytest.raises(InputError, match="instance 'id0' appears twice unperturbed") as exc:
        read_helm_runs(tmp_path, "real_world_qa", "RWQ")
    assert "instances.json, row 2, field 'id'" in str(exc.value)


def test_the_command_exits_2_and_writes_no_panel(tmp_path: Path, capsys) -> None:
    instances = [_instance("id0", "Q one?", "A"), _instance("id0", "Q three?", "B")]
    _run(tmp_path / "runs_root", instances=instances)
    out = tmp_path / "P"
    code = main(
        [
            "panel", "import-helm", str(tmp_path / "runs_root"), "--scenario", "real_world_qa",
            "--benchmark", "RWQ", "--category", "Image Understanding", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 2 and not out.exists()
    assert "appears twice unperturbed" in capsys.readouterr().err


def test_a_score_for_an_instance_the_run_does_not_hold_is_refused(tmp_path: Path) -> None:
    # without a text-key rule the item is HELM's id: a score must still belong to an instance
    _run(tmp_path, instances=[_instance("id0", "Q one?", "A")])
    with pytest.raises(InputError, match="instance id1 has a score but is not among") as exc:
        read_helm_runs(tmp_path, "real_world_qa", "RWQ")
    assert "per_instance_stats.json" in str(exc.value)


def test_a_perturbed_twin_and_other_trials_are_not_duplicates(tmp_path: Path) -> None:
    perturbed = {**_instance("id0", "Q ONE?", "A"), "perturbation": {"name": "upper"}}
    stats = [_stat("id0", 1.0), _stat("id1", 0.0), {**_stat("id0", 0.0), "train_trial_index": 1}]
    _run(
        tmp_path,
        instances=[_instance("id0", "Q one?", "A"), perturbed, _instance("id1", "Q two?", "B")],
        per_instance_stats=stats,
    )
    df, _ = read_helm_runs(tmp_path, "real_world_qa", "RWQ")
    assert dict(zip(df["item_id"], df["score"], strict=True)) == {"id0": 1.0, "id1": 0.0}


@pytest.mark.parametrize(
    "name,problem",
    [
        ("org/a\u2028b", "holds U+2028"),
        ("../../etc", "'.' or '..' path segment"),
        ("org/m\n", "holds U+000A"),
        (" org/m", "leading or trailing spaces"),
    ],
)
def test_model_names_follow_the_one_name_rule(tmp_path: Path, name: str, problem: str) -> None:
    _run(tmp_path, model=name)
    with pytest.raises(InputError, match=re.escape(problem)) as exc:
        read_helm_runs(tmp_path, "real_world_qa", "RWQ")
    assert "field 'adapter_spec.model'" in str(exc.value)


def test_an_unknown_metric_says_what_the_runs_hold(tmp_path: Path, capsys) -> None:
    _run(tmp_path / "r")
    code = main(
        [
            "panel", "import-helm", str(tmp_path / "r"), "--scenario", "real_world_qa",
            "--benchmark", "RWQ", "--category", "Image Understanding", "--metric", "nope",
            "--out", str(tmp_path / "P"),
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "no per-instance 'nope'" in err and "exact_match" in err


def _import(runs: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "panel", "import-helm", str(runs), "--scenario", "real_world_qa",
            "--benchmark", "RWQ", "--category", "Image Understanding", "--out", str(out), *extra,
        ]
    )  # fmt: skip


def test_key_panel_errors_name_their_cause(tmp_path: Path, capsys) -> None:
    _run(tmp_path / "r")
    assert _import(tmp_path / "r", tmp_path / "P", "--key-rule", "mcq_inline",
                   "--key-panel", str(tmp_path / "nope")) == 2  # fmt: skip
    assert "not a panel folder (no such folder)" in capsys.readouterr().err
    assert _import(tmp_path / "r", tmp_path / "P", "--key-rule", "mcq_inline",
                   "--key-panel", "openvlm_blink") == 2  # fmt: skip
    assert "panel 'openvlm_blink' holds no items of RWQ" in capsys.readouterr().err


def test_an_append_says_what_the_folder_now_holds(tmp_path: Path, capsys) -> None:
    _run(tmp_path / "r")
    assert _import(tmp_path / "r", tmp_path / "P") == 0
    capsys.readouterr()
    other = tmp_path / "r2"
    _run(other)
    code = main(
        [
            "panel", "import-helm", str(other), "--scenario", "real_world_qa",
            "--benchmark", "RWQ2", "--category", "Image Understanding", "--out", str(tmp_path / "P"),
        ]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "appended to" in out and "2 benchmarks" in out  # the merged panel, not the new rows
