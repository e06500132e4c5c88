"""Range checks of the numeric options of every command (plugins' included)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the numerical stack is imported by the commands, not by --help
    pass


def number_type(
    kind: type, lo: float | None = None, hi: float | None = None, lo_open: bool = False
) -> Callable[[str], Any]:
    """An argparse type: a finite ``kind`` within [lo, hi] (``lo_open``: (lo, hi])."""

    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        below = lo is not None and (v <= lo if lo_open else v < lo)
        if below or (hi is not None and v > hi):
            low = "" if lo is None else f"{'>' if lo_open else '>='} {lo}"
            high = "" if hi is None else f"<= {hi}"
            raise argparse.ArgumentTypeError(
                f"{v} is out of range (must be {' and '.join(x for x in (low, high) if x)})"
            )
        return v

    return parse


POSITIVE_OPTIONS = frozenset(
    {
        "scale", "models", "splits", "n", "budget", "batch", "threads", "random_suites", "k",
        "audit_items", "n_boot", "waves", "replicas", "concurrency", "tp", "max_model_len",
        "max_lora_rank", "max_loras", "max_num_seqs", "batch_size", "max_new_tokens",
        "tensor_parallel_size", "min_blind_models", "judge_timeout", "timeout",
        "cpus_per_replica", "max_items", "round_size", "rank", "adapters",
    }
)  # fmt: skip
"""Numeric options (by dest) that must be > 0; every other int/float option must be ≥ 0."""
UPPER_BOUNDS = {
    "max_unanswered": 1.0,
    "max_unscored": 1.0,
    "missing": 0.99,
    "gpu_memory_utilization": 1.0,
    "max_drop": 1.0,
    "min_gain": 1.0,
    "min_percentile": 100.0,
    "start": 1.0,
}
"""Numeric options (by dest) with an upper bound."""
LOWER_BOUNDS = {"n_boot": 20}
"""Numeric options (by dest) with a lower bound above 0: fewer bootstrap resamples than 20 give
no 95 % interval, only one or two resamples' extremes (``place.defaults.MIN_N_BOOT``)."""


def range_check_numeric_options(parser: argparse.ArgumentParser) -> None:
    """Give every plain ``int``/``float`` option of ``parser`` and its sub-commands (plugins'
    included) a range-checked type: finite, ≥ 0 (> 0 for :data:`POSITIVE_OPTIONS`), ≥ its
    :data:`LOWER_BOUNDS` and ≤ its :data:`UPPER_BOUNDS`. A new command's options are covered when it is added
    (``tests/hostile/test_options.py`` walks the parser)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                range_check_numeric_options(sub)
        elif action.type in (int, float):
            kind = action.type
            action.type = number_type(
                kind,
                LOWER_BOUNDS.get(action.dest, 0),
                UPPER_BOUNDS.get(action.dest),
                lo_open=(action.dest in POSITIVE_OPTIONS or action.dest == "start")
                and action.dest not in LOWER_BOUNDS,
            )
            action.type.__name__ = kind.__name__


def item_counts(text: str | None, flag: str) -> list[int]:
    """A comma list of item counts ``text`` (each an integer ≥ 1; none: an empty list), refused
    with an error naming ``flag``."""
    from primebench_tasks.errors import PrimeBenchError

    parse = number_type(int, 1)
    if text is not None and not text.strip():
        raise PrimeBenchError(f"{flag} is empty; leave it out for the defaults")
    try:
        return [parse(x) for x in (text or "").split(",") if x.strip()]
    except argparse.ArgumentTypeError as exc:
        raise PrimeBenchError(f"{flag}: {exc}") from None


REPLACE_HELP = (
    "the --out folder holds a panel: write this one in its place (its data is removed); "
    "without it the new benchmarks are appended to it, and one it already holds is refused"
)
"""``--replace`` of every command that writes a whole new panel
(:func:`~primebench_tasks.data.importers.save_imported_panel`)."""


def score_range(text: str) -> tuple[float, float]:
    """An argparse type: ``LO,HI`` — two finite numbers, LO < HI (``panel import
    --score-range``)."""
    parts = text.split(",")
    try:
        lo, hi = (float(x) for x in parts) if len(parts) == 2 else (math.nan, math.nan)
    except ValueError:
        lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not LO,HI (two finite numbers, LO < HI, e.g. 0,100)"
        )
    return lo, hi


def name_text(text: str) -> str:
    """An argparse type for a name stored in a panel or a run (a benchmark, a model, a run
    name): non-empty, no leading or trailing space, no control character, no path separator —
    refused, never stripped or renamed."""
    bad = [c for c in text if ord(c) < 32 or ord(c) == 127]
    if not text.strip():
        raise argparse.ArgumentTypeError("a name must not be empty")
    if text != text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} has leading or trailing spaces")
    if bad:
        raise argparse.ArgumentTypeError(f"{text!r} holds a control character")
    if "/" in text or "\\" in text or text in (".", ".."):
        raise argparse.ArgumentTypeError(f"{text!r} is not a name (a path separator or dots)")
    return text
