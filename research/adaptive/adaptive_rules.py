"""The comparison of candidate rules that the adaptive choices after the policy share
(``adaptive_top_shift.py``, ``adaptive_alpha_choice.py``, ``adaptive_slip_probe.py``): per panel,
hold-out, item count and rule the MAE ratio to the static default suite; a rule's loss on a set
of panels is its mean log ratio over their cells, as in the policy's choice
(``adaptive_choice.py``); leave one panel out: the rule with the least loss on the other
panels."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # adaptive_replay
sys.path.insert(0, str(Path(__file__).resolve().parent))

import adaptive_replay as replay  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
"""The investigation's tables (the docs include them)."""


def cell_row(
    panel: str,
    X: np.ndarray,
    protocol: str,
    seed: int,
    items: int,
    err: np.ndarray,
    static_err: np.ndarray,
    **extra: object,
) -> dict[str, object]:
    """One CSV row of a comparison: a candidate's absolute errors ``err`` (V,) and the static
    suite's ``static_err`` (V,) on the V held-out models of one hold-out of the panel ``X``
    (M, n), at ``items``, summed; ``extra``: the candidate's own columns."""
    return {
        "panel": panel,
        "models": len(X),
        "protocol": protocol,
        "split": seed,
        "items": items,
        **extra,
        "abs_err_sum": float(np.sum(err)),
        "static_abs_err_sum": float(np.sum(static_err)),
        "held_out": len(err),
    }


def rule_ratios(df: pd.DataFrame) -> pd.DataFrame:
    """The MAE ratio (Σ adaptive / Σ static absolute errors over the splits) per panel,
    hold-out, items and rule, from rows (``panel``, ``models``, ``protocol``, ``items``,
    ``rule``, ``abs_err_sum``, ``static_abs_err_sum``) of one hold-out each."""
    g = df.groupby(["panel", "models", "protocol", "items", "rule"], sort=False)
    return (g.abs_err_sum.sum() / g.static_abs_err_sum.sum()).rename("ratio").reset_index()


def rule_losses(r: pd.DataFrame, rules: Sequence[str]) -> pd.DataFrame:
    """Each panel's (rows) loss of each rule (columns, in ``rules``' order): the mean log MAE
    ratio over its cells (:func:`rule_ratios`' rows)."""
    loss = r.assign(lr=np.log(r.ratio)).groupby(["panel", "rule"], sort=False).lr.mean()
    return loss.unstack()[list(rules)]


def chosen_rule(r: pd.DataFrame, rules: Sequence[str], panels: list[str] | None = None) -> str:
    """The rule with the least mean loss over ``panels`` (every panel if None; ties → the
    earlier rule in ``rules``)."""
    loss = rule_losses(r, rules)
    return str(loss.loc[list(loss.index) if panels is None else panels].mean().idxmin())


def rule_lopo(r: pd.DataFrame, rules: Sequence[str]) -> dict[str, str]:
    """Leave one panel out: for each panel, the rule chosen on the other panels."""
    every = list(rule_losses(r, rules).index)
    return {p: chosen_rule(r, rules, [q for q in every if q != p]) for p in every}


def rule_grid(r: pd.DataFrame, rules: Sequence[str]) -> list[str]:
    """The table's lines: per panel (rows) and rule (columns) the ratios at the goal's item
    counts, random hold-outs · the frontier hold-out."""
    lines = [
        "| panel (models) | " + " | ".join(f"{rule}: random · frontier" for rule in rules) + " |",
        "|---|" + "---|" * len(rules),
    ]
    for (panel, models), d in r.groupby(["panel", "models"], sort=False):
        cells = []
        for rule in rules:
            e = d[(d.rule == rule) & d["items"].isin(replay.GOAL_ITEMS)]
            part = {
                p: " / ".join(f"{x:.2f}" for x in e[e.protocol == p].ratio)
                for p in ("random", "frontier")
            }
            cells.append(f"{part['random']} · {part['frontier']}")
        lines.append(f"| {panel} ({models}) | " + " | ".join(cells) + " |")
    return lines


def rule_summary(r: pd.DataFrame, rules: Sequence[str]) -> str:
    """The sentence under the table: what the ratios are, and per rule its mean log ratio over
    every cell with, in brackets, the goal cells it meets."""
    summary = []
    for rule in rules:
        e = r[r.rule == rule]
        goal = replay.goal_cells(e)
        met = int((goal.ratio <= replay.GOAL_RATIO).sum())
        summary.append(f"`{rule}` {np.log(e.ratio).mean():.3f} ({met} of {len(goal)})")
    return (
        "MAE ÷ the static default suite's at 50 / 100 items (random hold-outs · the frontier "
        "hold-out). Mean log ratio over every cell, and in brackets the goal cells met "
        f"({replay.goal_text()}): " + ", ".join(summary)
    )


def lopo_sentence(r: pd.DataFrame, rules: Sequence[str]) -> str:
    """The leave-one-panel-out folds' choices, in words."""
    return "Leave one panel out (the rule with the least mean log ratio on the other four): " + (
        "; ".join(f"{p} → `{rule}`" for p, rule in rule_lopo(r, rules).items())
    )


def loss_sentence(r: pd.DataFrame, rules: Sequence[str]) -> str:
    """The leave-one-panel-out folds' choices, the rule chosen on every panel, and each rule's
    mean log ratio over every cell, in words (no closing full stop)."""
    losses = rule_losses(r, rules).mean()
    return (
        lopo_sentence(r, rules)
        + f". On all five: `{chosen_rule(r, rules)}`. Mean log ratio of each rule over every "
        "cell: " + ", ".join(f"`{rule}` {x:.4f}" for rule, x in losses.items())
    )


def compare(
    name: str,
    measure: Callable[[str, np.ndarray, str, int], list[dict]],
    table: Callable[[pd.DataFrame], str],
    what: str,
    *,
    splits: int | None = None,
    cells: Collection[tuple[str, str]] | None = None,
) -> None:
    """A comparison script's command line: ``--render`` renders ``benchmarks/results/<name>.md``
    from the committed ``<name>.csv``; otherwise ``measure(panel, X, protocol, seed)`` runs on
    every hold-out of every replay panel (``--splits``, by default ``splits`` or the replay's;
    ``--workers``; progress labelled ``what``) — only the (panel, protocol) ``cells`` where
    given — and writes the CSV first."""
    ap = argparse.ArgumentParser()
    replay.hold_out_options(ap)
    if splits is not None:
        ap.set_defaults(splits=splits)
    ap.add_argument("--render", action="store_true", help="the table from the committed CSV")
    args = ap.parse_args()
    path = RESULTS / f"{name}.csv"
    if args.render:
        df = pd.read_csv(path)
    else:
        jobs = [
            (measure, (n, X, p, s))
            for n, X in replay.benchmarks()
            for p, s in replay.hold_outs(args.splits)
            if cells is None or (n, p) in cells
        ]
        out = replay.run_parallel(jobs, args.workers, what)
        df = pd.DataFrame([row for got in out for row in got])
        df.to_csv(path, index=False, float_format="%.6f")
    text = table(df)
    (RESULTS / f"{name}.md").write_text(text, "utf-8")
    print(text)
