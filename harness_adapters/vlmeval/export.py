"""``primebench vlmeval export``: LMUData TSVs holding exactly a suite's items.

For each suite benchmark with a VLMEvalKit dataset, the rows of the user's upstream TSV
(``SOURCE/<dataset>.tsv``) whose ``index`` is in the manifest are written, all columns kept, to
``LMUDATA/PrimeBench_<benchmark>.tsv`` — a file VLMEvalKit's custom-dataset loader accepts — and
``primebench_vlmeval_config.json`` maps each to the runtime class (``--config``)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from primebench_tasks.data.io import atomic_write_text, canonical_json
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import manifest_items

PREFIX = "PrimeBench_"


def dataset_name(benchmark: str) -> str:
    return PREFIX + benchmark.replace("/", "_")


def export_suite(manifest: dict[str, Any], source: str | Path, lmudata: str | Path
                 ) -> dict[str, Path]:
    """Write the filtered TSVs and the config; returns dataset name → TSV path."""
    src, dst = Path(source), Path(lmudata)
    csv.field_size_limit(sys.maxsize)  # base64 images
    out: dict[str, Path] = {}
    config: dict[str, Any] = {"data": {}}
    for cat, by_b in manifest_items(manifest).items():
        for b, ids in by_b.items():
            vds = manifest["categories"][cat]["benchmarks"][b].get("vlmeval_dataset")
            if not vds:
                raise InputError(f"benchmark {b!r} has no VLMEvalKit dataset name",
                                 field="vlmeval_dataset")
            tsv = src / f"{vds}.tsv"
            if not tsv.exists():
                raise InputError(f"upstream TSV of {vds} not found", file=str(tsv))
            df = pd.read_csv(tsv, sep="\t", dtype=str, keep_default_na=False,
                             engine="python", quoting=csv.QUOTE_NONE)
            if "index" not in df.columns:
                raise InputError("no 'index' column", file=str(tsv), row=1, field="index")
            have = set(df["index"])
            missing = [i for i in ids if i not in have]
            if missing:
                raise InputError(f"{len(missing)} manifest item(s) are not in the TSV, e.g. "
                                 f"{missing[:10]}", file=str(tsv), field="index")
            keep = df[df["index"].isin(set(ids))]
            name = dataset_name(b)
            path = dst / f"{name}.tsv"
            atomic_write_text(path, keep.to_csv(sep="\t", index=False,
                                                quoting=csv.QUOTE_NONE, escapechar="\\"))
            out[name] = path
            config["data"][name] = {"class": "PrimeBenchDataset", "dataset": name,
                                    "benchmark": b, "upstream": vds,
                                    "suite": manifest["version"]}
    atomic_write_text(dst / "primebench_vlmeval_config.json", canonical_json(config))
    return out
