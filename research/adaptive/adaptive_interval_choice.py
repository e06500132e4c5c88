"""How the adaptive test's interval calibration was chosen (issue #29): a committed procedure with
leave-one-panel-out evidence, as for its policy (``research/adaptive/adaptive_choice.py``).

    python research/adaptive/adaptive_interval_choice.py            # replay (~15 min, 2 cores)
    python research/adaptive/adaptive_interval_choice.py --render   # the table from the committed CSV

Candidates (:data:`CANDIDATES`): the random folds of the calibration (5, the earlier default, or
10: each fold's 2PL fits on (k − 1)/k of the reference models where the deployed test fits on all
of them) × whether, at the top of the panel, the interval's hull also holds the frontier folds'
own interval (``frontier_at_top`` of :class:`~primebench_tasks.adaptive.benchmark.AdaptiveBenchmark`).
Neither changes which items are asked, only the interval and the median shift of the point, so
each hold-out's test is replayed once with the default policy (uncalibrated predictions after
every round, up to 100 items) and every candidate's calibration is applied to those predictions
through :meth:`~primebench_tasks.adaptive.benchmark.AdaptiveBenchmark.interval`; the stopping rule
is ``primebench run --adaptive``'s default (the 90 % interval narrower than 0.1, at most 100 items).
Panels and hold-outs are ``benchmarks/adaptive_replay.py``'s: AutoJudger's AI2D and MMMU and the
VLMEvalKit records of BLINK, OCRBench and RealWorldQA; 10 random hold-outs (20 %) and the
frontier hold-out (the strongest 15 %).

The choice: a candidate's loss on a set of panels is how far its coverage at stop falls outside
the issue's goals, summed over the panels: below 88 % or above 92 % on the random hold-outs,
below 85 % on the frontier hold-out. Ties go to the later candidate in :data:`CANDIDATES` (more
folds, the frontier hull: the wider interval where both meet the goals). **Leave one panel out**:
for each panel, the candidate with the least loss on the other four, scored on the left-out one.
The default (:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_FOLDS` and
``frontier_at_top=True``) is the candidate chosen on all five; a test checks it is the one this
table names. Writes ``research/adaptive/results/adaptive_interval_choice.{csv,md}``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark
from primebench_tasks.adaptive.defaults import ADAPTIVE_MAX_ITEMS, ADAPTIVE_TARGET_WIDTH
from primebench_tasks.adaptive.procedure import (
    AdaptiveProcedure,
    run_procedure,  # noqa: E402
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # adaptive_replay
sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = Path(__file__).resolve().parent / "results"
"""This investigation's tables (the docs include them)."""
from adaptive_replay import (  # noqa: E402
    BLEND_POLICY,
    benchmarks,
    hold_out,
    hold_out_options,
    hold_outs,
    run_parallel,
)

CANDIDATES = ((5, False), (5, True), (10, False), (10, True))
"""(random folds, frontier_at_top), in tie-break order (a tie goes to the later)."""
RANDOM_GOAL, FRONTIER_GOAL = (0.88, 0.92), 0.85


def label(folds: int, frontier_at_top: bool) -> str:
    return f"{folds} folds" + (" + frontier hull at the top" if frontier_at_top else "")


def measure(name: str, X: np.ndarray, protocol: str, seed: int) -> list[dict]:
    """Every candidate's stop (items, error, coverage) for each held-out model of one hold-out."""
    held, build = hold_out(X, protocol, seed)
    rows = []
    points = None
    benches: dict[int, AdaptiveBenchmark] = {}
    for folds, frontier_at_top in CANDIDATES:
        if folds not in benches:  # one calibration per number of folds
            # chosen before the point rule at the top (adaptive_top_shift.py), which moves no
            # interval: the stop's error column is the earlier rule's
            benches[folds] = AdaptiveBenchmark(
                X[build],
                max_items=ADAPTIVE_MAX_ITEMS,
                folds=folds,
                seed=seed,
                nearest_shift=None,
                policy=BLEND_POLICY,
            )
        bench = benches[folds]
        bench.frontier_at_top = frontier_at_top  # the interval's rule, not its calibration
        if points is None:  # the asked items and raw predictions are the candidates' own
            procedure: AdaptiveProcedure = bench.procedure
            points, _ = run_procedure(procedure, X[held], bench.counts, bench.batch)
        for v, m in enumerate(held):
            true = float(np.nanmean(X[m]))
            for j, count in enumerate(bench.counts):
                pred, lo, hi, _ = bench.interval(float(points[v, j]), count)
                if hi - lo <= ADAPTIVE_TARGET_WIDTH or j == len(bench.counts) - 1:
                    break
            rows.append(
                {
                    "benchmark": name,
                    "protocol": protocol,
                    "split": seed,
                    "candidate": label(folds, frontier_at_top),
                    "stop_items": count,
                    "stop_err": abs(pred - true),
                    "stop_cover90": bool(lo <= true <= hi),
                    "stop_width90": hi - lo,
                }
            )
    return rows


def losses(cover: pd.DataFrame, panels: list[str]) -> pd.Series:
    """Each candidate's loss on ``panels``: coverage at stop outside the goals, summed."""
    lo, hi = RANDOM_GOAL
    r = cover.xs("random", level="protocol").loc[panels]
    f = cover.xs("frontier", level="protocol").loc[panels]
    out = (lo - r).clip(lower=0) + (r - hi).clip(lower=0) + (FRONTIER_GOAL - f).clip(lower=0)
    return out.sum(axis=0)


def choose(loss: pd.Series) -> str:
    """The candidate of least loss; a tie goes to the later one in :data:`CANDIDATES`."""
    order = [label(*c) for c in CANDIDATES if label(*c) in loss.index]
    best = min(float(loss[c]) for c in order)
    return [c for c in order if float(loss[c]) <= best + 1e-12][-1]


def table(df: pd.DataFrame) -> str:
    order = [label(*c) for c in CANDIDATES]
    cover = df.groupby(["benchmark", "protocol", "candidate"])["stop_cover90"].mean().unstack()
    cover = cover[order]
    items = df.groupby(["benchmark", "protocol", "candidate"])["stop_items"].mean().unstack()
    err = df.groupby(["benchmark", "protocol", "candidate"])["stop_err"].mean().unstack()
    panels = list(dict.fromkeys(df["benchmark"]))
    lines = [
        "Generated by `python research/adaptive/adaptive_interval_choice.py` (the default policy "
        "replayed once per hold-out; every candidate's calibration applied to its predictions; "
        "10 random hold-outs and the frontier hold-out per panel; stop when the 90 % interval is "
        f"narrower than {ADAPTIVE_TARGET_WIDTH:g}, at most {ADAPTIVE_MAX_ITEMS} items). "
        "Coverage at stop, items at stop (mean) and MAE at stop:",
        "",
        "| benchmark | hold-out | " + " | ".join(order) + " |",
        "|---|---|" + "---|" * len(order),
    ]
    for b in panels:
        for p in ("random", "frontier"):
            cells = [
                f"{cover.loc[(b, p), c]:.1%} ({items.loc[(b, p), c]:.0f}; "
                f"{err.loc[(b, p), c]:.4f})".replace("%", " %")
                for c in order
            ]
            lines.append(f"| {b} | {p} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Chosen on the other four panels (loss: coverage at stop outside 88–92 % on random "
        "hold-outs, below 85 % on the frontier hold-out, summed), scored on the one left out:",
        "",
        "| left-out panel | chosen on the others | its random coverage | its frontier coverage |",
        "|---|---|---|---|",
    ]
    picks = []
    for b in panels:
        pick = choose(losses(cover, [p for p in panels if p != b]))
        picks.append(pick)
        lines.append(
            f"| {b} | {pick} | {cover.loc[(b, 'random'), pick]:.1%} | "
            f"{cover.loc[(b, 'frontier'), pick]:.1%} |".replace("%", " %")
        )
    overall = losses(cover, panels)
    chosen = choose(overall)
    agree = sum(p == chosen for p in picks)
    lines += [
        "",
        f"Chosen on all five panels: **{chosen}** (loss "
        + ", ".join(f"{c} {overall[c]:.4f}" for c in order)
        + f"); the leave-one-panel-out choice agrees on {agree} of {len(panels)} panels.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    hold_out_options(ap)
    ap.add_argument("--render", action="store_true", help="the table from the committed CSV")
    args = ap.parse_args()
    if args.render:
        df = pd.read_csv(RESULTS / "adaptive_interval_choice.csv")
    else:
        jobs = [(measure, (n, X, p, s)) for n, X in benchmarks() for p, s in hold_outs(args.splits)]
        out = run_parallel(jobs, args.workers, "adaptive interval choice")
        df = pd.DataFrame([r for got in out for r in got])
        RESULTS.mkdir(exist_ok=True)
        df.to_csv(RESULTS / "adaptive_interval_choice.csv", index=False, float_format="%.6f")
    text = table(df)
    (RESULTS / "adaptive_interval_choice.md").write_text(text, "utf-8")
    print(text)


if __name__ == "__main__":
    main()
