"""Per-item scores from what an upstream lmms-eval task's ``process_results`` returns.

Most real upstream tasks return, per item, a *dict* meant for an aggregation function (MMMU:
the parsed prediction and the gold answer, scored only at aggregation; MathVista: the extraction
and a ``true_false`` verdict; BLINK: the parsed letter and ``is_correct``). A scorer turns that
value into the item's score in [0, 1] by the upstream scoring code itself — MMMU's
``evaluate_mmmu`` on the one sample — or by reading the verdict the upstream code has already
computed; nothing is re-implemented. A scorer is ``(value, module) -> float | None`` where
``module`` is the upstream task's own module (the one holding its ``process_results``), so the
scorer uses the very code that lmms-eval runs. None means "no score" (left out, never 0).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

ItemScorer = Callable[[Any, ModuleType], float | None]


class NoItemScore(ValueError):
    """An upstream value that no registered scorer can turn into an item score."""


def _verdict(field: str) -> ItemScorer:
    def score(value: Any, module: ModuleType) -> float | None:
        if not isinstance(value, dict) or field not in value:
            raise NoItemScore(f"expected a dict with {field!r}, got {type(value).__name__}")
        return _truth(value[field], field)

    return score


def _truth(v: Any, field: str) -> float | None:
    """A verdict as the upstream code writes it — a bool (numpy's too), or 0/1 — as 1.0/0.0;
    None or NaN: no verdict (None, left out). Anything else (a string such as ``"False"``,
    whose truth value is True; another number) is refused, never read as its truth value."""
    import numbers

    if v is None:
        return None
    if isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral) and v != v:
        return None
    if hasattr(v, "dtype") and getattr(v, "shape", None) == ():
        v = v.item()  # a numpy scalar
    if isinstance(v, bool) or (isinstance(v, (int, float)) and v in (0, 1)):
        return float(v)
    raise NoItemScore(f"{field} is {v!r} ({type(v).__name__}), not a verdict (true/false, 1/0)")


MMMU_FIELDS = ("id", "answer", "parsed_pred", "question_type")
"""What upstream ``evaluate_mmmu`` reads of a per-item dict."""


def score_mmmu(value: Any, module: ModuleType) -> float | None:
    """MMMU: the upstream ``evaluate_mmmu`` on this one sample (multiple choice: the parsed
    letter against the answer; open: upstream ``eval_open`` over the parsed candidates)."""
    if not isinstance(value, dict):
        raise NoItemScore(f"expected MMMU's per-item dict, got {type(value).__name__}")
    lacking = [k for k in MMMU_FIELDS if k not in value]
    if lacking:
        raise NoItemScore(f"MMMU's per-item dict lacks {', '.join(lacking)}")
    if not isinstance(value["parsed_pred"], list):
        raise NoItemScore(
            f"parsed_pred is {type(value['parsed_pred']).__name__}, not the upstream list"
        )
    judge, _ = module.evaluate_mmmu([value])
    return float(judge[value["id"]] == "Correct")


def score_number(lo: float, hi: float) -> ItemScorer:
    """A plain number (or bool) per item, scaled from the metric's range [lo, hi] to [0, 1]."""

    def score(value: Any, module: ModuleType) -> float | None:
        if isinstance(value, bool):
            value = float(value)
        if isinstance(value, dict):
            raise NoItemScore(
                "the upstream metric is a dict for an aggregation function and "
                "no item scorer is registered for this task"
            )
        if not isinstance(value, (int, float)) or value != value:
            return None
        return (float(value) - lo) / (hi - lo)

    return score


ITEM_SCORERS: dict[str, tuple[str, ItemScorer]] = {
    "mathvista": ("llm_as_judge_eval", _verdict("true_false")),
    "mmmu": ("mmmu_acc", score_mmmu),
    "blink": ("blink_acc", _verdict("is_correct")),
    "ocrbench": ("ocrbench_accuracy", _verdict("score")),
    "mmstar": ("average", _verdict("score")),
    "pope": ("pope_accuracy", _verdict("score")),
}
"""Scorer name → (the upstream metric whose per-item value it reads, the scorer)."""
