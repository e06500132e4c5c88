"""#73: the adaptive run as a typed document — ``adaptive.json`` reads back as an
:class:`AdaptiveRun` and writes byte-identically, version 1 still reads (no design, no guard),
and a file of another shape is refused naming the file and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from primebench_tasks.adaptive.policy import AdaptivePolicy
from primebench_tasks.adaptive.result import (
    SCHEMA,
    AdaptiveModel,
    AdaptiveRun,
    AdaptiveSettings,
    AdaptiveTest,
    FailedItems,
    TestDesign,
)
from primebench_tasks.errors import InputError
from primebench_tasks.place.misfit import PersonFit
from primebench_tasks.place.result import Estimate, Rank

WRITTEN = Path(__file__).resolve().parents[1] / "fixtures" / "adaptive_run_v2.json"
BENCH = "MATH-Vision_MINI"


def test_a_written_run_reads_back_and_writes_byte_identically(tmp_path):
    run = AdaptiveRun.read(WRITTEN)
    assert run.schema == SCHEMA and run.settings == AdaptiveSettings(0.99, 100, 5)
    t = run.models["m"].benchmarks[BENCH]
    assert t.items == 5 and t.pool == 304 and t.predicted_rank == Rank(16, 4, 16, 16)
    assert t.design is not None and t.design.guard_moved and t.design.draws == 5
    assert t.misfit.p_value is None and t.misfit.why_not.startswith("5 answered items")
    assert t.responses is not None and t.responses.comparable
    assert run.guard is not None and run.guard.k == 0.5
    assert run.write(tmp_path / "adaptive.json").read_bytes() == WRITTEN.read_bytes()


def test_a_version_1_run_still_reads():
    """Before #71 a test had no design estimate and the run no guard; its policy record lacks
    the knobs added since."""
    d = json.loads(WRITTEN.read_text())
    d["schema"] = "primebench.adaptive/1"
    del d["guard"]
    del d["policy"]["beyond_weight"]
    for m in d["models"].values():
        for t in m["benchmarks"].values():
            del t["design"], t["responses"]
    run = AdaptiveRun.from_json(d)
    t = run.models["m"].benchmarks[BENCH]
    assert run.guard is None and t.design is None and t.responses is None
    assert run.policy.beyond_weight == AdaptivePolicy().beyond_weight
    assert run.to_json()["models"] == d["models"] and run.schema == "primebench.adaptive/1"


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda d: d.update(schema="primebench.placement/1"), "schema 'primebench.placement/1'"),
        (lambda d: d["models"]["m"]["benchmarks"][BENCH].pop("items"), "items': .*is missing"),
        (lambda d: d["models"]["m"]["benchmarks"][BENCH].update(interval_width="0.1"), "number"),
        (lambda d: d["models"]["m"].update(misfit="MMMU"), "'models.m.misfit': .*not a list"),
        (lambda d: d["policy"].update(choice="the best"), "choice must be one of"),
        (lambda d: d.update(conditions=["vllm"]), "'conditions': .*not an object"),
    ],
)
def test_a_file_of_another_shape_is_refused_naming_it(tmp_path, edit, message):
    d = json.loads(WRITTEN.read_text())
    edit(d)
    p = tmp_path / "adaptive.json"
    p.write_text(json.dumps(d))
    with pytest.raises(InputError, match=rf"adaptive\.json\b.*{message}"):
        AdaptiveRun.read(p)


def _test(items: int, value: float | None, failed: int = 0) -> AdaptiveTest:
    fit = PersonFit(None, None, None, items, 15, 0.02, False, why_not="few items")
    return AdaptiveTest(
        "c", 300, 15, items, "item budget (5) spent", value, Estimate(value, value, value),
        None if value is None else 0.0, None if value is None else "interior",
        None if value is None else Rank(3, 2, 4, 16), False,
        FailedItems(failed, "2 items failed: timeout" if failed else None), fit,
        TestDesign(items, 0, False, value, None, value, False),
    )  # fmt: skip


def test_the_mean_and_the_failures_by_hand():
    """The mean predicted full score over benchmarks, None where one has none; a test with
    failed items is said, one with nothing scored makes the command fail."""
    m = AdaptiveModel.of({"A": _test(5, 0.2), "B": _test(5, 0.5)}, [], [])
    assert m.mean_predicted_full == 0.35 and m.items == 10
    none = AdaptiveModel.of({"A": _test(5, 0.2), "B": _test(0, None, failed=2)}, [], [])
    assert none.mean_predicted_full is None and none.items == 5
    run = AdaptiveRun("v", "s", AdaptiveSettings(), AdaptivePolicy(), {"m": m, "m+a": none})
    some, nothing = run.failures()
    assert some == ["m+a on B: 2 items failed: timeout"]
    assert nothing == ["m+a on B: no item scored (item budget (5) spent; 2 items failed: timeout)"]
    back = AdaptiveRun.from_json(copy.deepcopy(run.to_json()))
    assert back == run and "answers" not in run.to_json()["models"]["m"]
