"""Panels of one benchmark from several sources, joined into one: item ids mapped to one key
space (:func:`relabel_items`), one model under several names joined through a reviewed alias
table (:func:`read_aliases`), and the same model and item answered differently by two sources
reported, never averaged (:func:`merge_panels`).

The alias table is data (``primebench_tasks/data/resources/model_aliases.csv``): one row per
(panel, model name) with the ``canonical`` model it is, and the ``evidence`` for it (the release a
harness's configuration pins, an open checkpoint's name). A name that is listed under no canonical
model is a model of its own.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.io import utf8_text
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError

ALIAS_COLUMNS = ("canonical", "panel", "model", "evidence")
ITEM_MAP_COLUMNS = ("source_id", "upstream_id")


def _read_csv(path: Path, columns: Sequence[str]) -> list[dict[str, str]]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    reader = csv.DictReader(utf8_text(raw, str(path)).removeprefix("\ufeff").splitlines())
    rows = list(reader)
    header = list(reader.fieldnames or [])
    missing = [c for c in columns if c not in header]
    if missing:
        raise InputError(f"missing columns {missing} (needs {list(columns)})", file=str(path))
    for i, row in enumerate(rows, start=2):
        for c in columns:
            if not (row.get(c) or "").strip():
                raise InputError("empty value", file=str(path), row=i, field=c)
    return rows


def _first_row(
    seen: dict[Any, int], key: Any, row: int, message: str, path: Path, fld: str
) -> None:
    """Record ``key`` at ``row``; a key seen before is refused with ``message`` (its ``{first}``:
    the row that holds it already), naming the file, the row and the field."""
    if key in seen:
        raise InputError(
            message.replace("{first}", str(seen[key])), file=str(path), row=row, field=fld
        )
    seen[key] = row


def _resource(name: str) -> Path:
    return Path(str(resources.files("primebench_tasks.data").joinpath("resources", name)))


def read_aliases(path: str | Path | None = None) -> pd.DataFrame:
    """The alias table (columns :data:`ALIAS_COLUMNS`); the shipped one without ``path``. A
    (panel, model) listed twice, or a canonical model with two names in one panel, is refused
    naming the rows."""
    p = Path(path) if path is not None else _resource("model_aliases.csv")
    rows = _read_csv(p, ALIAS_COLUMNS)
    seen: dict[Any, int] = {}
    per_panel: dict[Any, int] = {}
    for i, r in enumerate(rows, start=2):
        _first_row(
            seen,
            (r["panel"], r["model"]),
            i,
            f"{r['model']!r} of panel {r['panel']!r} is listed twice (rows {{first}}, {i})",
            p,
            "model",
        )
        _first_row(
            per_panel,
            (r["canonical"], r["panel"]),
            i,
            f"canonical model {r['canonical']!r} has two names in panel {r['panel']!r} "
            f"(rows {{first}}, {i}): which one it is cannot be told",
            p,
            "canonical",
        )
    return pd.DataFrame(rows, columns=list(ALIAS_COLUMNS))


def read_item_map(path: str | Path) -> dict[str, str]:
    """``source_id`` → ``upstream_id`` of an item-map file (columns :data:`ITEM_MAP_COLUMNS`);
    an id mapped twice, either way, is refused naming the row."""
    p = Path(path)
    out: dict[str, str] = {}
    first: dict[Any, int] = {}
    back: dict[Any, int] = {}
    for i, r in enumerate(_read_csv(p, ITEM_MAP_COLUMNS), start=2):
        s, u = r["source_id"], r["upstream_id"]
        _first_row(first, s, i, f"source id {s!r} is mapped twice", p, "source_id")
        _first_row(
            back,
            u,
            i,
            f"upstream id {u!r} is the target of rows {{first}} and {i}",
            p,
            "upstream_id",
        )
        out[s] = u
    return out


def shipped_item_map(name: str) -> dict[str, str]:
    """An item map shipped in ``primebench_tasks/data/resources/item_maps/<name>.csv``."""
    return read_item_map(_resource("item_maps") / f"{name}.csv")


def relabel_items(
    panel: Panel, benchmark: str, mapping: Mapping[str, str], name: str | None = None
) -> Panel:
    """``panel`` with only ``benchmark``, restricted to the items ``mapping`` names and each
    renamed to its mapped id (``source_index`` keeps the old id); its models are those with a
    score on ``benchmark`` (a model of the panel's other benchmarks only is no row of it). Every
    mapped id must be an item
    of the panel; items the mapping does not name are left out (the caller's mapping says which
    rows it covers: e.g. MMMU's validation rows, not its dev rows). ``name``: the new panel's
    name (default: the panel's)."""
    items = panel.items_of(benchmark).reset_index(drop=True)
    ids = items["item_id"].astype(str)
    absent = sorted(set(mapping) - set(ids))
    if absent:
        raise InputError(
            f"{len(absent)} mapped ids are not items of {benchmark} in panel {panel.name!r} "
            f"(first: {absent[:5]})",
            field="source_id",
        )
    keep = ids.isin(list(mapping)).to_numpy()
    new = items.loc[keep].copy()
    new["source_index"] = new["item_id"].astype(str)
    new["item_id"] = [mapping[i] for i in new["item_id"].astype(str)]
    bench = panel.benchmarks[panel.benchmarks["benchmark"] == benchmark].reset_index(drop=True)
    answered = np.isfinite(panel.matrix(benchmark)[:, keep]).any(axis=1)
    scores = {
        c: {benchmark: panel.matrix(benchmark, c)[answered][:, keep]}
        for c in panel.conditions
        if panel.has_condition(benchmark, c)
    }
    models = panel.model_table.reset_index(drop=True).loc[answered].reset_index(drop=True)
    return Panel.from_dense(name or panel.name, scores, models, bench, new.reset_index(drop=True))


@dataclass
class MergeReport:
    """What a merge did: per source panel, its models added as rows of their own and those
    joined to another source's row (``joined``: this source's name → the row's name); per
    joined model, the items both sources answered and those they scored differently."""

    sources: list[str]
    added: dict[str, list[str]] = field(default_factory=dict)
    joined: dict[str, dict[str, str]] = field(default_factory=dict)
    shared_items: dict[str, int] = field(default_factory=dict)
    disagreements: dict[str, int] = field(default_factory=dict)

    def markdown(self) -> str:
        lines = [
            f"Merged from {', '.join(f'`{s}`' for s in self.sources)} (the first source's score "
            "counts where two sources answered the same item; disagreements are counted, not "
            "averaged).",
            "",
            "| source | models added | models joined to an earlier source's row |",
            "|---|---|---|",
        ]
        for s in self.sources:
            lines.append(f"| {s} | {len(self.added.get(s, []))} | {len(self.joined.get(s, {}))} |")
        if self.shared_items:
            lines += [
                "",
                "| model (row) | items both sources answered | scored differently |",
                "|---|---|---|",
            ]
            for m in sorted(self.shared_items):
                n, d = self.shared_items[m], self.disagreements[m]
                share = f" ({d / n:.0%})" if n else ""
                lines.append(f"| {m} | {n} | {d}{share} |")
        return "\n".join(lines) + "\n"


def merge_panels(
    name: str, sources: Sequence[Panel], benchmark: str, aliases: pd.DataFrame
) -> tuple[Panel, MergeReport]:
    """One panel of ``benchmark`` from ``sources`` (the first is the primary: its benchmark row,
    its item order first, then each later source's new items). A model of a later source joins
    the row of an earlier source's model when the alias table names both under one canonical
    model; it adds a row of its own otherwise (a name already taken by another model is refused).
    Where two sources answered the same item for one model, the earlier source's score is kept
    and a differing score is counted in the report — never averaged. The merged row's metadata
    is the earlier source's, each empty field filled from a later one."""
    if not sources:
        raise InputError("no panel to merge")
    names = [p.name for p in sources]
    if len(set(names)) != len(names):
        raise InputError(f"two sources share a panel name: {names}")
    canon = {(r.panel, r.model): r.canonical for r in aliases.itertuples()}
    report = MergeReport(sources=names)
    item_ids: list[str] = []
    item_rows: list[pd.DataFrame] = []
    seen_items: set[str] = set()
    for p in sources:
        its = p.items_of(benchmark).reset_index(drop=True)
        new = ~its["item_id"].astype(str).isin(seen_items)
        item_rows.append(its.loc[new])
        item_ids += its.loc[new, "item_id"].astype(str).tolist()
        seen_items.update(item_ids)
    col = {i: k for k, i in enumerate(item_ids)}
    rows: dict[str, np.ndarray] = {}
    meta: dict[str, dict[str, Any]] = {}
    row_of_canonical: dict[str, str] = {}
    for p in sources:
        mat = p.matrix(benchmark)
        its = p.items_of(benchmark)["item_id"].astype(str).map(col).to_numpy()
        table = p.model_table.set_index("model")
        for r, model in enumerate(p.model_names):
            c = canon.get((p.name, model))
            target = row_of_canonical.get(c) if c is not None else None
            vals = mat[r]
            if target is None:
                if model in rows:
                    raise InputError(
                        f"model {model!r} of panel {p.name!r} has the name of another source's "
                        "model that the alias table does not join to it: add both to the alias "
                        "table (one canonical model) or rename one",
                        field="model",
                    )
                row = np.full(len(item_ids), np.nan, np.float32)
                row[its] = vals
                rows[model] = row
                meta[model] = dict(table.loc[model])
                report.added.setdefault(p.name, []).append(model)
                if c is not None:
                    row_of_canonical[c] = model
                continue
            row = rows[target]
            old = row[its]
            both = np.isfinite(old) & np.isfinite(vals)
            report.joined.setdefault(p.name, {})[model] = target
            report.shared_items[target] = report.shared_items.get(target, 0) + int(both.sum())
            report.disagreements[target] = report.disagreements.get(target, 0) + int(
                (old[both] != vals[both]).sum()
            )
            fill = ~np.isfinite(old) & np.isfinite(vals)
            row[its[fill]] = vals[fill]
            for k, v in dict(table.loc[model]).items():
                if meta[target].get(k) is None or (
                    isinstance(meta[target][k], float) and np.isnan(meta[target][k])
                ):
                    meta[target][k] = v
    order = sorted(rows)
    models = pd.DataFrame(
        [{"model": m, **meta[m]} for m in order],
        columns=["model", "family", "release_date", "params_b"],
    )
    items = pd.concat(item_rows, ignore_index=True)
    bench = sources[0].benchmarks[sources[0].benchmarks["benchmark"] == benchmark]
    merged = Panel.from_dense(
        name,
        {"vl": {benchmark: np.stack([rows[m] for m in order])}},
        models,
        bench.reset_index(drop=True),
        items,
    )
    return merged, report
