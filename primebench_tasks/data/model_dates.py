"""Release dates of reference models, for provenance ("placed among 188 models, newest released
2025-01"): a panel's own ``release_date`` column, else the shipped table
``primebench_tasks/data/resources/model_release_dates.csv`` (``tools/build_model_dates.py``:
exact folded-name matches with the OpenVLM leaderboard snapshot, each with its evidence)."""

from __future__ import annotations

import csv
import functools
import re
from importlib import resources
from pathlib import Path

from primebench_tasks.data.panel import Panel

DATES_FILE = Path(
    str(resources.files("primebench_tasks.data").joinpath("resources", "model_release_dates.csv"))
)


@functools.cache
def folded_name(name: str) -> str:
    """A model name folded for joining sources that spell it differently: lower case, letters and
    digits only (``"Qwen2-VL-7B-Instruct"`` → ``"qwen2vl7binstruct"``). A join on it is taken only
    where exactly one name of the other source folds the same."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


@functools.cache
def shipped_release_dates() -> dict[str, str]:
    """Model name → release date (``YYYY-MM-DD``) of the shipped table."""
    with DATES_FILE.open(encoding="utf-8", newline="") as f:
        return {r["model"]: r["release_date"] for r in csv.DictReader(f)}


def release_dates(panel: Panel) -> dict[str, str]:
    """The panel's models → release date, where one is known (the panel's own first)."""
    shipped = shipped_release_dates()
    own = dict(zip(panel.model_table["model"], panel.model_table["release_date"], strict=True))
    out = {}
    for m in panel.model_names:
        d = own.get(m)
        d = d if isinstance(d, str) and d.strip() else shipped.get(m)
        if d:
            out[m] = d
    return out


def newest_release(panel: Panel) -> tuple[str | None, int]:
    """(the newest release month ``YYYY-MM`` among the panel's dated models, or None; how many
    of its models are dated)."""
    dates = release_dates(panel)
    return (max(dates.values())[:7] if dates else None), len(dates)
