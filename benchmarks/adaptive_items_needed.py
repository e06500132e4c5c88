"""How many adaptive items reach the static default suite's accuracy (issue #29's second goal).

    python benchmarks/adaptive_items_needed.py [--splits 10]

Per benchmark (AutoJudger's two; VLMEvalKit's published BLINK, OCRBench and RealWorldQA records —
the embedded ``openvlm_*`` panels; the adaptive predictor was chosen on these five by
leave-one-panel-out, ``research/adaptive/adaptive_choice.py``) and hold-out (``random``: 20 % of the
models, ``splits`` seeds; ``frontier``: the strongest 15 %): the static default suite's share of
the benchmark — ``category_budget`` (5 %, floor 100: the items the default build keeps for a
one-benchmark category) chosen by the default selector on the build models — and its full-score
MAE on the held-out models with the default estimator; then the replay of the adaptive policy
(:func:`~primebench_tasks.adaptive.replay.replay`) at a grid of item counts, and the smallest
count whose MAE is no larger — the random splits pooled (:func:`pooled_need`). The goal: ≤ 40 % of the static suite's items.

Writes ``benchmarks/results/adaptive_items_needed.{csv,md}`` (the markdown is in docs/results.md,
checked by ``tests/test_readme_results.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.adaptive.replay import replay
from primebench_tasks.select.default import FLOOR, RETENTION
from primebench_tasks.select.vaw import category_budget

RESULTS = Path(__file__).parent / "results"


def _replay_script():  # type: ignore[no-untyped-def]
    """``adaptive_replay.py``: the same benchmarks and hold-outs are measured here."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "adaptive_replay", Path(__file__).with_name("adaptive_replay.py")
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def benchmarks() -> list[tuple[str, np.ndarray]]:
    """The benchmarks of ``adaptive_replay.py`` (the same panels, the same order)."""
    return _replay_script().benchmarks()


GOAL_SHARE = 0.40


def grid(k_static: int) -> tuple[int, ...]:
    """Item counts replayed: 5 to 30 by 5, then by 10, up to the static suite's size."""
    g = [*range(5, 31, 5), *range(40, k_static, 10), k_static]
    return tuple(sorted({x for x in g if x <= k_static}))


def measure(name: str, X: np.ndarray, protocol: str, seed: int) -> dict:
    M, n = X.shape
    script = _replay_script()
    held, build = script.hold_out(X, protocol, seed)
    k = category_budget(n, RETENTION, FLOOR)
    true = np.nanmean(X[held], axis=1)
    static_mae = float(np.mean(np.abs(script.static_prediction(X[build], X[held], k, seed) - true)))
    g = grid(k)
    r = replay(X[build], X[held], g, seed=seed, design="item_model")
    mae = np.nanmean(np.abs(r["predicted"] - r["true"][:, None]), axis=0)
    reached = [c for c, m in zip(g, mae, strict=True) if m <= static_mae]
    need = reached[0] if reached else None
    return {
        "benchmark": name,
        "models": M,
        "protocol": protocol,
        "split": seed,
        "static_items": k,
        "static_mae": static_mae,
        "items_needed": need,
        "adaptive_mae_there": float(mae[g.index(need)]) if need else float("nan"),
        "adaptive_mae_at_static_size": float(mae[-1]),
        "curve": ";".join(f"{c}:{m:.6f}" for c, m in zip(g, mae, strict=True)),
    }


def pooled_need(d: pd.DataFrame) -> tuple[int | None, float]:
    """(items needed, the adaptive MAE there) on the splits pooled: the smallest replayed count
    whose adaptive MAE over every split's held-out models is no larger than the static suite's
    over the same models (each random split holds out as many models, so the pooled MAE is the
    mean of the splits'). A split's own first crossing is the minimum of a noisy curve: with
    more splits some split's static suite is lucky and is never reached."""
    curves = [dict(tuple(x.split(":")) for x in c.split(";")) for c in d.curve]
    counts = [int(c) for c in curves[0]]
    mae = np.mean([[float(c[str(k)]) for k in counts] for c in curves], axis=0)
    static = float(d.static_mae.mean())
    for count, m in zip(counts, mae, strict=True):
        if m <= static:
            return count, float(m)
    return None, float("nan")


def table(df: pd.DataFrame) -> str:
    lines = [
        "| benchmark (models) | hold-out | static items | static MAE | adaptive items to reach it "
        "| share | adaptive MAE at the static size |",
        "|---|---|---|---|---|---|---|",
    ]
    met = 0
    cells = 0
    for (b, proto), d in df.groupby(["benchmark", "protocol"], sort=False):
        k = int(d.static_items.iloc[0])
        static = d.static_mae.mean()
        need, _ = pooled_need(d)
        needed = "not reached" if need is None else f"{need}"
        if len(d) > 1:  # each split's own first crossing, for how much it varies
            own = d.items_needed.dropna()
            parts = [f"{own.min():.0f}–{own.max():.0f}"] if len(own) else []
            if own.size < len(d):
                parts.append(f"not reached in {len(d) - own.size}")
            needed += f" (splits: {'; '.join(parts)})"
        share = "—" if need is None else f"{100 * need / k:.0f} %"
        met += need is not None and need / k <= GOAL_SHARE
        cells += 1
        lines.append(
            f"| {b} ({d.models.iloc[0]}) | {proto} | {k} | {static:.3f} | {needed} | {share} | "
            f"{d.adaptive_mae_at_static_size.mean():.3f} |"
        )
    n_random = int((df.protocol == "random").groupby(df.benchmark).sum().max())
    head = (
        f"Generated by `python benchmarks/adaptive_items_needed.py` (random: {n_random} splits, "
        "pooled: the fewest items whose adaptive MAE over every split's held-out models is no "
        "larger than the static suite's over the same models — in brackets the range of each "
        "split's own count; frontier: the strongest 15 %). The goal — the static "
        f"default suite's MAE reached with ≤ {100 * GOAL_SHARE:.0f} % of its items — is met in "
        f"{met} of {cells} cells.\n\n"
    )
    return head + "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    _replay_script().hold_out_options(ap)
    args = ap.parse_args()
    jobs = [
        (measure, (n, X, p, s))
        for n, X in benchmarks()
        for p, s in _replay_script().hold_outs(args.splits)
    ]
    rows = _replay_script().run_parallel(jobs, args.workers, "adaptive items needed")
    df = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "adaptive_items_needed.csv", index=False, float_format="%.6f")
    df = pd.read_csv(RESULTS / "adaptive_items_needed.csv")
    text = table(df)
    (RESULTS / "adaptive_items_needed.md").write_text(text, "utf-8")
    print(text)


if __name__ == "__main__":
    main()
