"""#80, one round on the lever its analysis named first: **one bias test pooled over the
benchmarks a model runs** instead of the guard's per-benchmark one — compared, on the same
replays, with the shipped guard, the unguarded test and the draws' design estimate alone.

    python research/adaptive/adaptive_pooled_guard.py [--splits 3]

Per model held out (``random``: 20 % at random, inside the panel; ``frontier``: the strongest
15 % by suite score, beyond it) on the panels where one set of models answered several
benchmarks (``autojudger``: AI2D_TEST, MMMU_DEV_VAL; ``m3irt``: MathVista_MINI, MMMU_DEV_VAL),
each benchmark's guarded test replayed (:func:`~primebench_tasks.adaptive.replay.replay`) at 25,
50 and 100 items gives, per benchmark b, the item model's prediction m_b, the design estimate
d_b with its SE s_b and the shipped guarded value g_b. The pooled bias δ̂ = Σ w_b (d_b − m_b) /
Σ w_b, w_b = 1/s_b², SE 1/√Σ w_b; the candidates:

- ``pooled_test``: m_b where |δ̂| ≤ 2 SE (no bias the benchmarks together can see), else g_b;
- ``pooled_shift``: m_b + δ̂ (the item model corrected by the common bias; design-unbiased
  where the bias is common to the benchmarks);
- ``guarded`` (shipped), ``unguarded`` (m_b), ``design`` (d_b: the draws alone, a random
  sample's accuracy at best).

Per panel, hold-out, item count and method: MAE, bias of the benchmark's full score →
``results/adaptive_pooled_guard.{csv,md}``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.adaptive.replay import replay
from primebench_tasks.data.panel import Panel
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.report.tables import markdown_table

RESULTS = Path(__file__).resolve().parent / "results"
PANELS = {"autojudger": ("AI2D_TEST", "MMMU_DEV_VAL"), "m3irt": ("MathVista_MINI", "MMMU_DEV_VAL")}
CHECKPOINTS = (25, 50, 100)
Z_TEST = 2.0


def holdouts(panel: Panel, benches: tuple[str, ...], split: int) -> dict[str, np.ndarray]:
    M = len(panel.model_names)
    rng = np.random.default_rng([split, M])
    suite = np.mean([nanmean_rows(panel.matrix(b).astype(float)) for b in benches], axis=0)
    top = np.argsort(-suite)[: max(5, round(0.15 * M))]
    return {
        "random": np.sort(rng.choice(M, max(5, round(0.2 * M)), replace=False)),
        "frontier": np.sort(top),
    }


def run(splits: int) -> pd.DataFrame:
    rows = []
    for name, benches in PANELS.items():
        panel = Panel.load_default(name)
        for split in range(splits):
            for hold, out in holdouts(panel, benches, split).items():
                if hold == "frontier" and split:
                    continue  # one frontier: the strongest are the strongest
                ref = np.setdiff1d(np.arange(len(panel.model_names)), out)
                reps = {}
                for b in benches:
                    Y = panel.matrix(b).astype(float)
                    reps[b] = replay(Y[ref], Y[out], CHECKPOINTS, seed=split, design="item_model")
                for j, c in enumerate(CHECKPOINTS):
                    m = np.array([reps[b]["model_predicted"][:, j] for b in benches])
                    d = np.array([reps[b]["design"][:, j] for b in benches])
                    s = np.array([reps[b]["design_se"][:, j] for b in benches])
                    g = np.array([reps[b]["predicted"][:, j] for b in benches])
                    t = np.array([reps[b]["true"] for b in benches])
                    with np.errstate(divide="ignore", invalid="ignore"):
                        w = 1.0 / s**2
                        delta = np.nansum(w * (d - m), axis=0) / np.nansum(w, axis=0)
                        se = 1.0 / np.sqrt(np.nansum(w, axis=0))
                    seen = np.abs(delta) > Z_TEST * se
                    methods = {
                        "guarded": g,
                        "unguarded": m,
                        "design": d,
                        "pooled_test": np.where(seen[None, :], g, m),
                        "pooled_shift": np.clip(m + delta[None, :], 0, 1),
                    }
                    for meth, est in methods.items():
                        err = est - t
                        for k, b in enumerate(benches):
                            ok = np.isfinite(err[k])
                            rows.append(
                                {
                                    "panel": name, "holdout": hold, "items": c, "method": meth,
                                    "benchmark": b, "split": split,
                                    "mae": float(np.abs(err[k][ok]).mean()),
                                    "bias": float(err[k][ok].mean()), "n": int(ok.sum()),
                                }
                            )  # fmt: skip
    return pd.DataFrame(rows)


def table(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["panel", "holdout", "items", "method"], sort=False)
    s = g.apply(
        lambda x: pd.Series(
            {
                "MAE": np.average(x["mae"], weights=x["n"]),
                "bias": np.average(x["bias"], weights=x["n"]),
            }
        ),
        include_groups=False,
    ).reset_index()
    base = s[s["method"] == "guarded"].set_index(["panel", "holdout", "items"])["MAE"]
    s["MAE ÷ guarded"] = [
        r.MAE / base[(r.panel, r.holdout, r.items)] for r in s.itertuples(index=False)
    ]
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=3)
    args = ap.parse_args()
    df = run(args.splits)
    RESULTS.mkdir(parents=True, exist_ok=True)
    df.to_csv(RESULTS / "adaptive_pooled_guard.csv", index=False)
    t = table(df).round(4)
    (RESULTS / "adaptive_pooled_guard.md").write_text(
        "# One bias test pooled over a model's benchmarks (#80, one round)\n\n"
        f"`python research/adaptive/adaptive_pooled_guard.py --splits {args.splits}`\n\n"
        + markdown_table(t),
        encoding="utf-8",
    )
    print(markdown_table(t))


if __name__ == "__main__":
    main()
