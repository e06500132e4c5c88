"""New models' per-item records (from the vLLM runner or either harness) appended to a Panel.

A records file is long: ``model, benchmark, item_id, score`` (+ optional ``condition``, default
``vl``), scores already scaled to [0, 1]; CSV, JSONL or parquet. Appending is idempotent: a record
identical to one in the panel is skipped; a different score for an existing key is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.importers import merge_records, panel_records
from primebench_tasks.data.io import jsonl_records
from primebench_tasks.data.names import model_name_problem
from primebench_tasks.data.panel import CONDITIONS, Panel
from primebench_tasks.errors import InputError, shown

COVERAGE_FULL = 0.9
"""A model with valid scores on at least this fraction of every benchmark's items counts as
fully evaluated; below it the model is *partial* (e.g. run on the compact suite only)."""


def read_records(path: str | Path, suites: set[str] | None = None) -> pd.DataFrame:
    """Read one records file — or a panel folder (``primebench ingest ...`` of a model zoo's
    runs): its records — into (model, benchmark, item_id, condition, score). ``suites``:
    the suite versions the records may come from — a record whose ``suite`` (runner records
    carry one) is another is an error naming its row."""
    p = Path(path)
    f = str(p)
    if p.is_dir() and (p / "panel.json").exists():  # a panel folder (e.g. a model zoo's ingest)
        from primebench_tasks.data.importers import panel_records
        from primebench_tasks.data.panel import Panel

        return panel_records(Panel.load(p))
    try:
        if p.suffix == ".parquet":
            df = pd.read_parquet(p)
        elif p.suffix in (".jsonl", ".json"):
            df = pd.DataFrame([rec for _, rec in jsonl_records(p.read_text("utf-8"), f)])
        else:
            df = pd.read_csv(p, dtype={"model": str, "benchmark": str, "item_id": str})
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"cannot read records: {exc}", file=f) from None
    if df.empty:
        raise InputError("no records", file=f, row=1)
    for col in ("model", "benchmark", "item_id", "score"):
        if col not in df.columns:
            raise InputError("required column is missing", file=f, row=1, field=col)
    if "condition" not in df.columns:
        df["condition"] = "vl"
    df["condition"] = df["condition"].fillna("vl")  # an empty cell: the default condition
    extra = sorted(
        set(df.columns)
        - {
            "model",
            "benchmark",
            "item_id",
            "condition",
            "score",
            "answer",
            "adapter",
            "status",
            "category",
            "error",
            "suite",
            "seconds",
            "schema",
            "response",
            "parsed",
            "parse_fallback",
            "finish_reason",
            "output_tokens",
        }
    )
    if extra:
        raise InputError(f"unknown column(s) {extra}", file=f, row=1, field=extra[0])
    if suites is not None and "suite" in df.columns:
        other = df["suite"].notna() & ~df["suite"].astype(str).isin(suites)
        if other.any():
            i = int(np.flatnonzero(other.to_numpy())[0])
            raise InputError(
                f"record of suite {df['suite'].iloc[i]!r}, not a version of this "
                f"suite directory ({', '.join(sorted(suites))})",
                file=f,
                row=i + 2 if p.suffix not in (".jsonl", ".json") else i + 1,
                field="suite",
            )
    first = 1 if p.suffix in (".jsonl", ".json") else 2  # the file's row of df.index 0

    def row(pos: int) -> int:  # the file row of df's pos-th row (after filtering too)
        return int(df.index[pos]) + first

    for col in ("model", "benchmark", "item_id", "condition"):
        text = df[col].astype("string")
        blank = text.isna() | (text.str.strip() == "")
        padded = ~blank & (text.str.strip() != text)
        for what, mask in (("empty", blank), ("padded with spaces", padded)):
            if mask.any():
                i = int(np.flatnonzero(mask.to_numpy())[0])
                raise InputError(
                    f"{col} {shown(df[col].iloc[i])} is {what}", file=f, row=row(i), field=col
                )
    for pos, name in enumerate(df["model"]):
        problem = model_name_problem(str(name))
        if problem:
            raise InputError(
                f"model name {shown(name)} {problem}", file=f, row=row(pos), field="model"
            )
    unknown = ~df["condition"].astype(str).isin(CONDITIONS)
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        raise InputError(
            f"condition {shown(df['condition'].iloc[i])} is not one of {', '.join(CONDITIONS)}",
            file=f,
            row=row(i),
            field="condition",
        )
    if "status" in df.columns:  # failed runner records are missing, not 0: they are not appended
        df = df[df["status"].fillna("ok") == "ok"]
    boolean = df["score"].map(lambda v: isinstance(v, bool | np.bool_))
    if boolean.any():  # JSON true/false: a right/wrong flag is not a score of 1/0 by accident
        i = int(np.flatnonzero(boolean.to_numpy())[0])
        raise InputError(
            f"score {shown(df['score'].iloc[i])} is a boolean, not a number in [0, 1]",
            file=f,
            row=row(i),
            field="score",
        )
    score = pd.to_numeric(df["score"], errors="coerce")
    bad = score.isna() & df["score"].notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"non-numeric score {shown(df['score'].iloc[i])}", file=f, row=row(i), field="score"
        )
    out_of_range = (score < 0) | (score > 1)
    if out_of_range.any():
        i = int(np.flatnonzero(out_of_range.to_numpy())[0])
        raise InputError(f"score {score.iloc[i]} outside [0, 1]", file=f, row=row(i), field="score")
    df = df.assign(score=score)[["model", "benchmark", "item_id", "condition", "score"]]
    df = df.astype({"model": str, "benchmark": str, "item_id": str, "condition": str})
    dup = df.duplicated(["model", "benchmark", "item_id", "condition"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError("duplicate record key", file=f, row=row(i), field="item_id")
    return df.dropna(subset=["score"]).reset_index(drop=True)


@dataclass
class AppendReport:
    n_new: int = 0
    n_identical: int = 0
    new_models: list[str] = field(default_factory=list)
    partial_models: list[str] = field(default_factory=list)
    design_only: dict[str, int] = field(default_factory=dict)
    """Answers left out, by design-only benchmark: drawn by content key from the dataset (#72),
    they are no panel's items."""

    def lines(self) -> list[str]:
        out = [f"records: {self.n_new} appended, {self.n_identical} already in the panel"]
        if self.design_only:
            out.append(
                "left out: the answers to design-only benchmarks "
                + ", ".join(f"{b} ({n})" for b, n in sorted(self.design_only.items()))
                + " — drawn from the dataset by content key, not items of a reference panel"
            )
        if self.new_models:
            out.append(f"new models: {', '.join(self.new_models)}")
        if self.partial_models:
            out.append(
                f"partial models (scored on < {COVERAGE_FULL:.0%} of some benchmark's items): "
                f"{', '.join(self.partial_models)}. They enter the frozen-suite check and the "
                "rank prediction; they cannot inform a refit's item choice outside the items "
                "they were run on, and they are left out of the full-suite reference ranking."
            )
        return out


def append_records(
    panel: Panel, records: pd.DataFrame, source: str = "<records>"
) -> tuple[Panel, AppendReport]:
    """Panel + records (idempotent). Unknown benchmarks or items are errors; new models are
    added with empty metadata. Records of a design-only benchmark (with the draw they came from,
    ``pool``) are left out and counted in the report."""
    rep = AppendReport()
    if "pool" in records.columns:
        drawn = records["pool"].notna().to_numpy()
        rep.design_only = {
            str(b): int(n) for b, n in records[drawn]["benchmark"].value_counts().items()
        }
        records = records[~drawn]
    known_b = set(panel.benchmark_names)
    bad_b = sorted(set(records["benchmark"]) - known_b)
    if bad_b:
        raise InputError(
            f"benchmark(s) not in panel {panel.name!r}: {bad_b}", file=source, field="benchmark"
        )
    key = ["benchmark", "item_id"]
    items = panel.items[key].assign(_known=True)
    chk = records.merge(items, on=key, how="left")
    if chk["_known"].isna().any():
        r = chk[chk["_known"].isna()].iloc[0]
        raise InputError(
            f"item {r.item_id!r} of {r.benchmark!r} is not in the panel",
            file=source,
            field="item_id",
        )
    old = panel_records(panel)
    k4 = ["model", "benchmark", "item_id", "condition"]
    m = records.merge(old, on=k4, how="left", suffixes=("", "_old"))
    seen = m["score_old"].notna()
    conflict = seen & ~np.isclose(m["score"], m["score_old"], atol=1e-6)
    if conflict.any():
        r = m[conflict].iloc[0]
        raise InputError(
            f"record (model={r.model!r}, item={r.item_id!r}) has score {r.score} "
            f"but the panel holds {r.score_old}",
            file=source,
            field="score",
        )
    new = records[~seen.to_numpy()]
    rep.n_identical = int(seen.sum())
    rep.n_new = len(new)
    rep.new_models = sorted(set(new["model"]) - set(panel.models["model"]))
    if len(new) == 0:
        out = panel
    else:
        models = pd.DataFrame({"model": rep.new_models})
        out = merge_records(
            panel, new, models, panel.benchmarks.iloc[:0], panel.items.iloc[:0], source
        )
    rep.partial_models = partial_models(out)
    return out, rep


def partial_models(panel: Panel) -> list[str]:
    """Models scored on fewer than COVERAGE_FULL of some benchmark's items."""
    names = np.array(panel.model_names)
    partial = np.zeros(len(names), dtype=bool)
    for b in panel.benchmark_names:
        cov = np.isfinite(panel.matrix(b)).mean(axis=1)
        partial |= cov < COVERAGE_FULL
    return sorted(names[partial].tolist())
