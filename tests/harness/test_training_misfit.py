"""The training callback flags a misfit that appears between checkpoints (#56): a broken
checkpoint or template, not a worse model — said on stderr, kept in ``results`` and logged as
``eval_<prefix>/misfit_benchmarks``; rank-variants names a flagged variant in variants.md."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest

from primebench_tasks.place.misfit import PersonFit
from primebench_tasks.place.responses import ResponseCheck

if TYPE_CHECKING:
    from harness_adapters.engines.vllm.training import CheckpointResult

pytest.importorskip("transformers", reason="needs transformers (the embed or vllm extra)")


def _fit(flagged: bool, worse_than: float = 0.4) -> PersonFit:
    return PersonFit(
        -3.0 if flagged else 0.1, 0.01 if flagged else 0.4, worse_than, 40, 60, 0.01, flagged
    )


def _res(flagged: bool, answers: dict[str, ResponseCheck] | None = None) -> CheckpointResult:
    from harness_adapters.engines.vllm.training import CheckpointResult

    misfit = {"MMMU_DEV_VAL": _fit(flagged, 0.99 if flagged else 0.4), "AI2D_TEST": _fit(False)}
    return CheckpointResult(
        "m+step", 0.5, None, 40, 40, {"Math Reasoning": 0.5}, misfit, answers or {}
    )


def test_a_misfit_that_appears_between_checkpoints_is_said(capsys):
    from harness_adapters.engines.vllm.training import PrimeBenchCallback

    cb = PrimeBenchCallback({}, None, "http://127.0.0.1:1/v1", "m", "/tmp/unused")
    state = SimpleNamespace(log_history=[], global_step=0)
    cb._emit(10, _res(False), state)
    cb._emit(20, _res(True), state)
    cb._emit(30, _res(True), state)  # still flagged: not a new jump
    assert [r.misfit_jumped for r in cb.results] == [[], ["MMMU_DEV_VAL"], []]
    assert [r.misfit_flagged for r in cb.results] == [[], ["MMMU_DEV_VAL"], ["MMMU_DEV_VAL"]]
    assert [r.step for r in cb.results] == [10, 20, 30]
    assert [h["eval_primebench/misfit_benchmarks"] for h in state.log_history] == [0, 1, 1]
    err = capsys.readouterr().err
    assert err.count("warning: checkpoint step 20: its answers on MMMU_DEV_VAL fit") == 1
    assert "step 30" not in err and "not a worse model" in err


def test_a_checkpoint_whose_answers_stop_reading_is_said_with_the_cause(capsys):
    """A checkpoint whose answers the parser cannot read any more (its profile jumps) is said on
    stderr once, with the cause, and counted in ``answers_flagged_benchmarks``."""
    from harness_adapters.engines.vllm.training import PrimeBenchCallback

    flag = "40 % of the answers held no answer the parser could read (fixed limit 5 %)"

    def res(bad: bool) -> CheckpointResult:
        check = ResponseCheck((flag,) if bad else (), not bad, {}, {"basis": "fixed"})
        return _res(False, {"MMMU_DEV_VAL": check})

    cb = PrimeBenchCallback({}, None, "http://127.0.0.1:1/v1", "m", "/tmp/unused")
    state = SimpleNamespace(log_history=[], global_step=0)
    for step, bad in ((10, False), (20, True), (30, True)):
        cb._emit(step, res(bad), state)
    logged = [h["eval_primebench/answers_flagged_benchmarks"] for h in state.log_history]
    assert logged == [0, 1, 1]
    assert [r.answers_flagged for r in cb.results] == [[], ["MMMU_DEV_VAL"], ["MMMU_DEV_VAL"]]
    assert cb.results[1].to_json()["answers"]["MMMU_DEV_VAL"]["flags"] == [flag]
    err = capsys.readouterr().err
    assert err.count(f"warning: checkpoint step 20: MMMU_DEV_VAL: {flag}") == 1
    assert "step 30" not in err


def test_rank_variants_names_the_variant_whose_answers_do_not_fit(tmp_path):
    import copy

    from harness_adapters.run.session import variant_flags
    from tests.place.test_result import _placement

    # a typed placement (report.json is read back as one): m fits, m+a1 is flagged on B
    doc = _placement()
    base = doc.models.pop("m")
    base.benchmarks["B"].misfit = _fit(False)
    flagged = copy.deepcopy(base)
    flagged.benchmarks["B"].misfit = _fit(True, 0.99)
    doc.models.update({"m": base, "m+a1": flagged})
    flagged.suite.answers = ["B: 40 % of the answers held no answer the parser could read (…)"]
    doc.write(tmp_path / "report.json")
    misfit, answers = variant_flags(tmp_path, ["m", "m+a1", "m+a2"])
    assert answers == {"m": [], "m+a1": flagged.suite.answers, "m+a2": []}
    assert misfit == {"m": [], "m+a1": ["B"], "m+a2": []}
    assert variant_flags(tmp_path / "none", ["m"]) == ({"m": []}, {"m": []})


def test_a_variant_flagged_only_by_the_response_check_is_not_called_a_misfit(tmp_path):
    """On 4d9a95b variants.md called every not-comparable variant a "Misfit … broken checkpoint
    or chat template" although the misfit check could not be run there (16 reference models, 49
    needed) and the response check had found the cause: unreadable answers."""
    import copy

    from harness_adapters.run.session import variant_flags
    from tests.place.test_result import _placement

    doc = _placement()
    base = doc.models.pop("m")
    base.benchmarks["B"].misfit = PersonFit(None, None, None, 20, 16, 0.01, False, "16 models")
    base.benchmarks["B"].responses = None
    unreadable = copy.deepcopy(base)
    unreadable.benchmarks["B"].responses = ResponseCheck(("unreadable",), False, {}, {})
    unreadable.suite.answers = ["B: 90 % of the answers held no answer the parser could read"]
    doc.models.update({"m": base, "m+a1": unreadable})
    doc.write(tmp_path / "report.json")
    misfit, answers = variant_flags(tmp_path, ["m", "m+a1"])
    assert misfit == {"m": [], "m+a1": []}
    assert answers["m+a1"] == unreadable.suite.answers
    assert doc.models["m+a1"].flagged_benchmarks() == ["B"]  # flagged, but not a misfit


def test_a_run_of_neighbours_whose_ends_are_separated_says_so():
    import pandas as pd

    from harness_adapters.run.session import _group_text

    names = ["a", "b", "c"]
    p = pd.DataFrame(
        [[0.5, 0.9, 0.998], [0.1, 0.5, 0.9], [0.002, 0.1, 0.5]], index=names, columns=names
    )
    assert _group_text(names, p, 0.975) == "a ≈ b ≈ c (but a is above c: P = 0.998)"
    assert _group_text(names[:2], p, 0.975) == "a ≈ b"
    p.loc["a", "c"] = 0.95
    assert _group_text(names, p, 0.975) == "a ≈ b ≈ c"


def test_a_not_comparable_variant_is_marked_in_the_ranking_table(tmp_path):
    """#79: ranks of not-comparable placements were unmarked in variants.md's table."""
    import copy

    import pandas as pd

    from harness_adapters.run.session import _with_answer_marks
    from tests.place.test_result import _placement

    doc = _placement()
    base = doc.models.pop("m")
    bad = copy.deepcopy(base)
    bad.suite.not_comparable = ["B"]
    doc.models.update({"m": base, "m+a1": bad})
    doc.write(tmp_path / "report.json")
    table = pd.DataFrame({"score": [0.5, 0.4]}, index=pd.Index(["m", "m+a1"], name="variant"))
    shown = _with_answer_marks(table, tmp_path)
    assert list(shown["answers"]) == ["comparable", "not comparable on B"]
