"""``primebench tasks vlmeval``: LMUData TSVs holding exactly a suite's items.

For each suite benchmark with a VLMEvalKit dataset, the rows of the user's upstream TSV
(``SOURCE/<dataset>.tsv``, e.g. ``~/LMUData/MMMU_DEV_VAL.tsv``) that hold the manifest's items are
written, every column kept, to ``LMUDATA/PrimeBench_<benchmark>.tsv``, and
``LMUDATA/primebench_vlmeval_config.json`` (schema ``primebench.vlmeval/1``) records, per exported
dataset, the upstream dataset whose VLMEvalKit class it runs with, the suite version and the map
from VLMEvalKit ``index`` to the suite's item id.

Which column holds the suite's item ids: the manifest's ids are VLMEvalKit ``index`` values for
suites built from VLMEvalKit panels (AutoJudger), the MMMU ``id`` (``validation_Art_1``) for the
M3IRT panel (VLMEvalKit's own ``MMMU_result_transfer`` keys MMMU's official submission by that
column), and so on. The column is found from the data: the first of :data:`KEY_COLUMNS` (or the
user's ``--key BENCH=COLUMN``) in which every manifest id occurs exactly once; none → an error naming
the TSV and the columns tried.

A suite's design-only benchmarks (#72, #81) are drawn from ``SOURCE/<dataset>.tsv`` by their
design through its cross-harness view (:mod:`harness_adapters.harnesses.vlmeval.design_export`:
the items lmms-eval's generated task draws from its copy of the same data); the config keeps
each one's draw (``design``) and maps the exported ``index`` to the item's content key. One
whose TSV is absent or cannot be read is listed in the config's ``missing`` with why, not
exported, and said by the command.

Shared images: VLMEvalKit TSVs store a repeated image once and let other rows hold the index of
the row that has it (a value of ≤ 64 characters). A kept row that points at a dropped row gets that
row's image inline, so every exported row's image resolves.

Written as a whole as far as one folder of the user's allows: every TSV goes to a temporary file
first and is renamed into place only when all were written; the config — the file that
:func:`harness_adapters.harnesses.vlmeval.datasets.register` reads — is renamed last.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import pandas as pd

from harness_adapters.harnesses.vlmeval.design_export import (
    IMAGE_REF_MAX,
    DesignExport,
    check_index,
    draw_from_tsv,
)
from primebench_tasks.data.io import canonical_json, current_umask
from primebench_tasks.errors import InputError
from primebench_tasks.suite.manifest import SuiteManifest

PREFIX = "PrimeBench_"
CONFIG_NAME = "primebench_vlmeval_config.json"
SCHEMA = "primebench.vlmeval/1"
#: columns tried, in order, for the suite's item ids
KEY_COLUMNS = ("index", "id", "pid", "question_id")


def dataset_name(benchmark: str) -> str:
    """The VLMEvalKit dataset name of a suite benchmark: ``PrimeBench_<benchmark>``."""
    return PREFIX + benchmark.replace("/", "_")


def read_tsv(path: Path, tables: MutableMapping[Path, pd.DataFrame] | None = None) -> pd.DataFrame:
    """A VLMEvalKit TSV as strings, nothing converted (VLMEvalKit's loader reads the exported
    file itself, with its own rules); ``tables``: the TSVs read so far (path → frame), where a
    TSV is looked up first and kept once read."""
    if tables is not None:
        if path not in tables:
            tables[path] = read_tsv(path)
        return tables[path]
    try:
        return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot read the TSV: {exc}", file=str(path)) from None


def key_column(df: pd.DataFrame, ids: list[str], tsv: Path, forced: str | None = None) -> str:
    """The column in which every one of ``ids`` occurs exactly once."""
    tried = [forced] if forced else [c for c in KEY_COLUMNS if c in df.columns]
    if forced and forced not in df.columns:
        raise InputError(
            f"no column {forced!r} (columns: {list(df.columns)})",
            file=str(tsv),
            row=1,
            field=forced,
        )
    want = set(ids)
    for col in tried:
        counts = df[col].value_counts()
        if want.issubset(counts.index) and (counts.reindex(list(want)) == 1).all():
            return col
    detail = []
    for col in tried:
        counts = df[col].value_counts()
        missing = sorted(want - set(counts.index))
        dup = sorted(i for i in want & set(counts.index) if counts[i] > 1)
        detail.append(f"{col!r}: {len(missing)} missing (e.g. {missing[:3]}), {len(dup)} repeated")
    raise InputError(
        f"no column holds every one of the suite's {len(want)} item ids exactly "
        f"once (tried {'; '.join(detail) or 'no candidate column'}); name it with "
        "--key BENCHMARK=COLUMN",
        file=str(tsv),
        field="index",
    )


def inline_dropped_images(keep: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    """``keep`` with every image reference to a row outside ``keep`` replaced by that image."""
    if "image" not in keep.columns:
        return keep
    kept = set(keep["index"])
    by_index = dict(zip(full["index"], full["image"], strict=True))
    out = keep.copy()
    images = []
    for idx, img in zip(out["index"], out["image"], strict=True):
        if 0 < len(img) <= IMAGE_REF_MAX and img not in kept:
            target = by_index.get(img)
            if target is None or len(target) <= IMAGE_REF_MAX:
                raise InputError(
                    f"row {idx}: its image refers to row {img!r}, which holds no image",
                    field="image",
                )
            img = target
        images.append(img)
    out["image"] = images
    return out


def check_text_keys(
    rows: pd.DataFrame, col: str, text_keys: Mapping[str, Any] | None, tsv: Path
) -> None:
    """Each kept row holds the text its item's key was built from (the suite's
    ``upstream.text_keys``: question, options/answers, gold answer): a row whose index is the
    item's but whose content is another's is refused, naming the rows (the TSV is not the one
    the reference records were made on)."""
    if not text_keys:
        return
    from primebench_tasks.data.text_keys import vlmeval_row_key

    wrong = [
        str(r[col])
        for r in rows.to_dict("records")
        if str(r[col]) in text_keys["keys"]
        and vlmeval_row_key(text_keys["rule"], r) != text_keys["keys"][str(r[col])]
    ]
    if wrong:
        raise InputError(
            f"{len(wrong)} rows hold other content than the suite's items of that index "
            f"(question, options or answer differ; e.g. index {wrong[:5]}): the TSV is not "
            "the one the reference records were made on",
            file=str(tsv),
            field=col,
        )


def export_suite(
    manifest: SuiteManifest,
    source: str | Path,
    lmudata: str | Path,
    keys: dict[str, str] | None = None,
    only: list[str] | None = None,
    tables: MutableMapping[Path, pd.DataFrame] | None = None,
) -> dict[str, Path]:
    """Write the suite's TSVs and the config; returns dataset name → TSV path.

    ``keys`` forces the key column of a benchmark; ``only`` exports just those benchmarks (the
    others of the suite are then not runnable in VLMEvalKit, which the config records);
    ``tables``: upstream TSV path → its frame, read once and kept there (the adaptive driver
    exports a round at a time from the same TSVs)."""
    src, dst = Path(source), Path(lmudata)
    keys = dict(keys or {})
    benches = {e.name: (e.category, list(e.item_ids)) for e in manifest.benchmarks}
    drawn = [e.name for e in manifest.design_only]
    unknown = sorted((set(keys) | set(only or [])) - set(benches) - set(drawn))
    if unknown:
        raise InputError(
            f"not benchmarks of suite {manifest.name}: {unknown} (it has "
            f"{sorted([*benches, *drawn])})",
            field="--key/--only",
        )
    wrong = sorted(set(keys) & set(drawn))
    if wrong:
        raise InputError(
            f"{wrong[0]} is design-only: its items are drawn by content, not found by a key column",
            field="--key",
        )
    names: dict[str, str] = {}
    # `a/b` and `a_b` would both be PrimeBench_a_b: one would overwrite the other
    for b in [*benches, *drawn]:
        other = names.setdefault(dataset_name(b), b)
        if other != b:
            raise InputError(
                f"benchmarks {other!r} and {b!r} would both be exported as VLMEvalKit dataset "
                f"{dataset_name(b)!r}; rename one of them in the suite",
                field="benchmark",
            )
    frames: dict[str, pd.DataFrame] = {}
    config: dict[str, Any] = {
        "schema": SCHEMA,
        "suite": manifest.version,
        "suite_name": manifest.name,
        "data": {},
        "not_exported": [],
        "missing": {},
    }
    for b, (_cat, ids) in benches.items():
        if only is not None and b not in only:
            config["not_exported"].append(b)
            continue
        vds = manifest.entry(b).vlmeval_dataset
        if not vds:
            raise InputError(
                f"benchmark {b!r} has no VLMEvalKit dataset name; leave it out with --only",
                field="vlmeval_dataset",
            )
        tsv = src / f"{vds}.tsv"
        if not tsv.exists():
            raise InputError(
                f"upstream TSV of {vds} not found (leave {b} out with --only)", file=str(tsv)
            )
        df = read_tsv(tsv, tables)
        check_index(df, tsv)
        col = key_column(df, ids, tsv, keys.get(b))
        want = set(ids)
        keep = inline_dropped_images(df[df[col].isin(want)], df)
        check_text_keys(keep, col, (manifest.entry(b).upstream or {}).get("text_keys"), tsv)
        name = dataset_name(b)
        frames[name] = keep
        config["data"][name] = {
            "class": "PrimeBench_" + vds,
            "dataset": name,
            "benchmark": b,
            "upstream": vds,
            "key_column": col,
            "n_items": len(keep),
            "index_to_item": dict(zip(keep["index"], keep[col], strict=True)),
        }
    for e in manifest.design_only:
        if only is not None and e.name not in only:
            config["not_exported"].append(e.name)
            continue
        got = _draw(e, src, tables)
        if isinstance(got, str):  # said in the config and by the command, not an error
            config["missing"][e.name] = got
            continue
        name = dataset_name(e.name)
        frames[name] = got.rows
        config["data"][name] = {
            "class": "PrimeBench_" + str(e.vlmeval_dataset),
            "dataset": name,
            "benchmark": e.name,
            "upstream": e.vlmeval_dataset,
            "key_column": "content key",
            "n_items": len(got.rows),
            "index_to_item": got.index_to_item,
            "design": got.draw,
        }
    return _write_all(dst, frames, config)


def _draw(
    entry: Any, src: Path, tables: MutableMapping[Path, pd.DataFrame] | None
) -> DesignExport | str:
    """The draw of design-only ``entry`` from ``src/<its VLMEvalKit dataset>.tsv``, or why it
    cannot be drawn there (no dataset name, no TSV, a TSV the design's view cannot read)."""
    if not entry.vlmeval_dataset:
        return "design-only: the suite names no VLMEvalKit dataset for it"
    tsv = src / f"{entry.vlmeval_dataset}.tsv"
    if not tsv.exists():
        return f"design-only: its dataset's TSV {tsv} was not found"
    try:
        return draw_from_tsv(entry.design, entry.name, read_tsv(tsv, tables), tsv)
    except InputError as exc:
        return f"design-only: not drawn from {tsv}: {exc}"


def _write_all(
    dst: Path, frames: dict[str, pd.DataFrame], config: dict[str, Any]
) -> dict[str, Path]:
    dst.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        for name, df in frames.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=dst)
            os.close(fd)
            df.to_csv(tmp, sep="\t", index=False)
            staged.append((Path(tmp), dst / f"{name}.tsv"))
        fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".tmp", dir=dst)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(canonical_json(config))
        staged.append((Path(tmp), dst / CONFIG_NAME))
        for tmp_path, _ in staged:
            tmp_path.chmod(0o666 & ~current_umask())
    except BaseException:
        for tmp_path, _ in staged:
            tmp_path.unlink(missing_ok=True)
        raise
    for tmp_path, final in staged:  # the config last: it is what makes the datasets visible
        tmp_path.replace(final)
    return {name: dst / f"{name}.tsv" for name in frames}


def read_config(lmudata: str | Path) -> dict[str, Any]:
    """The export's config in ``lmudata``."""
    from primebench_tasks.data.io import read_json_document

    path = Path(lmudata) / CONFIG_NAME
    if not path.exists():
        raise InputError(
            "no PrimeBench export here; run `primebench tasks vlmeval` first", file=str(path)
        )
    return read_json_document(path, "PrimeBench VLMEvalKit export config", SCHEMA)
