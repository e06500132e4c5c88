"""Does a design-only benchmark's 90 % interval hold? (#72's goal: 85–95 % of held-out models'
true scores.) The design is replayed on the item panels that do have items, drawing as if no item
were known: every row keyed by its text (question, options, answer: the design's content key),
strata from what the item ids carry (BLINK's 14 subtasks; one stratum elsewhere — MMMU's 30 subjects need 60 items at two a stratum), the
first n_h of each stratum in key order, under 20 salts (20 different draws). Each model's true
score is its mean over the benchmark's whole pool; its estimate and intervals are
``stratified_estimate``'s on the drawn items. Compared: the shipped variance (the bounded floor)
and the plain stratified variance, at 50 and 100 items — and random items with the plain mean
and a binomial normal interval, the baseline a user would otherwise take.

    python research/design_only/coverage.py   # ~2 min on 2 cores

Writes ``results/design_only_coverage.csv`` (one row per panel, benchmark, n, variant) and
``results/design_only_coverage.md`` (the table docs/results.md shows).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.suite.content_design import (
    Z90,
    ContentDesign,
    resolve,
    stratified_estimate,
)

OUT = Path(__file__).parent / "results"
PANELS = (
    ("mmmu_merged", "MMMU_DEV_VAL", None),  # 30 subjects: more strata than 50 items cover
    ("openvlm_blink", "BLINK", r"^val_(.+)_\d+$"),
    ("autojudger", "AI2D_TEST", None),
    ("openvlm_ocrbench", "OCRBench", None),
    ("openvlm_realworldqa_text", "RealWorldQA", None),
    ("m3irt", "MathVista_MINI", None),
)
"""(panel, benchmark, the item-id pattern whose group is the stratum; None: one stratum)."""
SALTS = 20
SIZES = (50, 100)
MIN_ANSWERED = 0.95
"""A model is replayed where it answered at least this share of the pool (its true score is its
mean over what it answered; an unanswered drawn item is unscored, as in a run)."""


def replay(panel: Panel, bench: str, pattern: str | None) -> list[dict[str, object]]:
    items = panel.items_of(bench).reset_index(drop=True)
    Y = panel.matrix(bench)
    answered = np.isfinite(Y).mean(axis=1) >= MIN_ANSWERED
    Y = Y[answered]
    truth = np.nanmean(Y, axis=1)
    rows = [
        {
            "question": str(r.question),
            "options": str(r.options),
            "answer": str(r.answer),
            "item_id": str(r.item_id),
            "stratum": re.match(pattern, str(r.item_id)).group(1) if pattern else "all",
        }
        for r in items.itertuples()
    ]
    # texts that repeat (the design tells them apart by '#2'): key on the id too, as an image would
    out = []
    for n in SIZES:
        cover = {"bounded": [], "plain": [], "random": []}
        width = {k: [] for k in cover}
        err = {k: [] for k in cover}
        for salt in range(SALTS):
            d = ContentDesign(
                n=n,
                key_fields=("question", "options", "answer", "item_id"),
                strata_field="stratum",
                salt=f"coverage/{salt}",
            )
            drawn = resolve(rows, d, bench)
            pos = np.array([p for _, _, p in drawn.items])
            strata = [h for _, h, _ in drawn.items]
            rng = np.random.default_rng(salt)
            rand = rng.choice(len(rows), size=min(n, len(rows)), replace=False)
            for m in range(len(Y)):
                y = Y[m, pos]
                by_h: dict[str, list[float]] = {}
                for h, v in zip(strata, y, strict=True):
                    if np.isfinite(v):
                        by_h.setdefault(h, []).append(float(v))
                for variant in ("bounded", "plain"):
                    e = stratified_estimate(drawn.strata, by_h, bounded=variant == "bounded")
                    if e is None:
                        continue
                    lo, hi = e.value - Z90 * e.se, e.value + Z90 * e.se
                    cover[variant].append(lo <= truth[m] <= hi)
                    width[variant].append(hi - lo)
                    err[variant].append(abs(e.value - truth[m]))
                yr = Y[m, rand]
                yr = yr[np.isfinite(yr)]
                p = yr.mean()
                half = Z90 * math.sqrt(max(p * (1 - p), 0.0) / len(yr))
                cover["random"].append(p - half <= truth[m] <= p + half)
                width["random"].append(2 * half)
                err["random"].append(abs(p - truth[m]))
        for variant in cover:
            out.append(
                {
                    "panel": panel.name,
                    "benchmark": bench,
                    "pool": len(rows),
                    "strata": len(drawn.strata),
                    "models": len(Y),
                    "n": n,
                    "variant": variant,
                    "coverage90": float(np.mean(cover[variant])),
                    "mean_width": float(np.mean(width[variant])),
                    "mae": float(np.mean(err[variant])),
                }
            )
    return out


def main() -> None:
    rows = []
    for name, bench, pattern in PANELS:
        rows += replay(Panel.load_default(name), bench, pattern)
        print(name, bench, "done", flush=True)
    df = pd.DataFrame(rows)
    OUT.mkdir(parents=True, exist_ok=True)
    df.to_csv(OUT / "design_only_coverage.csv", index=False, float_format="%.4f")
    wide = df.pivot_table(
        index=["benchmark", "pool", "strata", "models", "n"],
        columns="variant",
        values=["coverage90", "mean_width", "mae"],
    )
    lines = [
        "| benchmark | pool | strata | models | n | 90 % coverage (shipped / plain / random) "
        "| mean width (shipped / random) | MAE (shipped / random) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, r in wide.iterrows():
        b, pool, strata, models, n = key
        lines.append(
            f"| {b} | {pool} | {strata} | {models} | {n} | "
            f"{r[('coverage90', 'bounded')]:.1%} / {r[('coverage90', 'plain')]:.1%} / "
            f"{r[('coverage90', 'random')]:.1%} | {r[('mean_width', 'bounded')]:.3f} / "
            f"{r[('mean_width', 'random')]:.3f} | {r[('mae', 'bounded')]:.4f} / "
            f"{r[('mae', 'random')]:.4f} |"
        )
    pooled = df.groupby(["n", "variant"])["coverage90"].agg(["mean", "min", "max"])
    lines += ["", "Pooled over the six benchmarks (mean of cells [lowest, highest]):", ""]
    for n in SIZES:
        parts = [
            f"{v} {pooled.loc[(n, v), 'mean']:.1%} [{pooled.loc[(n, v), 'min']:.1%}, "
            f"{pooled.loc[(n, v), 'max']:.1%}]"
            for v in ("bounded", "plain", "random")
        ]
        lines.append(f"- {n} items: " + "; ".join(parts))
    (OUT / "design_only_coverage.md").write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
