"""The Panel: per-item scores of many models on many benchmarks (docs/architecture.md, "Panel").

On disk a Panel is a directory::

    panel.json                 schema, name, content hash, counts
    scores.parquet             model, benchmark, item_id, condition, score in [0, 1]
    models.parquet             model, family, release_date (YYYY-MM-DD or null), params_b (or null)
    benchmarks.parquet         benchmark, category, metric, metric_kind, score_min, score_max,
                               lmms_eval_task, vlmeval_dataset
    items.parquet              benchmark, item_id, question, options, answer, image_ref, source_index
    embeddings/<space>.npy     float32 (n, d), rows keyed by embeddings/<space>.ids.parquet

Only valid records are stored: an absent (model, benchmark, item, condition) record is missing, and
reads back as NaN, never as 0. In memory a Panel holds one dense float32 matrix of shape
(n_models, n_items) per (condition, benchmark); :meth:`Panel.subset_models` returns a Panel that
shares those matrices and only keeps row positions, so splits never copy the score arrays.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from primebench_tasks.data.catalogue import category_order
from primebench_tasks.data.io import (
    atomic_write_text,
    canonical_json,
    current_umask,
    fsync_dir,
)
from primebench_tasks.errors import ConfigError, InputError, NotFoundError, shown

SCHEMA = "primebench.panel/1"
CONDITIONS = ("vl", "blind")
"""The two standard conditions; importers may add named extra conditions (``no_question``...)."""

SCORE_COLUMNS = ("model", "benchmark", "item_id", "condition", "score")
MODEL_COLUMNS = ("model", "family", "release_date", "params_b")
BENCHMARK_COLUMNS = (
    "benchmark",
    "category",
    "metric",
    "metric_kind",
    "score_min",
    "score_max",
    "lmms_eval_task",
    "vlmeval_dataset",
)
ITEM_COLUMNS = (
    "benchmark",
    "item_id",
    "question",
    "options",
    "answer",
    "image_ref",
    "source_index",
)


PROFILES_FILE = "response_profiles.csv"
"""The reference runs' response profiles beside a panel's data (:attr:`Panel.response_profiles`)."""

PROFILE_KEYS = ("model", "benchmark", "n")
"""Columns every row of ``response_profiles.csv`` must have."""

PROFILE_RANGES: dict[str, tuple[float, float]] = {
    "empty": (0.0, 1.0),
    "unreadable": (0.0, 1.0),
    "truncated": (0.0, 1.0),
    "misread": (0.0, 1.0),
    "top_option": (0.0, 1.0),
    "top_excess": (-1.0, 1.0),
    "yes": (0.0, 1.0),
    "length": (0.0, math.inf),
}
"""The range of each numeric column of a profile (``place.responses``): shares in [0, 1], the
top option's excess over the gold answers in [−1, 1], the median length ≥ 0; empty (NaN) where
a profile has no such value."""


def _read_profiles(path: Path) -> pd.DataFrame:
    """``response_profiles.csv``, checked: its key columns, ``n`` a whole number ≥ 1, every
    share within :data:`PROFILE_RANGES` (finite or empty) and one row per model and benchmark —
    a bad value is an ``InputError`` naming the file, the row (its line) and the field, never a
    limit a run is then held to, and a repeated row never counts as more reference runs."""
    try:
        df = pd.read_csv(path, dtype={"model": str, "benchmark": str, "top_letter": str})
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable response profiles: {exc}", file=str(path)) from None
    missing = [c for c in PROFILE_KEYS if c not in df.columns]
    if missing:
        raise InputError(f"no column {missing[0]!r}", file=str(path), field=missing[0])

    def line(k: int) -> int:
        return int(k) + 2  # the header is line 1

    for col in ("model", "benchmark"):
        bad = df.index[df[col].isna() | (df[col].astype(str).str.strip() == "")]
        if len(bad):
            raise InputError("is empty", file=str(path), row=line(bad[0]), field=col)
    n = pd.to_numeric(df["n"], errors="coerce")
    bad = df.index[~(np.isfinite(n) & (n >= 1) & (n == np.floor(n)))]
    if len(bad):
        raise InputError(
            f"must be a whole number of items ≥ 1, not {df.at[bad[0], 'n']!r}",
            file=str(path),
            row=line(bad[0]),
            field="n",
        )
    df["n"] = n.astype(np.int64)
    for col, (lo, hi) in PROFILE_RANGES.items():
        if col not in df.columns:
            continue
        v = pd.to_numeric(df[col], errors="coerce")
        wrong = (df[col].notna() & v.isna()) | (v.notna() & ~((v >= lo) & (v <= hi)))
        if wrong.any():
            k = df.index[wrong][0]
            raise InputError(
                f"must be a number in [{lo:g}, {hi:g}] or empty, not {df.at[k, col]!r}",
                file=str(path),
                row=line(k),
                field=col,
            )
        df[col] = v.astype(float)
    dup = df.duplicated(["model", "benchmark"], keep="first")
    if dup.any():
        k = df.index[dup][0]
        raise InputError(
            f"repeats the profile of model {df.at[k, 'model']!r} on {df.at[k, 'benchmark']!r} "
            "(a repeated row would count as another reference run)",
            file=str(path),
            row=line(k),
            field="model",
        )
    return df


_FLAT_FILES = ("scores.parquet", "models.parquet", "benchmarks.parquet", "items.parquet")
"""Data files of the pre-versioned layout (directly beside panel.json)."""
_SAVED = frozenset({*_FLAT_FILES, "DONE", "embeddings"})
"""What :meth:`Panel.save` writes into a data folder (embeddings/ holds ``<space>.npy`` and
``<space>.ids.parquet``)."""


PANEL_LOCK = ".panel.lock"
PANEL_LOCK_TIMEOUT = 600.0
"""Seconds a writer waits for another writer of the same panel folder before giving up."""


@contextlib.contextmanager
def panel_lock(
    root: str | Path, timeout: float = PANEL_LOCK_TIMEOUT, create: bool = False
) -> Iterator[None]:
    """Hold an exclusive lock on a panel folder for a whole read-modify-write (``panel import``
    appending a benchmark, ``embed``, ``ingest``): a second writer waits for the first, so two
    appends at once both land instead of one silently replacing the other. ``filelock`` on
    ``<root>/.panel.lock`` (released by the OS if the process dies). ``create``: make the folder
    (a new panel); otherwise a missing folder is left for the loader to report. A folder this
    call made is removed, lock and all, when the write inside fails before anything else is in
    it: a failed first import leaves nothing behind."""
    from filelock import FileLock, Timeout

    folder = Path(root)
    if not create and not folder.is_dir():
        yield
        return
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create the panel folder: {exc.strerror}", file=str(folder)
        ) from None
    lock = FileLock(str(folder / PANEL_LOCK), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise InputError(
            f"another command has been writing this panel for over {timeout:.0f} s "
            f"(lock {folder / PANEL_LOCK}); retry when it is done",
            file=str(folder),
        ) from None
    except OSError as exc:
        raise InputError(
            f"cannot lock the panel folder: {exc.strerror or exc}", file=str(folder)
        ) from None
    try:
        yield
    except BaseException:
        lock.release()
        # a new panel whose first write failed: nothing of it is left, not even the lock
        if made and [p.name for p in folder.iterdir()] == [PANEL_LOCK]:
            (folder / PANEL_LOCK).unlink(missing_ok=True)
            folder.rmdir()
        raise
    else:
        lock.release()


def _written_by_save(folder: Path) -> bool:
    """True when every entry of ``folder`` is one a panel save writes (a leftover of an
    interrupted save); a user's ``data-raw/`` with a CSV in it is not."""
    try:
        entries = list(folder.iterdir())
        if not all(e.name in _SAVED for e in entries):
            return False
        emb = folder / "embeddings"
        return not emb.is_dir() or all(
            e.is_file() and e.name.endswith((".npy", ".ids.parquet")) for e in emb.iterdir()
        )
    except OSError:
        return False


def _previous_layout(root: Path) -> tuple[str | None, bool]:
    """(the data folder the current panel.json names, whether it is of the pre-versioned flat
    layout); (None, False) when there is no readable panel.json of ours."""
    try:
        meta = json.loads((root / "panel.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None, False
    if not isinstance(meta, dict) or "content_hash" not in meta:
        return None, False
    data = meta.get("data")
    return (data if isinstance(data, str) and data.startswith("data-") else None), data is None


def read_panel_meta(root: Path) -> tuple[dict[str, Any], Path]:
    """``panel.json`` of the panel folder ``root``, checked — a JSON object whose ``data``
    (when given) names a folder inside ``root`` (``data-<hash>``, no path) — and the folder
    holding the data files; else an ``InputError`` naming the file and field."""
    meta_path = root / "panel.json"
    if not meta_path.exists():
        raise InputError("not a panel directory (no panel.json)", file=str(root))
    try:
        meta = json.loads(meta_path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=str(meta_path), row=exc.lineno) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=str(meta_path)) from None
    if not isinstance(meta, dict):
        raise InputError(
            f"panel.json holds a JSON {type(meta).__name__}, not an object", file=str(meta_path)
        )
    data = meta.get("data")
    if data is None or data == "":
        return meta, root
    if not isinstance(data, str) or not data.startswith("data-") or Path(data).name != data:
        raise InputError(
            f"data is {data!r}: a panel's data folder is data-<hash> inside the panel folder",
            file=str(meta_path),
            field="data",
        )
    return meta, root / data


def data_dir(path: str | Path) -> Path:
    """The folder holding a saved panel's data files (the version ``panel.json`` names)."""
    return read_panel_meta(Path(path))[1]


def _check_columns(
    df: pd.DataFrame, expected: Sequence[str], file: str, required: Sequence[str] | None = None
) -> pd.DataFrame:
    unknown = [c for c in df.columns if c not in expected]
    if unknown:
        raise InputError(
            f"unknown column(s) {unknown}; expected {list(expected)}",
            file=file,
            row=1,
            field=unknown[0],
        )
    for c in required if required is not None else expected:
        if c not in df.columns:
            raise InputError("required column is missing", file=file, row=1, field=c)
    for c in expected:
        if c not in df.columns:
            df[c] = None
    return df[list(expected)]


def _nullable_str(values: pd.Series) -> pd.Series:
    return values.astype(object).where(values.notna(), None)


@dataclass
class Panel:
    """Per-item scores of models on benchmarks, dense per benchmark.

    Attributes
    ----------
    name : panel name.
    models : one row per model of the *whole* panel (columns ``MODEL_COLUMNS``), sorted by name;
        row position = row of every score matrix.
    benchmarks : one row per benchmark (``BENCHMARK_COLUMNS``), in category (Table 4) order.
    items : one row per item (``ITEM_COLUMNS``); within a benchmark, row order = column order of
        its score matrices (the "item index" of the paper's tie rules).
    """

    name: str
    models: pd.DataFrame
    benchmarks: pd.DataFrame
    items: pd.DataFrame
    _scores: dict[str, dict[str, np.ndarray]]
    _rows: np.ndarray | None = None
    _embeddings: dict[str, tuple[pd.DataFrame, np.ndarray]] = field(default_factory=dict)
    _hash: str | None = None
    root: Path | None = None
    """The directory the panel was loaded from (relative image_ref paths resolve against it)."""
    response_profiles: pd.DataFrame | None = None
    """The reference runs' response profiles (one row per model and benchmark:
    :data:`primebench_tasks.place.responses.PROFILE_COLUMNS`), where the panel's import read
    their raw answers; kept beside the data in ``response_profiles.csv`` — not part of the
    content hash (they change no score)."""

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_records(
        cls,
        name: str,
        scores: pd.DataFrame,
        models: pd.DataFrame,
        benchmarks: pd.DataFrame,
        items: pd.DataFrame,
        source: str = "<records>",
    ) -> Panel:
        """Build a Panel from long tables, validating them (see :func:`validate`).

        ``scores`` holds scaled scores in [0, 1]; rows with NaN scores are missing records and are
        not stored.
        """
        scores = _check_columns(scores.copy(), SCORE_COLUMNS, source)
        table = pa.Table.from_pandas(scores, preserve_index=False)
        return cls._from_arrow(name, table, models, benchmarks, items, source)

    @classmethod
    def _from_arrow(
        cls,
        name: str,
        table: pa.Table,
        models: pd.DataFrame,
        benchmarks: pd.DataFrame,
        items: pd.DataFrame,
        source: str,
    ) -> Panel:
        models, benchmarks, items = _checked_tables(models, benchmarks, items, source)
        scores = _scatter_scores(table, models, benchmarks, items, source)
        return cls._assemble(name, models, benchmarks, items, scores, source)

    @classmethod
    def from_dense(
        cls,
        name: str,
        scores: dict[str, dict[str, np.ndarray]],
        models: pd.DataFrame,
        benchmarks: pd.DataFrame,
        items: pd.DataFrame,
        source: str = "<dense>",
    ) -> Panel:
        """Build a Panel from dense score matrices without a long table (the importers' path
        for large wide matrices: no per-record rows are ever held).

        ``scores[condition][benchmark]`` is (len(models), n_b) in [0, 1] with NaN = missing;
        its rows follow ``models``' row order and its columns the order of that benchmark's rows
        in ``items``. The tables get the same checks as :meth:`from_records`, and the result is
        the same Panel (same ``content_hash``) as the records of those matrices would give."""
        for cond, by_b in scores.items():
            for b, mat in by_b.items():
                n_b = int((items["benchmark"].astype(str) == b).sum())
                if mat.shape != (len(models), n_b):
                    raise InputError(
                        f"scores[{cond!r}][{b!r}] has shape {mat.shape}, expected "
                        f"({len(models)}, {n_b})",
                        file=source,
                        field="score",
                    )
                any_valid = bool(np.isfinite(mat).any())
                lo = np.nanmin(mat) if any_valid else 0.0  # no copy of the values
                hi = np.nanmax(mat) if any_valid else 1.0
                if np.isinf(mat).any() or lo < 0 or hi > 1:
                    raise InputError(
                        f"scores[{cond!r}][{b!r}] has values outside [0, 1]",
                        file=source,
                        field="score",
                    )
        order = np.argsort(models["model"].astype(str).to_numpy(), kind="stable")
        same = bool((order == np.arange(len(order))).all())
        models, benchmarks, items = _checked_tables(models, benchmarks, items, source)
        out: dict[str, dict[str, np.ndarray]] = {}
        for cond, by_b in scores.items():
            out[cond] = {
                b: np.asarray(m if same else m[order], dtype=np.float32) for b, m in by_b.items()
            }
        if "vl" not in out:
            out["vl"] = {}
        counts = items.groupby("benchmark", sort=False).size()
        for b in benchmarks["benchmark"]:
            out["vl"].setdefault(
                b, np.full((len(models), int(counts.get(b, 0))), np.nan, np.float32)
            )
        return cls._assemble(name, models, benchmarks, items, out, source)

    @classmethod
    def _assemble(
        cls,
        name: str,
        models: pd.DataFrame,
        benchmarks: pd.DataFrame,
        items: pd.DataFrame,
        scores: dict[str, dict[str, np.ndarray]],
        source: str,
    ) -> Panel:
        panel = cls(name=name, models=models, benchmarks=benchmarks, items=items, _scores=scores)
        for b, mat in scores.get("vl", {}).items():
            if mat.shape[1] == 0:
                raise InputError(f"benchmark {b!r} has no items", file=source, field="benchmark")
        valid_any = np.zeros(len(models), dtype=bool)
        for by_b in scores.values():
            for mat in by_b.values():
                valid_any |= np.isfinite(mat).any(axis=1)
        if not valid_any.all():
            m = models["model"].iloc[int(np.flatnonzero(~valid_any)[0])]
            raise InputError(
                f"model {m!r} has no valid score", file=source, row=f"model={m}", field="score"
            )
        return panel

    # ------------------------------------------------------------------ persistence
    @classmethod
    def load(cls, path: str | Path) -> Panel:
        """Load and validate a panel directory (the data version ``panel.json`` points to, or
        the files beside it in panels written before versioned saves)."""
        root = Path(path)
        meta_path = root / "panel.json"
        meta, data = read_panel_meta(root)
        if meta.get("schema") != SCHEMA:
            raise InputError(
                f"unsupported schema {meta.get('schema')!r}, expected {SCHEMA}",
                file=str(meta_path),
                field="schema",
            )

        def read_table(name: str) -> pa.Table:
            f = data / name
            if not f.exists():
                raise InputError(f"the panel's {name} is missing", file=str(f))
            try:
                return pq.read_table(f)
            except (OSError, pa.ArrowException) as exc:
                raise InputError(f"unreadable parquet file: {exc}", file=str(f)) from None

        def read(name: str) -> pd.DataFrame:
            return read_table(name).to_pandas()

        table = read_table("scores.parquet")
        panel = cls._from_arrow(
            meta["name"],
            table,
            read("models.parquet"),
            read("benchmarks.parquet"),
            read("items.parquet"),
            str(data / "scores.parquet"),
        )
        emb_dir = data / "embeddings"
        if emb_dir.is_dir():
            for npy in sorted(emb_dir.glob("*.npy")):
                space = npy.name[:-4]
                ids = read(f"embeddings/{space}.ids.parquet")
                panel.set_embeddings(space, ids, np.load(npy))
        panel.root = root
        profiles = root / PROFILES_FILE
        if profiles.is_file():
            panel.response_profiles = _read_profiles(profiles)
        expected = meta.get("content_hash")
        if expected is not None and expected != panel.content_hash:
            raise InputError(
                f"content hash {panel.content_hash} does not match panel.json "
                f"({expected}); the panel files were changed",
                file=str(meta_path),
                field="content_hash",
            )
        return panel

    @classmethod
    def load_default(cls, name: str) -> Panel:
        """Load one of the embedded real panels (see :func:`default_names`)."""
        from primebench_tasks.data.defaults import default_path

        return cls.load(default_path(name))

    def save(self, path: str | Path) -> Path:
        """Write the panel directory as a whole.

        The data files go into a new version folder ``data-<content hash>`` (written under a
        temporary name, fsynced, renamed); then ``panel.json``, which names that folder, is
        replaced atomically — the single commit point; then older data folders are removed. A
        kill or a full disk at any moment leaves either the previous panel or the new one
        loadable, never a mix (the previous data folder is kept until the switch)."""
        if self._rows is not None:
            raise ConfigError("save the full panel, not a model subset")
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        previous, previous_flat = _previous_layout(root)
        version = f"data-{self.content_hash}"
        final = root / version
        try:
            if not (final / "DONE").exists():
                tmp = Path(tempfile.mkdtemp(prefix=".tmp-data-", dir=root))
                os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp makes 0700
                try:
                    self._write_data(tmp)
                    if final.exists():  # an earlier interrupted rename of the same content
                        shutil.rmtree(final)
                    tmp.rename(final)
                    fsync_dir(root)
                except BaseException:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise
            atomic_write_text(
                root / "panel.json", canonical_json({**self.summary_meta(), "data": version})
            )
            if self.response_profiles is not None:
                atomic_write_text(
                    root / PROFILES_FILE,
                    self.response_profiles.to_csv(
                        index=False, lineterminator="\n", float_format="%.6g"
                    ),
                )
        except OSError as exc:
            full = exc.errno in (errno.ENOSPC, errno.EDQUOT) or "requested and" in str(exc)
            why = "the disk is full" if full else f"{exc.strerror or exc}"
            kept = (
                f"the previous panel in {root} is intact"
                if previous is not None or previous_flat
                else f"no panel was written to {root}"
            )
            raise InputError(f"could not save the panel ({why}); {kept}", file=str(root)) from None
        # after the switch: remove only what a panel save wrote — the data folder the previous
        # panel.json named, interrupted saves of ours, and the pre-versioned layout's files when
        # the previous panel.json was of that layout. Anything else in the folder is the user's.
        for old in root.iterdir():
            if old.name == version or not old.is_dir():
                continue
            if old.name == previous or (
                old.name.startswith(("data-", ".tmp-data-")) and _written_by_save(old)
            ):
                shutil.rmtree(old, ignore_errors=True)
        if previous_flat:
            for name in _FLAT_FILES:
                (root / name).unlink(missing_ok=True)
            flat_emb = root / "embeddings"  # (its cache/ folder belongs to `primebench embed`)
            if flat_emb.is_dir():
                for f in [*flat_emb.glob("*.npy"), *flat_emb.glob("*.ids.parquet")]:
                    f.unlink(missing_ok=True)
        return root

    def _write_data(self, d: Path) -> None:
        """Every data file into folder ``d`` (fsynced), and ``DONE`` last."""
        table = self._scores_table()
        # one row group: the dictionaries then read back as one chunk each (fast load)
        pq.write_table(
            table, d / "scores.parquet", compression="zstd", row_group_size=max(1, table.num_rows)
        )
        for fname, df in (
            ("models.parquet", self.models),
            ("benchmarks.parquet", self.benchmarks),
            ("items.parquet", self.items),
        ):
            pq.write_table(
                pa.Table.from_pandas(df, preserve_index=False), d / fname, compression="zstd"
            )
        for space, (ids, vecs) in self._embeddings.items():
            (d / "embeddings").mkdir(exist_ok=True)
            pq.write_table(
                pa.Table.from_pandas(ids, preserve_index=False),
                d / "embeddings" / f"{space}.ids.parquet",
            )
            with open(d / "embeddings" / f"{space}.npy", "wb") as fh:
                np.save(fh, vecs)
        (d / "DONE").write_text(self.content_hash)
        for f in sorted(d.rglob("*")):
            if f.is_file():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
        for sub in (d / "embeddings", d):
            if sub.is_dir():
                fsync_dir(sub)

    def summary_meta(self) -> dict[str, object]:
        """The contents of ``panel.json``."""
        return {
            "schema": SCHEMA,
            "name": self.name,
            "content_hash": self.content_hash,
            "n_models": len(self.models),
            "n_benchmarks": len(self.benchmarks),
            "n_items": len(self.items),
            "conditions": sorted(self._scores),
            "embedding_spaces": sorted(self._embeddings),
        }

    def _scores_table(self) -> pa.Table:
        model_codes, bench_codes, item_codes, cond_codes, vals = [], [], [], [], []
        item_uniques, item_code_of_row = pd.factorize(self.items["item_id"], sort=False)[::-1]
        conds = sorted(self._scores)
        bench_list = list(self.benchmarks["benchmark"])
        starts = self._item_offsets()
        for ci, cond in enumerate(conds):
            for bi, b in enumerate(bench_list):
                mat = self._scores[cond].get(b)
                if mat is None:
                    continue
                r, c = np.nonzero(np.isfinite(mat))
                model_codes.append(r.astype(np.int32))
                bench_codes.append(np.full(len(r), bi, np.int32))
                item_codes.append(item_code_of_row[starts[b] + c].astype(np.int32))
                cond_codes.append(np.full(len(r), ci, np.int32))
                vals.append(mat[r, c])

        def dict_col(codes: list[np.ndarray], values: Sequence[str]) -> pa.DictionaryArray:
            idx = pa.array(np.concatenate(codes) if codes else np.zeros(0, np.int32))
            return pa.DictionaryArray.from_arrays(idx, pa.array(list(values), pa.string()))

        return pa.table(
            {
                "model": dict_col(model_codes, list(self.models["model"])),
                "benchmark": dict_col(bench_codes, bench_list),
                "item_id": dict_col(item_codes, [str(x) for x in item_uniques]),
                "condition": dict_col(cond_codes, conds),
                "score": pa.array(
                    np.concatenate(vals) if vals else np.zeros(0, np.float32), pa.float32()
                ),
            }
        )

    # ------------------------------------------------------------------ access
    @property
    def model_names(self) -> list[str]:
        """Model names of this (possibly subset) panel, in row order."""
        names = self.models["model"].to_numpy()
        return list(names if self._rows is None else names[self._rows])

    @property
    def model_table(self) -> pd.DataFrame:
        """Model metadata of this (possibly subset) panel, in row order."""
        if self._rows is None:
            return self.models
        return self.models.iloc[self._rows].reset_index(drop=True)

    @property
    def benchmark_names(self) -> list[str]:
        return list(self.benchmarks["benchmark"])

    @property
    def conditions(self) -> list[str]:
        return sorted(self._scores)

    def category_of(self, benchmark: str) -> str:
        row = self.benchmarks.loc[self.benchmarks["benchmark"] == benchmark]
        if row.empty:
            raise NotFoundError(f"benchmark {benchmark!r} is not in panel {self.name!r}")
        return str(row["category"].iloc[0])

    def categories(self) -> dict[str, list[str]]:
        """Category -> its benchmarks, both in catalogue order."""
        out: dict[str, list[str]] = {}
        for b, c in zip(self.benchmarks["benchmark"], self.benchmarks["category"], strict=True):
            out.setdefault(c, []).append(b)
        return out

    def _item_offsets(self) -> dict[str, int]:
        return _item_layout(self.items, self.benchmarks)[1]

    def item_ids(self, benchmark: str) -> np.ndarray:
        """Item ids of ``benchmark`` in column order, shape (N_b,), dtype object (str)."""
        return self.items.loc[self.items["benchmark"] == benchmark, "item_id"].to_numpy()

    def items_of(self, benchmark: str) -> pd.DataFrame:
        return self.items.loc[self.items["benchmark"] == benchmark].reset_index(drop=True)

    def has_condition(self, benchmark: str, condition: str) -> bool:
        return benchmark in self._scores.get(condition, {})

    def matrix(self, benchmark: str, condition: str = "vl") -> np.ndarray:
        """Scores of this panel's models on ``benchmark``: float32 (n_models, N_b) in [0, 1],
        NaN = missing. For a model subset this is a fresh array of the subset's rows; for the
        full panel it is the shared array (do not modify it)."""
        try:
            mat = self._scores[condition][benchmark]
        except KeyError:
            raise NotFoundError(
                f"panel {self.name!r} has no {condition!r} scores for {benchmark!r}"
            ) from None
        return mat if self._rows is None else mat[self._rows]

    def subset_models(self, models: Iterable[str]) -> Panel:
        """A Panel over the given models (in the given order) that shares the score arrays."""
        index = pd.Index(self.models["model"])
        names = list(models)
        pos = index.get_indexer(names)
        if (pos < 0).any():
            missing = [n for n, p in zip(names, pos, strict=True) if p < 0]
            raise NotFoundError(f"models not in panel {self.name!r}: {missing[:5]}")
        return Panel(
            name=self.name,
            models=self.models,
            benchmarks=self.benchmarks,
            items=self.items,
            _scores=self._scores,
            _rows=pos.astype(np.int64),
            _embeddings=self._embeddings,
            _hash=self._hash,
            root=self.root,
        )

    # ------------------------------------------------------------------ embeddings
    @property
    def embedding_spaces(self) -> list[str]:
        return sorted(self._embeddings)

    def set_embeddings(self, space: str, ids: pd.DataFrame, vectors: np.ndarray) -> None:
        """Attach item vectors: ``ids`` has columns benchmark, item_id (one row per vector),
        ``vectors`` is float32 (n, d)."""
        if len(ids) != len(vectors):
            raise InputError(
                f"{len(ids)} ids but {len(vectors)} vectors",
                file=f"embeddings/{space}",
                field="item_id",
            )
        ids = ids[["benchmark", "item_id"]].astype(str).reset_index(drop=True)
        self._embeddings[space] = (ids, np.ascontiguousarray(vectors, dtype=np.float32))
        self._hash = None

    def embeddings(self, benchmark: str, space: str) -> tuple[np.ndarray, np.ndarray]:
        """(vectors (N_b, d) float32 with NaN rows for items without one, has (N_b,) bool)."""
        if space not in self._embeddings:
            raise NotFoundError(
                f"panel {self.name!r} has no {space!r} embeddings; compute them with "
                f"`primebench embed` (spaces here: {self.embedding_spaces})"
            )
        ids, vecs = self._embeddings[space]
        sel = (ids["benchmark"] == benchmark).to_numpy()
        pos = pd.Index(ids.loc[sel, "item_id"]).get_indexer(self.item_ids(benchmark))
        out = np.full((len(pos), vecs.shape[1]), np.nan, np.float32)
        has = pos >= 0
        out[has] = vecs[np.flatnonzero(sel)[pos[has]]]
        return out, has

    # ------------------------------------------------------------------ identity
    @property
    def content_hash(self) -> str:
        """SHA-256 prefix over models, benchmarks, items, every score matrix and embedding."""
        if self._hash is None:
            h = hashlib.sha256()
            for df in (self.models, self.benchmarks, self.items):
                h.update(",".join(df.columns).encode("utf-8"))
                h.update(
                    pd.util.hash_pandas_object(df.astype(object), index=False).to_numpy().tobytes()
                )
            for cond in sorted(self._scores):
                for b in self.benchmark_names:
                    mat = self._scores[cond].get(b)
                    if mat is not None:
                        h.update(f"{cond}/{b}/{mat.shape}".encode())
                        h.update(np.where(np.isfinite(mat), mat, -1.0).astype("<f4").tobytes())
            for space in sorted(self._embeddings):
                ids, vecs = self._embeddings[space]
                h.update(pd.util.hash_pandas_object(ids, index=False).to_numpy().tobytes())
                h.update(vecs.astype("<f4").tobytes())
            self._hash = h.hexdigest()[:16]
        return self._hash

    def __repr__(self) -> str:
        return (
            f"Panel({self.name!r}: {len(self.model_names)} models, "
            f"{len(self.benchmarks)} benchmarks, {len(self.items)} items, "
            f"conditions={self.conditions})"
        )


def _item_layout(items: pd.DataFrame, benchmarks: pd.DataFrame) -> tuple[pd.Series, dict[str, int]]:
    """Items per benchmark and the row where each benchmark's items start in ``items`` (items are
    grouped by benchmark in benchmark order)."""
    counts = items.groupby("benchmark", sort=False).size()
    offsets: dict[str, int] = {}
    acc = 0
    for b in benchmarks["benchmark"]:
        offsets[b] = acc
        acc += int(counts.get(b, 0))
    return counts, offsets


def _scatter_scores(
    table: pa.Table,
    models: pd.DataFrame,
    benchmarks: pd.DataFrame,
    items: pd.DataFrame,
    source: str,
) -> dict[str, dict[str, np.ndarray]]:
    """Turn the long scores table into dense float32 matrices, validating keys and ranges."""
    cols = set(table.column_names)
    unknown = sorted(cols - set(SCORE_COLUMNS))
    if unknown:
        raise InputError(f"unknown column(s) {unknown}", file=source, row=1, field=unknown[0])
    for c in SCORE_COLUMNS:
        if c not in cols:
            raise InputError("required column is missing", file=source, row=1, field=c)

    def codes_of(name: str) -> tuple[np.ndarray, list[str]]:
        """Integer codes of a string column and the code -> value list; chunks that share a
        dictionary (one parquet row group read in batches) are not re-hashed."""
        col = table.column(name)
        if not pa.types.is_dictionary(col.type):
            col = pc.dictionary_encode(col.cast(pa.string()))
        values: list[str] = []
        index: dict[str, int] = {}
        parts: list[np.ndarray] = []
        last_dict: pa.Array | None = None
        remap = np.zeros(0, dtype=np.int32)
        for chunk in col.chunks:
            if chunk.null_count:
                i = int(np.flatnonzero(chunk.is_null().to_numpy(zero_copy_only=False))[0])
                raise InputError(
                    "empty value", file=source, row=sum(len(p) for p in parts) + i + 2, field=name
                )
            d = chunk.dictionary
            same = last_dict is not None and (
                d is last_dict
                or (
                    len(d) == len(last_dict)
                    and d.buffers()[-1].address == last_dict.buffers()[-1].address
                )
            )
            if not same:
                codes = []
                for v in d.to_pylist():
                    sv = str(v)
                    if sv not in index:
                        index[sv] = len(values)
                        values.append(sv)
                    codes.append(index[sv])
                remap = np.asarray(codes, dtype=np.int32)
                last_dict = d
            parts.append(remap[chunk.indices.to_numpy(zero_copy_only=False)])
        idx = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        return idx, values

    m_idx, m_vals = codes_of("model")
    b_idx, b_vals = codes_of("benchmark")
    i_idx, i_vals = codes_of("item_id")
    c_idx, c_vals = codes_of("condition")
    score = table.column("score").cast(pa.float32()).to_numpy()

    m_map = pd.Index(models["model"]).get_indexer(m_vals)
    if (m_map < 0).any():
        bad = m_vals[int(np.flatnonzero(m_map < 0)[0])]
        i = int(np.flatnonzero(m_map[m_idx] < 0)[0])
        raise InputError(
            f"model {bad!r} is not in the models table", file=source, row=i + 2, field="model"
        )
    b_map = pd.Index(benchmarks["benchmark"]).get_indexer(b_vals)
    if (b_map < 0).any():
        i = int(np.flatnonzero(b_map[b_idx] < 0)[0])
        raise InputError(
            f"benchmark {b_vals[b_idx[i]]!r} is not in the benchmarks table",
            file=source,
            row=i + 2,
            field="benchmark",
        )
    n_b = len(benchmarks)
    # global item row of every score row, through the (item dictionary code, benchmark) pair
    item_code_of_items = pd.Index(i_vals).get_indexer(items["item_id"])
    item_b = pd.Index(benchmarks["benchmark"]).get_indexer(items["benchmark"]).astype(np.int64)
    row_b = b_map.astype(np.int32)[b_idx]
    if len(i_vals) * n_b <= 64_000_000:  # dense lookup table: O(n), no hashing of every row
        lut = np.full(len(i_vals) * n_b, -1, dtype=np.int32)
        ok_items = item_code_of_items >= 0
        lut[item_code_of_items[ok_items] * n_b + item_b[ok_items]] = np.flatnonzero(ok_items)
        item_row = lut[i_idx.astype(np.int64) * n_b + row_b]
    else:
        items_key = np.where(
            item_code_of_items >= 0, item_code_of_items * n_b + item_b, -1 - np.arange(len(items))
        )
        item_row = pd.Index(items_key).get_indexer(i_idx.astype(np.int64) * n_b + row_b)
    if (item_row < 0).any():
        i = int(np.flatnonzero(item_row < 0)[0])
        raise InputError(
            f"item {i_vals[i_idx[i]]!r} of benchmark {b_vals[b_idx[i]]!r} is not "
            "in the items table",
            file=source,
            row=i + 2,
            field="item_id",
        )
    inf = np.isinf(score)
    if inf.any():  # NaN means missing; infinities are invalid
        i = int(np.flatnonzero(inf)[0])
        raise InputError("score is infinite", file=source, row=i + 2, field="score")
    out_of_range = (score < 0) | (score > 1)
    if out_of_range.any():
        i = int(np.flatnonzero(out_of_range)[0])
        raise InputError(
            f"score {shown(score[i])} is outside [0, 1] after scaling (model "
            f"{m_vals[m_idx[i]]!r}, item {i_vals[i_idx[i]]!r})",
            file=source,
            row=i + 2,
            field="score",
        )
    n_models = len(models)
    counts, offsets = _item_layout(items, benchmarks)
    model_row = m_map.astype(np.int32)[m_idx]
    # group rows by (condition, benchmark) with one stable O(n) sort
    group = c_idx * np.int32(n_b) + item_b.astype(np.int32)[item_row]
    order: np.ndarray | None = None  # None: rows are already grouped, as Panel.save writes them
    if len(group) > 1 and not bool((group[1:] >= group[:-1]).all()):
        order = np.argsort(
            group.astype(np.uint16) if len(c_vals) * n_b < 2**16 else group, kind="stable"
        )  # a radix sort for the usual small group count
        group = group[order]
    bounds = np.searchsorted(group, np.arange(len(c_vals) * n_b + 1))
    del group
    out: dict[str, dict[str, np.ndarray]] = {}
    for ci, cond in enumerate(c_vals):
        by_b: dict[str, np.ndarray] = {}
        for bi, b in enumerate(benchmarks["benchmark"]):
            lo, hi = int(bounds[ci * n_b + bi]), int(bounds[ci * n_b + bi + 1])
            sel = np.arange(lo, hi) if order is None else order[lo:hi]
            if len(sel) == 0 and cond != "vl":
                continue
            n_i = int(counts.get(b, 0))
            flat = model_row[sel].astype(np.int64) * n_i + (item_row[sel] - offsets[b])
            hits = np.bincount(flat, minlength=n_models * n_i) if len(sel) else np.zeros(1)
            if hits.max(initial=0) > 1:
                dup = np.flatnonzero(hits[flat] > 1)
                i = int(np.sort(sel[dup])[1])
                raise InputError(
                    f"duplicate key (model={m_vals[m_idx[i]]!r}, benchmark={b_vals[b_idx[i]]!r}, "
                    f"item_id={i_vals[i_idx[i]]!r}, condition={c_vals[c_idx[i]]!r})",
                    file=source,
                    row=i + 2,
                    field="item_id",
                )
            mat = np.full(n_models * n_i, np.nan, np.float32)
            mat[flat] = score[sel]
            by_b[b] = mat.reshape(n_models, n_i)
        out[cond] = by_b
    if "vl" not in out:
        out["vl"] = {
            b: np.full((n_models, int(counts.get(b, 0))), np.nan, np.float32)
            for b in benchmarks["benchmark"]
        }
    return out


def _checked_tables(
    models: pd.DataFrame, benchmarks: pd.DataFrame, items: pd.DataFrame, source: str
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The model, benchmark and item tables checked and put in panel order: models sorted by
    name, benchmarks in category order, items grouped by benchmark (order kept within one)."""
    models = _check_columns(models.copy(), MODEL_COLUMNS, source, required=("model",))
    benchmarks = _check_columns(
        benchmarks.copy(), BENCHMARK_COLUMNS, source, required=("benchmark", "category")
    )
    items = _check_columns(items.copy(), ITEM_COLUMNS, source, required=("benchmark", "item_id"))
    models["model"] = models["model"].astype(str)
    dup = models["model"].duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(
            f"duplicate model {models['model'].iloc[i]!r}", file=source, row=i + 2, field="model"
        )
    models = models.sort_values("model", kind="stable").reset_index(drop=True)
    models["family"] = _nullable_str(models["family"])
    models["release_date"] = _nullable_str(models["release_date"])
    models["params_b"] = pd.to_numeric(models["params_b"]).astype(float)

    benchmarks = benchmarks.copy()
    for i, row in enumerate(benchmarks.itertuples(index=False)):
        if (
            row.category is None
            or (isinstance(row.category, float) and np.isnan(row.category))
            or str(row.category) == ""
        ):
            raise InputError("benchmark has no category", file=source, row=i + 2, field="category")
    if benchmarks["benchmark"].duplicated().any():
        b = benchmarks["benchmark"][benchmarks["benchmark"].duplicated()].iloc[0]
        raise InputError(f"duplicate benchmark {b!r}", file=source, field="benchmark")
    benchmarks["score_min"] = benchmarks["score_min"].fillna(0.0).astype(float)
    benchmarks["score_max"] = benchmarks["score_max"].fillna(1.0).astype(float)
    for c in ("metric", "metric_kind", "lmms_eval_task", "vlmeval_dataset"):
        benchmarks[c] = _nullable_str(benchmarks[c])
    order = category_order(set(benchmarks["category"]))
    rank = {c: i for i, c in enumerate(order)}
    benchmarks["_o"] = benchmarks["category"].map(rank)
    benchmarks = benchmarks.sort_values(["_o"], kind="stable").drop(columns="_o")
    benchmarks = benchmarks.reset_index(drop=True)

    items = items.copy()
    items["benchmark"] = items["benchmark"].astype(str)
    items["item_id"] = items["item_id"].astype(str)
    known_b = set(benchmarks["benchmark"])
    bad = ~items["benchmark"].isin(known_b)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"item's benchmark {items['benchmark'].iloc[i]!r} is not in the benchmarks table",
            file=source,
            row=i + 2,
            field="benchmark",
        )
    dup = items.duplicated(["benchmark", "item_id"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(
            f"duplicate item {items['item_id'].iloc[i]!r} of benchmark "
            f"{items['benchmark'].iloc[i]!r}",
            file=source,
            row=i + 2,
            field="item_id",
        )
    for c in ("question", "options", "answer", "image_ref", "source_index"):
        items[c] = _nullable_str(items[c])
    # group items by benchmark in benchmark order, keeping within-benchmark order
    b_rank = {b: i for i, b in enumerate(benchmarks["benchmark"])}
    items["_o"] = items["benchmark"].map(b_rank)
    items = items.sort_values("_o", kind="stable").drop(columns="_o").reset_index(drop=True)

    return models, benchmarks, items
