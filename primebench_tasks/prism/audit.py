"""Cross-judge audit (PRISM-VLM §3, §5.3, App. C): S = 200 items per axis, drawn without
replacement, are re-graded by a second judge J′; per axis, the Spearman ρ between the model
leaderboards under the two judges (axis means over the same items) decides admission into
PScore (ρ ≥ 0.95)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from primebench_tasks.metrics import spearman

S = 200
ADMISSION_RHO = 0.95


def audit_sample(
    keys: Mapping[str, Sequence[tuple[str, str]]], s: int = S, seed: int = 0
) -> dict[str, list[tuple[str, str]]]:
    """Per axis: min(s, n) of its item keys without replacement (``default_rng(seed)``), in
    sorted order."""
    rng = np.random.default_rng(seed)
    out = {}
    for axis in sorted(keys):
        ks = sorted(keys[axis])
        pick: np.ndarray | list[int] = (
            rng.choice(len(ks), size=min(s, len(ks)), replace=False) if ks else []
        )
        out[axis] = sorted(ks[int(i)] for i in pick)
    return out


def _means(graded: pd.DataFrame) -> pd.DataFrame:
    return graded.groupby(["axis", "model"])["score"].mean().unstack("model")


def audit_table(
    main: pd.DataFrame,
    audit: pd.DataFrame,
    graders: Mapping[str, str],
    threshold: float = ADMISSION_RHO,
) -> pd.DataFrame:
    """One row per axis: the grader of each judge, items audited, Spearman ρ of the two model
    leaderboards on the audited items, and whether the axis is admitted (ρ ≥ ``threshold``;
    undefined with fewer than 3 models or a constant leaderboard)."""
    keys = audit[["axis", "benchmark", "item_id"]].drop_duplicates()
    on = main.merge(keys, on=["axis", "benchmark", "item_id"])
    a, b = _means(on), _means(audit)
    rows = []
    for axis in keys["axis"].unique():
        x = a.loc[axis].dropna()
        y = b.loc[axis].dropna() if axis in b.index else pd.Series(dtype=float)
        common = x.index.intersection(y.index)
        rho = spearman(x[common].to_numpy(), y[common].to_numpy())
        rows.append(
            {
                "axis": axis,
                "grader": graders.get(axis, "?"),
                "n_items": int((keys["axis"] == axis).sum()),
                "n_models": len(common),
                "spearman_rho": rho,
                "admitted": None if rho != rho else bool(rho >= threshold),
            }
        )
    return pd.DataFrame(rows)
