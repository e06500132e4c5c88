"""How the adaptive test's policy — item choice and predictor — was chosen (issue #29): a committed
procedure with leave-one-panel-out evidence, as for the selector.

    python research/adaptive/adaptive_choice.py            # replay every candidate (~29 min, 2 cores)
    python research/adaptive/adaptive_choice.py --render   # the table from the committed CSV

Candidates (:data:`CANDIDATES`, :class:`~primebench_tasks.adaptive.policy.AdaptivePolicy`):
maximum Fisher information at the current ability (Fluid Benchmarking) with p-IRT, with the
blend of p-IRT and a ridge regression (the earlier default, itself chosen by this procedure among
10 Fisher-choice predictors × ridge penalties — git history of this file), and with the regime
blend; and the locally weighted linear-Gaussian model
(:mod:`~primebench_tasks.adaptive.local_gaussian`) choosing the items that most reduce the full
score's posterior variance, predicting by the mean of p-IRT and its kriging (``local_blend``), or
only where p-IRT places the model inside the reference panel and the Fisher choice with the blend
at the top or beyond it (``regime_local`` / ``regime``), for each bandwidth of
:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_BANDWIDTHS` and answer-agreement weight of
:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_AGREEMENTS` — and, at h = 0.5 and λ = 0.15,
with p-IRT's weight in the local blend lowered from ½ to each other weight of
:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_PIRT_WEIGHTS` (more of the kriging), and at
each of these weights with the calibrated point moved by its regime's median error only at the
top of the panel or beyond it (:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_SHIFTS`:
``outside``; every other candidate moves it everywhere); and at h = 0.5, λ = 0.15, w = ¼ with each
other α of :data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_RIDGE_ALPHAS` — the local model's
noise variance and the blend's ridge penalty at the top or beyond the panel (10 for every other
candidate; the candidates before these are the earlier rounds' and come first, in their order, so
their rows repeat, to the CSV's precision); rounds of
:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_BATCH` items for all. Each is replayed
(:func:`~primebench_tasks.adaptive.replay.replay`, its own calibration) on every replay panel of
``benchmarks/adaptive_replay.py`` — AutoJudger's AI2D and MMMU, the held-out VLMEvalKit records of
BLINK, OCRBench and RealWorldQA — on 3 random hold-outs (20 %) and the frontier hold-out (the
strongest 15 %), at 25 / 50 / 100 items; its score in a cell is its MAE over the static default
suite's MAE at the same number of items (the default selector and estimator on the build models).
Every candidate is replayed with the earlier point rule at the top of the panel (the regime's
median error: ``nearest_shift=None``) — the policy was chosen before the rule that now moves the
point there (``adaptive_top_shift.py``, chosen for this policy), so the table reproduces.

The choice: a candidate's loss on a set of panels is the mean log MAE ratio over their cells
(random and frontier, every item count). **Leave one panel out**: for each panel, the candidate
with the least loss on the other four, scored on the left-out panel — the evidence that the rule
chooses well on a panel it did not see. The default
(:class:`~primebench_tasks.adaptive.policy.AdaptivePolicy`'s defaults) is the candidate chosen
on all five; a test checks it is the one this table names.

Writes ``research/adaptive/results/adaptive_choice.csv`` (one row per panel, hold-out, split, items and
candidate) and ``adaptive_choice.md`` (included in docs/results.md).
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # adaptive_replay
sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = Path(__file__).resolve().parent / "results"
"""This investigation's tables (the docs include them)."""

from adaptive_replay import (  # noqa: E402
    BLEND_POLICY,
    CHECKPOINTS,
    benchmarks,
    hold_out,
    static_prediction,
)
from candidates import (  # noqa: E402
    ADAPTIVE_AGREEMENTS,
    ADAPTIVE_BANDWIDTHS,
    ADAPTIVE_PIRT_WEIGHTS,
    ADAPTIVE_RIDGE_ALPHAS,
)

from primebench_tasks.adaptive.defaults import ADAPTIVE_SHIFTS  # noqa: E402
from primebench_tasks.adaptive.policy import AdaptivePolicy  # noqa: E402
from primebench_tasks.adaptive.replay import replay  # noqa: E402
from primebench_tasks.progress import progress_bar  # noqa: E402

SPLITS = (("random", (0, 1, 2)), ("frontier", (0,)))
_ALPHA = ADAPTIVE_RIDGE_ALPHAS[1]
"""The ridge penalty / local noise variance α of every candidate but α's own (10: the Fisher-choice
predictors' chosen penalty in an earlier round of this procedure — git history)."""
_LOCAL = {"ridge_alpha": _ALPHA, "bandwidth": ADAPTIVE_BANDWIDTHS[0]}
_HALF = ADAPTIVE_PIRT_WEIGHTS[0]
"""p-IRT's weight in the local blend of every candidate but the weight's own."""
_ALL = ADAPTIVE_SHIFTS[0]
"""Where the point moves by its regime's median error, for every candidate but the shift's own:
everywhere."""
CANDIDATES = tuple(
    replace(policy, beyond_weight=BLEND_POLICY.beyond_weight)  # chosen before the weight beyond
    for policy in (
        AdaptivePolicy("pirt", "fisher", shift=_ALL),
        AdaptivePolicy("blend", "fisher", _ALPHA, shift=_ALL),
        AdaptivePolicy("regime_blend", "fisher", _ALPHA, shift=_ALL),
        AdaptivePolicy(
            "local_blend",
            "local",
            agreement=ADAPTIVE_AGREEMENTS[-1],
            pirt_weight=_HALF,
            shift=_ALL,
            **_LOCAL,
        ),
        *(
            AdaptivePolicy(
                "regime_local",
                "regime",
                agreement=g,
                ridge_alpha=_ALPHA,
                bandwidth=h,
                pirt_weight=_HALF,
                shift=_ALL,
            )
            for h in ADAPTIVE_BANDWIDTHS
            for g in ADAPTIVE_AGREEMENTS
        ),
        *(  # every other weight and shift at h = 0.5, λ = 0.15 (½ and "all" are the grid's above)
            AdaptivePolicy(
                "regime_local",
                "regime",
                agreement=ADAPTIVE_AGREEMENTS[-1],
                pirt_weight=w,
                shift=shift,
                **_LOCAL,
            )
            for shift in ADAPTIVE_SHIFTS
            for w in ADAPTIVE_PIRT_WEIGHTS
            if (w, shift) != (_HALF, _ALL)
        ),
        *(  # every other α at h = 0.5, λ = 0.15, w = ¼, shift everywhere
            AdaptivePolicy(
                "regime_local",
                "regime",
                ridge_alpha=a,
                bandwidth=ADAPTIVE_BANDWIDTHS[0],
                agreement=ADAPTIVE_AGREEMENTS[-1],
                pirt_weight=ADAPTIVE_PIRT_WEIGHTS[-1],
                shift=_ALL,
            )
            for a in ADAPTIVE_RIDGE_ALPHAS
            if a != _ALPHA
        ),
    )
)
"""The policies compared (``label`` names them in the table)."""
BASELINE = CANDIDATES[0].label
"""p-IRT with the Fisher choice (Fluid Benchmarking), shown beside the choice in the table."""


def measure(name: str, X: np.ndarray, protocol: str, seed: int) -> list[dict]:
    """Every candidate's and the static suite's MAE on one hold-out of one panel."""
    held, build = hold_out(X, protocol, seed)
    true = np.nanmean(X[held], axis=1)
    static = {}
    for k in CHECKPOINTS:
        static[k] = float(np.mean(np.abs(static_prediction(X[build], X[held], k, seed) - true)))
    rows = []
    for policy in CANDIDATES:
        # the policy was chosen first, under the earlier point rule at the top of the panel
        # (the regime's median error); the nearest-rows rule was chosen after it, for the
        # chosen policy (adaptive_top_shift.py)
        r = replay(
            X[build], X[held], CHECKPOINTS, seed=seed, policy=policy, nearest_shift=None,
            design="item_model",
        )  # fmt: skip
        for j, k in enumerate(CHECKPOINTS):
            rows.append(
                {
                    "panel": name,
                    "protocol": protocol,
                    "split": seed,
                    "items": k,
                    "predictor": policy.label,
                    "mae": float(np.mean(np.abs(r["predicted"][:, j] - r["true"]))),
                    "static_mae": static[k],
                }
            )
    return rows


def cells(df: pd.DataFrame) -> pd.DataFrame:
    """Per panel, hold-out, item count and candidate: the MAE ratio to the static suite (random
    splits averaged first)."""
    g = df.groupby(["panel", "protocol", "items", "predictor"], sort=False)[["mae", "static_mae"]]
    out = g.mean().reset_index()
    out["ratio"] = out["mae"] / out["static_mae"]
    return out


def loss(c: pd.DataFrame, panels: list[str]) -> pd.Series:
    """Each candidate's mean log MAE ratio over the cells of ``panels``."""
    sub = c[c["panel"].isin(panels)]
    return (
        np.log(sub["ratio"]).groupby(sub["predictor"]).mean().reindex([c.label for c in CANDIDATES])
    )


def choose(c: pd.DataFrame, panels: list[str]) -> str:
    """The candidate of least :func:`loss` on ``panels`` (ties → the earlier candidate)."""
    lo = loss(c, panels)
    return str(lo.idxmin())


def render(df: pd.DataFrame) -> str:
    c = cells(df)
    panels = list(dict.fromkeys(c["panel"]))
    overall = choose(c, panels)
    lines = [
        "Generated by `python research/adaptive/adaptive_choice.py` (every candidate replayed with its "
        "own calibration; 3 random hold-outs and the frontier hold-out per panel; MAE ratio to "
        "the static default suite at the same number of items, 25 / 50 / 100). Chosen on the "
        "other four panels, scored on the one left out:",
        "",
        "| left-out panel | chosen on the others | random: ratio at 25 / 50 / 100 "
        "(p-IRT + Fisher) | frontier: ratio at 25 / 50 / 100 (p-IRT + Fisher) |",
        "|---|---|---|---|",
    ]
    agree = 0
    for p in panels:
        pick = choose(c, [q for q in panels if q != p])
        agree += pick == overall

        def ratios(protocol: str, predictor: str, p: str = p) -> str:
            sub = c[(c["panel"] == p) & (c["protocol"] == protocol)]
            sub = sub[sub["predictor"] == predictor].sort_values("items")
            return " / ".join(f"{r:.2f}" for r in sub["ratio"])

        lines.append(
            f"| {p} | `{pick}` | {ratios('random', pick)} ({ratios('random', BASELINE)}) | "
            f"{ratios('frontier', pick)} ({ratios('frontier', BASELINE)}) |"
        )
    lo = loss(c, panels)
    lines += [
        "",
        f"Chosen on all five panels: **`{overall}`** (mean log ratio "
        + ", ".join(f"`{k}` {v:+.3f}" for k, v in lo.items())
        + f"); the leave-one-panel-out choice agrees on {agree} of {len(panels)} panels.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--render", action="store_true", help="the table from the committed CSV")
    ap.add_argument("--workers", type=int, default=2, help="hold-outs replayed in parallel")
    args = ap.parse_args()
    csv = RESULTS / "adaptive_choice.csv"
    if not args.render:
        jobs = [(n, X, p, s) for n, X in benchmarks() for p, seeds in SPLITS for s in seeds]
        done: dict[int, list[dict]] = {}
        with (
            ProcessPoolExecutor(args.workers) as pool,
            progress_bar(len(jobs), "adaptive choice", unit="hold-out") as bar,
        ):
            futures = {pool.submit(measure, *job): j for j, job in enumerate(jobs)}
            for f in as_completed(futures):
                done[futures[f]] = f.result()
                bar.update(1)
        rows = [r for j in range(len(jobs)) for r in done[j]]  # the jobs' order, not finishing
        pd.DataFrame(rows).to_csv(csv, index=False, float_format="%.6f")
    text = render(pd.read_csv(csv))
    (RESULTS / "adaptive_choice.md").write_text(text, encoding="utf-8")
    print(text)
    chosen = choose(cells(pd.read_csv(csv)), list(dict.fromkeys(pd.read_csv(csv)["panel"])))
    default = replace(AdaptivePolicy(), beyond_weight=BLEND_POLICY.beyond_weight).label
    if chosen != default:
        print(f"note: the procedure chooses {chosen!r}; the default is {default!r}")


if __name__ == "__main__":
    main()
