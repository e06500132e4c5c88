"""``primebench ingest vlmeval``: VLMEvalKit results into records.

Reads ``<model>_<dataset>_*_result.xlsx`` (per-row ``hit``, MCQ), ``*_results.xlsx``
(``eval_score``, open-ended) and the same tables as ``.tsv`` / ``.json`` (``PRED_FORMAT``), for
PrimeBench datasets; rows map to items by ``index``. Every file must parse before anything is
returned."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from harness_adapters.vlmeval.export import PREFIX
from primebench_tasks.errors import InputError, shown

_KIND = re.compile(r"_(result|results)\.(xlsx|tsv|json)$")


def _parse_name(name: str, datasets: list[str]) -> tuple[str, str, str] | None:
    """(model, dataset, kind) of ``<model>_<dataset>_<judge>_result(s).<ext>``; dataset names
    (which contain underscores, as judges do) are matched against the suite's, longest first."""
    k = _KIND.search(name)
    if not k:
        return None
    for ds in sorted(datasets, key=len, reverse=True):
        pos = name.find(f"_{ds}_")
        if pos > 0:
            return name[:pos], ds, k.group(1)
    return None


def _read(path: Path) -> pd.DataFrame:
    try:
        if path.suffix == ".xlsx":
            return pd.read_excel(path)
        if path.suffix == ".tsv":
            return pd.read_csv(path, sep="\t")
        return pd.read_json(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable table is reported the same way
        raise InputError(f"cannot read results table: {exc}", file=str(path)) from None


def read_results(work_dir: str | Path, benchmarks: dict[str, str]) -> pd.DataFrame:
    """Records from every PrimeBench result file under ``work_dir``. ``benchmarks`` maps
    dataset names (``PrimeBench_<benchmark>``) to panel benchmarks."""
    rows = []
    files = sorted(Path(work_dir).rglob(f"*_{PREFIX}*_result*.*"))
    for f in files:
        parsed = _parse_name(f.name, list(benchmarks))
        if parsed is None:
            continue
        model, ds, kind = parsed
        df = _read(f)
        if "index" not in df.columns:
            raise InputError("no 'index' column", file=str(f), row=1, field="index")
        col = "hit" if kind == "result" else "eval_score"
        if col not in df.columns:
            raise InputError(f"no {col!r} column", file=str(f), row=1, field=col)
        score = pd.to_numeric(df[col], errors="coerce")
        bad = score.isna() | (score < 0) | (score > 1)
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            raise InputError(f"{col} {shown(df[col].iloc[i])} is not a score in [0, 1]",
                             file=str(f), row=i + 2, field=col)
        for idx, s in zip(df["index"], score):
            rows.append({"model": model, "benchmark": benchmarks[ds],
                         "item_id": str(idx), "condition": "vl", "score": float(s)})
    if not rows:
        raise InputError("no PrimeBench result files (<model>_PrimeBench_<benchmark>_<judge>_"
                         "result.xlsx)", file=str(work_dir))
    return pd.DataFrame(rows)
