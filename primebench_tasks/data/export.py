"""A panel written back as the files ``primebench panel import`` reads (``primebench panel
export``): what a maintainer copies to start from their own results, and the identity a test
holds (import of an export is the panel it came from).

Per benchmark ``B`` of the panel, into the output folder:

- ``B.csv`` — the scores, one row per item: first column ``item_id``, then one column per model
  (the panel's model order), each cell the score in the benchmark's own range (``score_min`` …
  ``score_max``), empty where the model has no score. A benchmark with runs under other
  conditions than ``vl`` (blind runs, M3IRT's) is written the other way round, one row per model
  (first column ``model``) and a column per item and condition, ``<no_image>ID`` for the blind
  run of item ``ID`` — the import detects either layout;
- ``B.items.jsonl`` — where the panel holds item content: one object per item, ``id``,
  ``question``, ``options`` (a list), ``answer``, ``image`` (a file under ``images/B/``, copied
  as ``<first 16 hex of its SHA-256>-<file name>``: two images of one file name in different
  folders stay two files, one image shared by several items stays one);
- ``models.csv`` — ``model``, ``family``, ``release_date``, ``params_b``;
- ``import.sh`` — the ``primebench panel import`` line of every benchmark, in order, with the
  category and score range that make the import the identity (each value given as
  ``--option=value``, so that a name starting with ``-`` is read as a value).

A benchmark whose files would be the export's own (``models``) is refused before anything is
written, as ``panel import`` refuses it.
"""

from __future__ import annotations

import json
import math
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.importers import CONDITION_PREFIXES, check_benchmark_file_name
from primebench_tasks.data.io import atomic_write_text, file_hash
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError

PREFIX_OF = {cond: prefix for prefix, cond in CONDITION_PREFIXES.items()}
"""Condition → the column prefix the import reads (``blind`` → ``<no_image>``)."""


def _number(x: float) -> str:
    """A score as the CSV writes it: the shortest text that reads back as the same float32."""
    return "" if not math.isfinite(x) else repr(float(np.float32(x))).removesuffix(".0")


def _scores_csv(panel: Panel, b: str, lo: float, hi: float) -> str:
    ids = [str(i) for i in panel.item_ids(b)]
    conds = [c for c in panel.conditions if panel.has_condition(b, c)]

    def native(m: np.ndarray) -> np.ndarray:
        return lo + m.astype(np.float64) * (hi - lo)

    if conds == ["vl"]:
        X = native(panel.matrix(b))
        lines = [",".join(["item_id", *map(_cell, panel.model_names)])]
        lines += [",".join([_cell(i), *(_number(v) for v in X[:, k])]) for k, i in enumerate(ids)]
        return "\n".join(lines) + "\n"
    header = ["model"]
    blocks = []
    for c in conds:
        prefix = "" if c == "vl" else f"<{PREFIX_OF[c]}>"
        header += [f"{prefix}{i}" for i in ids]
        blocks.append(native(panel.matrix(b, c)))
    X = np.concatenate(blocks, axis=1)
    lines = [",".join(map(_cell, header))]
    lines += [
        ",".join([_cell(m), *(_number(v) for v in X[r])]) for r, m in enumerate(panel.model_names)
    ]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """A CSV cell: quoted where it holds a comma, a quote or a line break."""
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _items_jsonl(panel: Panel, b: str, out: Path) -> str | None:
    items = panel.items_of(b)
    if not len(items) or not (items["question"].notna() | items["image_ref"].notna()).all():
        return None
    lines = []
    for r in items.itertuples(index=False):
        rec: dict[str, object] = {"id": str(r.item_id)}
        if r.question is not None and not pd.isna(r.question):
            rec["question"] = str(r.question)
        if isinstance(r.options, str) and r.options:
            rec["options"] = json.loads(r.options)
        if r.answer is not None and not pd.isna(r.answer):
            rec["answer"] = str(r.answer)
        if isinstance(r.image_ref, str) and r.image_ref:
            src = Path(r.image_ref)
            if not src.is_absolute() and panel.root is not None:
                src = Path(panel.root) / src
            if not src.exists():
                raise InputError(
                    f"image {r.image_ref} of item {r.item_id} is not there", field="image_ref"
                )
            name = f"{file_hash(src)}-{src.name}"
            dest = out / "images" / b / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            if not dest.exists():
                shutil.copyfile(src, dest)
            rec["image"] = f"images/{b}/{name}"
        lines.append(json.dumps(rec, ensure_ascii=False, sort_keys=True))
    return "\n".join(lines) + "\n"


def _models_csv(panel: Panel) -> str:
    t = panel.model_table
    lines = ["model,family,release_date,params_b"]
    for r in t.itertuples(index=False):
        fam = getattr(r, "family", None)
        date = getattr(r, "release_date", None)
        params = getattr(r, "params_b", None)
        lines.append(
            ",".join(
                [
                    _cell(str(r.model)),
                    "" if fam is None or pd.isna(fam) else _cell(str(fam)),
                    "" if date is None or pd.isna(date) else str(date),
                    "" if params is None or pd.isna(params) else repr(float(params)),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def export_panel(
    panel: Panel, out: str | Path, benchmarks: Sequence[str] | None = None
) -> list[Path]:
    """Write ``panel`` (its ``benchmarks``, default all) into ``out`` as the module docstring
    says; returns the written paths. An unknown benchmark is an error naming the panel's."""
    out = Path(out)
    names = list(benchmarks or panel.benchmark_names)
    unknown = [b for b in names if b not in panel.benchmark_names]
    if unknown:
        raise InputError(
            f"panel {panel.name!r} has no benchmark {unknown[0]!r} "
            f"(it has {', '.join(panel.benchmark_names)})",
            field="benchmark",
        )
    for b in names:
        check_benchmark_file_name(b)
    out.mkdir(parents=True, exist_ok=True)
    bench = panel.benchmarks.set_index("benchmark")
    written = [atomic_write_text(out / "models.csv", _models_csv(panel))]
    script = [
        "#!/usr/bin/env bash",
        "# written by primebench panel export: the import of these files",
        "set -euo pipefail",
    ]
    for b in names:
        lo, hi = float(bench.loc[b, "score_min"]), float(bench.loc[b, "score_max"])
        written.append(atomic_write_text(out / f"{b}.csv", _scores_csv(panel, b, lo, hi)))
        items = _items_jsonl(panel, b, out)
        line = [
            "primebench", "panel", "import", f"--scores=./{b}.csv", f"--benchmark={b}",
            f"--category={bench.loc[b, 'category']}", f"--score-range={lo:g},{hi:g}",
            "--models=models.csv",
        ]  # fmt: skip
        if items is not None:
            written.append(atomic_write_text(out / f"{b}.items.jsonl", items))
            line += [f"--items=./{b}.items.jsonl"]
        script.append(" ".join(shlex.quote(x) for x in [*line, "--out=P"]))
    written.append(atomic_write_text(out / "import.sh", "\n".join(script) + "\n"))
    return written
