"""The error floor the flagship's items set: placement error when every model's answers follow the
fitted item model exactly (a benchmark, not a test; #55's "come within 1.2× of that floor").

    python benchmarks/flagship_floor.py [--splits 3]

Per flagship panel of ≥ 80 models (``flagship_placement.py``'s panels): a 2PL is fitted to the
whole panel (``select.irt.fit_2pl``), every model's answers are drawn from it (Bernoulli, seed 0,
the panel's missing cells kept missing), and the same protocols are run on that simulated panel —
the suite rebuilt without the held-out models, with its calibration, the held-out models placed
from their simulated answers. The floor is the error left when the item model is right; the
ratio real ÷ floor says how much of the real error is the model's misfit to 2PL and how much the
suite's size. Writes ``benchmarks/results/flagship_floor.{csv,md}``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.select.irt import fit_2pl

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def _placement_module():
    spec = importlib.util.spec_from_file_location(
        "flagship_placement", HERE / "flagship_placement.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["flagship_placement"] = mod
    spec.loader.exec_module(mod)
    return mod


def simulated(panel: Panel, bench: str, seed: int = 0) -> Panel:
    """``panel`` with ``bench``'s answers drawn from a 2PL fitted to them."""
    X = panel.matrix(bench).astype(float)
    model = fit_2pl(X)
    p = model.prob(model.theta)
    rng = np.random.default_rng(seed)
    Y = (rng.random(p.shape) < p).astype(np.float32)
    Y[~np.isfinite(X)] = np.nan
    items = panel.items_of(bench).reset_index(drop=True)
    return Panel.from_dense(
        f"{panel.name}-2pl",
        {"vl": {bench: Y}},
        panel.model_table.reset_index(drop=True),
        panel.benchmarks.reset_index(drop=True),
        items,
    )


def table(df: pd.DataFrame, real: pd.DataFrame) -> str:
    lines = [
        "| benchmark (panel, models) | protocol | real MAE | floor MAE (2PL-simulated answers) | "
        "real ÷ floor |",
        "|---|---|---|---|---|",
    ]
    for (b, proto), d in df.groupby(["benchmark", "protocol"], sort=False):
        r = real[(real.benchmark == b) & (real.protocol == proto)]
        mae_r, mae_f = r.error.abs().mean(), d.error.abs().mean()
        ratio = mae_r / mae_f
        mark = f"**{ratio:.2f}**" if ratio <= 1.2 else f"{ratio:.2f}"
        lines.append(
            f"| {b} ({d.panel.iloc[0]}, {d.models.iloc[0]}) | {proto} | {mae_r:.3f} | "
            f"{mae_f:.3f} | {mark} |"
        )
    lines += ["", "Goal: real ≤ 1.2 × floor (bold: met)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    fp = _placement_module()
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--render", action="store_true", help="the table from the committed CSVs")
    args = ap.parse_args()
    real = pd.read_csv(RESULTS / "flagship_placement.csv")
    if args.render:
        df = pd.read_csv(RESULTS / "flagship_floor.csv")
    else:
        rows: list[dict] = []
        for b, (source, panel) in fp.flagship_panels().items():
            sim = simulated(panel, b)
            for proto in ("random", "frontier"):
                rows += fp.evaluate(b, source, sim, proto, args.splits, args.n_boot)
                print(f"{b} {proto} done", flush=True)
        df = pd.DataFrame(rows)
        df.to_csv(RESULTS / "flagship_floor.csv", index=False, float_format="%.6f")
    text = table(df, real)
    (RESULTS / "flagship_floor.md").write_text(text, "utf-8")
    print(text)


if __name__ == "__main__":
    main()
