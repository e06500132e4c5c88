"""Per-item scorers of upstream lmms-eval values, by hand (#54: ``is_correct: "False"`` and
``NaN`` scored 1.0 through ``float(bool(v))``; an MMMU dict without ``answer`` was a KeyError
traceback). MMMU is scored by the installed lmms-eval's own ``evaluate_mmmu``."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from harness_adapters.lmms_eval_upstream.item_scorers import ITEM_SCORERS, NoItemScore
from tests.extras import requires

blink = ITEM_SCORERS["blink"][1]
mathvista = ITEM_SCORERS["mathvista"][1]


@pytest.mark.parametrize(
    ("verdict", "score"),
    [(True, 1.0), (False, 0.0), (1, 1.0), (0, 0.0), (np.bool_(True), 1.0), (np.bool_(False), 0.0)],
)
def test_a_verdict_scores_as_written(verdict, score):
    assert blink({"is_correct": verdict}, None) == score
    assert mathvista({"true_false": verdict}, None) == score


@pytest.mark.parametrize("missing", [None, float("nan"), np.float64("nan")])
def test_no_verdict_is_no_score_never_one(missing):
    assert blink({"is_correct": missing}, None) is None


@pytest.mark.parametrize("bad", ["False", "True", "", 0.5, 2, [True]])
def test_anything_else_is_refused_by_name(bad):
    with pytest.raises(NoItemScore, match=r"^is_correct is .* not a verdict"):
        blink({"is_correct": bad}, None)


@requires("lmms", "lmms_eval")
def test_mmmu_by_the_upstream_code_and_a_dict_lacking_a_field_is_refused():
    module = importlib.import_module("lmms_eval.tasks.mmmu.utils")
    score = ITEM_SCORERS["mmmu"][1]
    right = {"id": "v_1", "question_type": "multiple-choice", "answer": "B", "parsed_pred": ["B"]}
    assert score(right, module) == 1.0
    assert score({**right, "parsed_pred": ["C"]}, module) == 0.0
    lacking = {k: v for k, v in right.items() if k != "answer"}
    with pytest.raises(NoItemScore, match="lacks answer"):
        score(lacking, module)
    with pytest.raises(NoItemScore, match="parsed_pred is str"):
        score({**right, "parsed_pred": "B"}, module)
