"""Where the guarded adaptive test's draws and guard sit (#71): the uniform share ε of each
draw's probability, what the rest favours (the 2PL's information, or the policy's own picks) and
the guard's k — against today's unguarded test, the static design (stratified + GREG) and random
items' mean, on the same hold-outs and draws.

    python research/adaptive/adaptive_guard.py [--draws 4] [--panels mmmu_merged]
    python research/adaptive/adaptive_guard.py --render   # the table from the committed CSV

Hold-outs per panel and benchmark: ``random`` (20 % of the models), ``frontier`` (the strongest
15 %), ``chronological`` (the newest 15 % of the dated models, placed among those released
before), ``gap`` (placed 0.05–0.10 above every reference model), ``synthetic`` and
``synthetic_shift`` (12 models answering from the panel's own 2PL fitted on every model, with
abilities 0.3–1.5 above the strongest one's; ``_shift`` adds item-specific shifts δ_i ~ N(0, 1)
to the logits — items the panel finds hard made easy and some easy ones hard), and on
``mmmu_merged`` ``cross_source`` (its 17 runs of another harness, M3IRT's, placed among its 168
AutoJudger runs). Each candidate test is replayed ``--draws`` times (its draws' seed); the guard's
k is applied to the same traces (it changes no draw). Per cell, method and item count: MAE, bias,
the 90 % interval's coverage and width; at the stopping rule's end (90 % interval narrower than
0.10, at most 100 items) the items, MAE and coverage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import placement_design as design_cells  # noqa: E402

from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark  # noqa: E402
from primebench_tasks.adaptive.design import Draw, design_estimate, guard  # noqa: E402
from primebench_tasks.adaptive.replay import replay  # noqa: E402
from primebench_tasks.data.panel import Panel  # noqa: E402
from primebench_tasks.metrics import nanmean_rows  # noqa: E402
from primebench_tasks.place.estimators import make_estimator  # noqa: E402
from primebench_tasks.progress import progress_bar  # noqa: E402
from primebench_tasks.select.base import ItemFeatures  # noqa: E402
from primebench_tasks.select.irt import binarize, fit_2pl_cached, paper_thresholds  # noqa: E402
from primebench_tasks.select.registry import SELECTORS, SelectorContext  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
CACHE = Path.home() / ".cache" / "primebench" / "adaptive_guard"
CHECKPOINTS = (25, 50, 100)
TARGET = 0.10
LEVEL = 0.90
Z = NormalDist().inv_cdf(0.5 + LEVEL / 2)
CANDIDATES = (("information", 0.5), ("information", 0.3), ("policy", 0.5))
"""(preference, ε) of the draws compared."""
KS = (0.5, 0.75, 1.0)
"""The guard's k compared (applied to the same traces)."""
SYNTHETIC_MODELS = 12


def synthetic(X: np.ndarray, shift: bool, seed: int = 0) -> np.ndarray:
    """12 models answering the panel's items from its own 2PL fitted on every model, abilities
    0.3–1.5 above the strongest one's (``shift``: logits moved by δ_i ~ N(0, 1) per item)."""
    model = fit_2pl_cached(binarize(X))
    rng = np.random.default_rng(seed)
    theta = model.theta.max() + np.linspace(0.3, 1.5, SYNTHETIC_MODELS)
    logit = np.outer(theta, model.a) - model.b
    if shift:
        logit = logit + rng.normal(0.0, 1.0, X.shape[1])[None, :]
    return (rng.random(logit.shape) < 1.0 / (1.0 + np.exp(-logit))).astype(float)


def holdouts(name: str, panel: Panel, b: str) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(protocol, reference answers, held-out answers) of one benchmark."""
    X = panel.matrix(b).astype(float)
    out = []
    for protocol in ("random", "frontier", "chronological", "gap"):
        try:
            build, held = design_cells.splits(panel, X, protocol)[0]
        except ValueError as exc:
            print(f"{name} {b} {protocol}: skipped ({exc})", file=sys.stderr)
            continue
        out.append((protocol, X[build], X[held]))
    keep = np.isfinite(nanmean_rows(X))
    out.append(("synthetic", X[keep], synthetic(X[keep], False)))
    out.append(("synthetic_shift", X[keep], synthetic(X[keep], True)))
    if name == "mmmu_merged":
        aj = set(Panel.load_default("autojudger").model_names)
        other = np.array([m not in aj for m in panel.model_names])
        out.append(("cross_source", X[~other], X[other]))
    return out


def trace(bench: AdaptiveBenchmark, y: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """One model's guarded test to ``bench.max_items``, round by round: the model's calibrated
    point and interval, and the design estimate with its SE, at every count."""
    missing = ~np.isfinite(y)
    asked = np.zeros(len(y), bool)
    answers = np.full(len(y), np.nan)
    draws: list[Draw] = []
    pool = int((~missing).sum())
    rows = []
    while True:
        count = int(asked.sum())
        _, raw = bench.procedure.point(answers, asked)
        pred, lo, hi, _ = bench.interval(raw, count)
        d, se = design_estimate(draws, answers, pool)
        rows.append((count, pred, lo, hi, d, se))
        if count >= bench.max_items or (asked | missing).all():
            break
        new = bench.draw_items(answers, asked, min(bench.batch, bench.max_items - count), rng,
                               missing)  # fmt: skip
        draws += new
        for dr in new:
            asked[dr.item], answers[dr.item] = True, y[dr.item]
    return pd.DataFrame(rows, columns=["count", "model", "lo", "hi", "design", "se"])


def guarded_rows(tr: pd.DataFrame, k: float, true: float, widen: str = "both") -> dict:
    """Checkpoint and stop figures of one trace under guard k; ``widen``: the model's interval
    widened by k·SE on both sides (``both``) or only stretched to hold the design estimate
    (``toward``)."""
    g = [guard(r.model, r.lo, r.hi, r.design, r.se, Z, k) for r in tr.itertuples()]
    val = np.array([x.value for x in g])
    lo, hi = np.array([x.lo for x in g]), np.array([x.hi for x in g])
    if widen == "toward":
        for j, (r, x) in enumerate(zip(tr.itertuples(), g, strict=True)):
            if not np.isfinite(r.se):
                continue
            shift = x.value - r.model
            lo[j], hi[j] = min(r.lo + shift, r.design), max(r.hi + shift, r.design)
            if x.moved:
                lo[j] = min(lo[j], r.design - Z * r.se)
                hi[j] = max(hi[j], r.design + Z * r.se)
            lo[j], hi[j] = max(0.0, lo[j]), min(1.0, hi[j])
    counts = tr["count"].to_numpy()
    out = {}
    for c in CHECKPOINTS:
        j = int(np.searchsorted(counts, c))
        j = min(j, len(counts) - 1)
        out[c] = (val[j], lo[j], hi[j])
    width = np.where(np.isfinite(lo) & np.isfinite(hi), hi - lo, np.inf)
    ok = np.flatnonzero(width <= TARGET)
    j = int(ok[0]) if len(ok) else len(counts) - 1
    out["stop"] = (val[j], lo[j], hi[j], counts[j])
    return out


def cell(name: str, b: str, protocol: str, Yr: np.ndarray, Yh: np.ndarray, draws: int) -> list:
    true = nanmean_rows(Yh)
    rows = []

    def add(method: str, d: int, items: int, pred, lo=None, hi=None, stop=None) -> None:
        pred = np.asarray(pred, float)
        row = {"panel": name, "benchmark": b, "protocol": protocol, "method": method,
               "draw": d, "items": items, "models": len(Yh),
               "mae": float(np.mean(np.abs(pred - true))),
               "bias": float(np.mean(pred - true))}  # fmt: skip
        if lo is not None:
            lo, hi = np.asarray(lo, float), np.asarray(hi, float)
            row["cover90"] = float(np.mean((lo <= true) & (true <= hi)))
            row["width"] = float(np.mean(hi - lo))
        if stop is not None:
            row["stop_items"] = float(np.mean(stop))
        rows.append(row)

    # the unguarded test (deterministic: one run)
    r = replay(Yr, Yh, CHECKPOINTS, target_width=TARGET, cache_dir=CACHE, guarded=False)
    for j, c in enumerate(CHECKPOINTS):
        add("unguarded", 0, c, r["predicted"][:, j], r["lo"][:, j], r["hi"][:, j])
    add("unguarded", 0, 0, r["stop_predicted"], r["stop_lo"], r["stop_hi"], r["stop_items"])
    # static design and random items' mean
    th = paper_thresholds(Yr, "binary", "accuracy")
    for c in CHECKPOINTS:
        for d in range(draws):
            sel = SELECTORS["stratified"](c, 1000 * d + c, SelectorContext(thresholds=th))
            sel = sel.fit(Yr, ItemFeatures())
            est = make_estimator("greg", th).fit(Yr, sel.indices_, sel.weights_)
            Ys = Yh[:, sel.indices_]
            lo, hi = est.interval(Ys, LEVEL)
            add("static design", d, c, est.predict(Ys), lo, hi)
            rng = np.random.default_rng(1000 * d + c)
            pick = rng.choice(Yh.shape[1], c, replace=False)
            add("random mean", d, c, nanmean_rows(Yh[:, pick]))
    # guarded candidates
    for pref, eps in CANDIDATES:
        bench = AdaptiveBenchmark(Yr, max_items=max(CHECKPOINTS), cache_dir=CACHE,
                                  uniform_share=eps, preference=pref)  # fmt: skip
        for d in range(draws):
            traces = [trace(bench, y, np.random.default_rng([d, v])) for v, y in enumerate(Yh)]
            for k, widen in [(k, w) for k in KS for w in ("both", "toward")]:
                res = [guarded_rows(t, k, tv, widen) for t, tv in zip(traces, true, strict=True)]
                method = f"guarded {pref} ε={eps:g} k={k:g} {widen}"
                for c in CHECKPOINTS:
                    v = np.array([x[c] for x in res])
                    add(method, d, c, v[:, 0], v[:, 1], v[:, 2])
                v = np.array([x["stop"] for x in res])
                add(method, d, 0, v[:, 0], v[:, 1], v[:, 2], v[:, 3])
    return rows


def run(panels: list[str], draws: int) -> pd.DataFrame:
    jobs = []
    for name in panels:
        panel = Panel.load_default(name)
        for b in panel.benchmark_names:
            jobs += [(name, b, *h) for h in holdouts(name, panel, b)]
    out = []
    with progress_bar(len(jobs), "guard comparison", unit="cell") as bar:
        for job in jobs:
            out += cell(*job, draws)
            bar.update(1)
    return pd.DataFrame(out)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["panel", "benchmark", "protocol", "method", "items"], sort=False)
    return g[["mae", "bias", "cover90", "width", "stop_items"]].mean().reset_index()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draws", type=int, default=4)
    ap.add_argument("--panels", default="mmmu_merged")
    ap.add_argument("--out", default=str(RESULTS / "adaptive_guard.csv"))
    args = ap.parse_args(argv)
    df = run(args.panels.split(","), args.draws)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    print(summary(df).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
