"""Where a placed model stands on a benchmark leaderboard (default: the embedded ``openvlm``
snapshot: 284 VLMs × 8 benchmarks, VLMEvalKit's figures, released to 2025-09; a user's newer
snapshot of the same shape through ``primebench panel import-leaderboard`` and ``place
--leaderboard``).

For every benchmark of the suite that the leaderboard has (:data:`LEADERBOARD_COLUMNS`, by its
VLMEvalKit dataset) the predicted full-benchmark score and its 95 % interval are ranked among the
leaderboard's scores of it — among **all** its models, and among the models of **its own year**
(released in the snapshot's last :data:`RECENT_DAYS` days, the newest release date said): rank =
1 + the number of models with a higher score, out of N + 1, the interval's ends giving the rank
interval. The suite gets the same two ranks on the mean of the leaderboard's benchmarks it holds
(models that report every one of them).

The leaderboard's figures are VLMEvalKit's. A benchmark whose reference panel was scored by
another harness (the flagship's MathVista: M3IRT's runs; MATH-Vision is not on the leaderboard)
is ranked too, with the harness named and the caveat that its scores may sit at an offset from
VLMEvalKit's. Approximate by construction even for VLMEvalKit's records: the leaderboard's
multiple-choice figures let a judge model read answers that VLMEvalKit's rules cannot, the
records panels here use the rules alone (so a placed model is, if anything, ranked slightly
low).
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


DESIGN_ONLY_HARNESS = "the run's own harness (a design-only benchmark: no reference runs)"
"""The ``harness`` a design-only benchmark's standing names (#72)."""

RECENT_DAYS = 365
"""A model "of its own year": released within this many days before the snapshot's newest
release."""


def _recent(leaderboard: Any) -> tuple[str | None, np.ndarray]:
    """The snapshot's newest release date (ISO) and which of its models (in ``scores`` order)
    were released within :data:`RECENT_DAYS` days before it (all False without dates)."""
    import pandas as pd

    dates = pd.to_datetime(
        leaderboard.models.set_index("model")["release_date"].reindex(leaderboard.scores.index),
        errors="coerce",
    )
    if dates.notna().sum() == 0:
        return None, np.zeros(len(dates), bool)
    newest = dates.max()
    since = newest - pd.Timedelta(days=RECENT_DAYS)
    return newest.date().isoformat(), (dates > since).to_numpy()


def _standing(
    value: float, lo: float, hi: float, scores: np.ndarray, recent: np.ndarray
) -> dict[str, Any]:
    out = {"rank": leaderboard_rank(value, lo, hi, scores)}
    if recent.any():
        out["recent_rank"] = leaderboard_rank(value, lo, hi, scores[recent])
    return out


def add_leaderboard_standing(
    doc: Placement, manifest: SuiteManifest, leaderboard: Any = None
) -> None:
    """Add ``leaderboard`` (source, snapshot hash, newest release, column, harness, rank among
    all and among the models of its own year) to every benchmark entry of every model in the
    placement ``doc`` that the leaderboard has, and the same on the suite (``rank_basis``-like
    record ``leaderboard``: the mean over those benchmarks); see the module docstring.
    ``leaderboard``: a :class:`~primebench_tasks.data.leaderboard.Leaderboard` (default: the
    embedded one)."""
    columns: dict[str, str] = {}
    harness: dict[str, str] = {}
    for entry in manifest.benchmarks:
        ds = (entry.vlmeval or {}).get("dataset")
        if ds in LEADERBOARD_COLUMNS:
            columns[entry.name] = LEADERBOARD_COLUMNS[ds]
            harness[entry.name] = str((entry.vlmeval or {}).get("reference_runs", VLMEVAL_RECORDS))
    for d in manifest.design_only:
        if d.vlmeval_dataset in LEADERBOARD_COLUMNS:
            columns[d.name] = LEADERBOARD_COLUMNS[d.vlmeval_dataset]
            harness[d.name] = DESIGN_ONLY_HARNESS
    if not columns:
        return
    if leaderboard is None:
        from primebench_tasks.data.leaderboard import Leaderboard

        leaderboard = Leaderboard.load_default(LEADERBOARD)
    scores = leaderboard.scores
    columns = {b: c for b, c in columns.items() if c in scores.columns}
    newest, recent = _recent(leaderboard)
    snapshot = {
        "source": leaderboard.name,
        "content_hash": leaderboard.content_hash,
        "newest_release": newest,
        "recent_days": RECENT_DAYS,
    }
    for r in doc.models.values():
        placed: dict[str, tuple[float, float, float]] = {}
        placed_on: list[tuple[str, Any]] = [*r.benchmarks.items(), *r.design_only.items()]
        for b, e in placed_on:
            col = columns.get(b)
            full = e.predicted_full
            if col is None or full.value is None or full.lo is None or full.hi is None:
                continue
            placed[b] = (full.value, full.lo, full.hi)
            col_scores = scores[col].to_numpy(float)
            have = np.isfinite(col_scores)
            e.leaderboard = {
                **snapshot,
                "column": col,
                "models": int(have.sum()),
                "recent_models": int((have & recent).sum()),
                **_standing(full.value, full.lo, full.hi, col_scores, recent & have),
                **(
                    {}
                    if harness[b] == VLMEVAL_RECORDS
                    else {
                        "harness": harness[b],
                        "caveat": (
                            "its score was estimated from the run's own answers, scored by the "
                            "upstream lmms-eval task, not by the leaderboard's VLMEvalKit: it "
                            "may sit at an offset from the leaderboard's"
                            if harness[b] == DESIGN_ONLY_HARNESS
                            else "its reference runs were scored by another harness than the "
                            "leaderboard's VLMEvalKit: its scores may sit at an offset from the "
                            "leaderboard's"
                        ),
                    }
                ),
            }
        if len(placed) >= 2:
            cols = [columns[b] for b in placed]
            mean = scores[cols].mean(axis=1, skipna=False).to_numpy(float)
            have = np.isfinite(mean)
            value, lo, hi = (float(np.mean([v[k] for v in placed.values()])) for k in range(3))
            r.suite.leaderboard = {
                **snapshot,
                "benchmarks": list(placed),
                "columns": cols,
                "models": int(have.sum()),
                "recent_models": int((have & recent).sum()),
                **_standing(value, lo, hi, mean, recent & have),
            }
