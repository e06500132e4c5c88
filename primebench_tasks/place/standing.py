"""Where a placed model would have stood on the OpenVLM leaderboard (the embedded ``openvlm``
snapshot: 284 VLMs × 8 benchmarks, VLMEvalKit's figures).

Only for a benchmark whose reference panel was scored the way the leaderboard is — VLMEvalKit's
own records (the manifest marks such a benchmark with a ``vlmeval`` entry whose
``reference_runs`` is :data:`VLMEVAL_RECORDS`, or says nothing of them, as the released
``primebench_vlmeval`` suite) — and which the leaderboard has (:data:`LEADERBOARD_COLUMNS`). The
flagship's MathVista and MATH-Vision were run by other harnesses: no standing.
The model's predicted full-benchmark score and its 95 % interval are ranked among the
leaderboard's scores of that benchmark: rank = 1 + the number of leaderboard models with a
higher score, out of N + 1. Approximate by construction: the leaderboard's multiple-choice figures
let a judge model read answers that VLMEvalKit's rules cannot, the records panels here use the
rules alone (so a placed model is, if anything, ranked slightly low).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from primebench_tasks.place.result import Placement
from primebench_tasks.suite.manifest import SuiteManifest

LEADERBOARD = "openvlm"
"""The embedded leaderboard used (``primebench panel info --default openvlm``)."""

LEADERBOARD_COLUMNS = {
    "AI2D_TEST": "AI2D",
    "MMMU_DEV_VAL": "MMMU_VAL",
    "OCRBench": "OCRBench",
    "MathVista_MINI": "MathVista",
    "MMStar": "MMStar",
    "MMBench_V11": "MMBench_V11",
    "HallusionBench": "HallusionBench",
    "MMVet": "MMVet",
}
"""VLMEvalKit dataset → the leaderboard's column for it."""


def leaderboard_rank(value: float, lo: float, hi: float, scores: np.ndarray) -> dict[str, Any]:
    """The rank (1 = best) of a score ``value`` with interval [``lo``, ``hi``] among ``scores``
    (the leaderboard's, NaN left out): ``{"value", "lo", "hi", "out_of"}``, ``lo`` the best rank
    (from ``hi``), ``out_of`` = number of scores + 1."""
    s = np.asarray(scores, dtype=float)
    s = s[np.isfinite(s)]

    def rank(x: float) -> float:
        return float(1 + np.sum(s > x))

    return {"value": rank(value), "lo": rank(hi), "hi": rank(lo), "out_of": int(len(s) + 1)}


VLMEVAL_RECORDS = "VLMEvalKit's records"
"""A manifest's ``vlmeval.reference_runs`` when the benchmark's reference panel is VLMEvalKit's
records (the default for manifests that do not say): only then is a leaderboard standing given."""


def add_leaderboard_standing(
    doc: Placement, manifest: SuiteManifest, leaderboard: Any = None
) -> None:
    """Add ``leaderboard`` (source, snapshot, column, rank) to every benchmark entry of every
    model in the placement ``doc`` that qualifies (see the module docstring); ``leaderboard``:
    a :class:`~primebench_tasks.data.leaderboard.Leaderboard` (default: the embedded one)."""
    columns: dict[str, str] = {}
    for entry in manifest.benchmarks:
        ds = (entry.vlmeval or {}).get("dataset")
        runs = (entry.vlmeval or {}).get("reference_runs", VLMEVAL_RECORDS)
        if ds in LEADERBOARD_COLUMNS and runs == VLMEVAL_RECORDS:
            columns[entry.name] = LEADERBOARD_COLUMNS[ds]
    if not columns:
        return
    if leaderboard is None:
        from primebench_tasks.data.leaderboard import Leaderboard

        leaderboard = Leaderboard.load_default(LEADERBOARD)
    scores = leaderboard.scores
    for r in doc.models.values():
        for b, e in r.benchmarks.items():
            col = columns.get(b)
            full = e.predicted_full
            if col is None or col not in scores.columns or full.value is None:
                continue
            if full.lo is None or full.hi is None:
                continue
            e.leaderboard = {
                "source": leaderboard.name,
                "column": col,
                "models": int(scores[col].notna().sum()),
                "rank": leaderboard_rank(full.value, full.lo, full.hi, scores[col].to_numpy(float)),
            }
