"""Markdown tables."""

from __future__ import annotations

import math

import pandas as pd


def _fmt(v: object) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if math.isnan(v):
            return "—"
        return f"{v:.3f}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured markdown table of ``df`` (no index)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append(
            "| " + " | ".join(_fmt(v.item() if hasattr(v, "item") else v) for v in row) + " |"
        )
    return "\n".join(lines) + "\n"
