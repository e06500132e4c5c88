"""Whether a test's own answers can tell which models to probe for a slip (issue #29; after
``adaptive_slip_probe.py``, whose probes cost every model more than the few that slip repay).

    python research/adaptive/adaptive_slip_trigger.py [--splits 10]   # ~8 min, 2 cores
    python research/adaptive/adaptive_slip_trigger.py --render        # the table from the committed CSV

If the items the deployed test chose already showed a slip, only suspect models would need
probes. Per held-out model of every replay hold-out, the deployed test is replayed (its asked
order; no calibration is needed) and the slip posterior of
:func:`adaptive_slip_probe.slip_posterior` is taken on the items it asked by 20 and by 50 items,
each item's typical pass rate being that of the model's neighbours (the local model's weighted
reference models, given those answers). The table counts the tests whose posterior exceeds
:data:`FLAG` among the models that slip (:func:`adaptive_slip_probe.slipping_models`, on the
whole panel) and among the others.

Measured: the posterior flags none of the 109 tests of models that slip, at 20 or at 50 items
(and 2 of the 1,577 others): the items chosen for a typical model, of middling difficulty for
it, do not show a slip, which is why probes were needed at all. Writes ``research/adaptive/results/adaptive_slip_trigger.{csv,md}`` (included in
docs/results.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # adaptive_replay
sys.path.insert(0, str(Path(__file__).resolve().parent))

import adaptive_replay as replay  # noqa: E402
import adaptive_rules as comparison  # noqa: E402
import adaptive_slip_probe as probe  # noqa: E402

from primebench_tasks.adaptive.policy import BATCH, AdaptivePolicy
from primebench_tasks.adaptive.procedure import (
    AdaptiveProcedure,
    run_procedure,  # noqa: E402
)

COUNTS = (20, 50)
"""The asked items the posterior is taken on."""
FLAG = 0.5
"""A test is flagged when the slip posterior of its asked items exceeds this."""


def measure(name: str, X: np.ndarray, protocol: str, seed: int) -> list[dict]:
    """One row per held-out model of one hold-out: whether it slips, and the slip posterior of
    the items the deployed test asked it by each of :data:`COUNTS`."""
    held, build = replay.hold_out(X, protocol, seed)
    procedure = AdaptiveProcedure(X[build], AdaptivePolicy())
    _, order = run_procedure(procedure, X[held], (max(COUNTS),), BATCH)
    slipping = set(probe.slipping_models(X).tolist())
    n = X.shape[1]
    rows = []
    for v, model in enumerate(held):
        row: dict[str, object] = {
            "panel": name,
            "protocol": protocol,
            "split": seed,
            "model": int(model),
            "slips": int(model) in slipping,
        }
        for count in COUNTS:
            items = order[v, :count]
            items = items[items >= 0]
            asked = np.zeros(n, bool)
            asked[items] = True
            answers = np.where(asked, X[model], np.nan)
            rate = probe.neighbour_pass_rate(procedure, answers, asked)
            row[f"posterior_{count}"] = probe.slip_posterior(rate[items], X[model, items])[1]
        rows.append(row)
    return rows


def table(df: pd.DataFrame) -> str:
    """Per panel and hold-out kind: the tests of models that slip and of the others, and how
    many of each the asked items' posterior flags at each count."""
    lines = [
        "| panel | hold-out | tests of models that slip: flagged at "
        + " / ".join(map(str, COUNTS))
        + " items | tests of the others: flagged at "
        + " / ".join(map(str, COUNTS))
        + " items |",
        "|---|---|---|---|",
    ]
    for (panel, protocol), d in df.groupby(["panel", "protocol"], sort=False):
        cells = []
        for slips in (True, False):
            e = d[d.slips == slips]
            flagged = " / ".join(f"{int((e[f'posterior_{c}'] > FLAG).sum())}" for c in COUNTS)
            cells.append(f"{flagged} of {len(e)}")
        lines.append(f"| {panel} | {protocol} | " + " | ".join(cells) + " |")
    median = df.groupby("slips")[[f"posterior_{c}" for c in COUNTS]].median()
    lines += [
        "",
        f"Flagged: the slip posterior of the asked items above {FLAG:g} (prior "
        f"{probe.SLIP_PRIOR:g}); a model held out in several random splits counts each time. "
        f"The median posterior at {' / '.join(map(str, COUNTS))} items, over every test: models "
        "that slip "
        + " / ".join(f"{x:.3f}" for x in median.loc[True])
        + ", the others "
        + " / ".join(f"{x:.3f}" for x in median.loc[False])
        + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    comparison.compare("adaptive_slip_trigger", measure, table, "slip trigger")


if __name__ == "__main__":
    main()
