"""Importers for real per-item data: wide CSV response matrices (either orientation, with condition
prefixes), item metadata (JSON / JSONL), model metadata CSV (incl. AutoJudger's Chinese headers).

Every importer either returns clean tables or raises :class:`~primebench_tasks.errors.InputError`
naming the file, the row (1-based line, header = 1) and the field. Nothing is dropped silently: an
empty cell is a missing record (NaN), never 0.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from primebench_tasks.data.catalogue import lookup
from primebench_tasks.data.io import jsonl_records
from primebench_tasks.data.panel import BENCHMARK_COLUMNS, Panel
from primebench_tasks.errors import InputError, shown

CONDITION_PREFIXES = {"no_image": "blind", "no_question": "no_question", "no_info": "no_info"}
"""Column prefix ``<name>ID`` -> condition. ``<no_image>`` is the blind (image-free) run."""

_PREFIX = re.compile(r"^<([^<>]*)>(.*)$")
_ITEM_FIRST_HEADERS = {"model_sha", "index", "item_id", "id", "pid", "item"}
_MODEL_FIRST_HEADERS = {"", "model", "models", "config", "name"}


def split_condition(key: str, file: str, row: int, field: str) -> tuple[str, str]:
    """``'<no_image>12'`` -> ``('blind', '12')``; ``'12'`` -> ``('vl', '12')``."""
    m = _PREFIX.match(key)
    if not m:
        return "vl", key
    prefix, rest = m.group(1), m.group(2)
    if prefix not in CONDITION_PREFIXES:
        raise InputError(
            f"unknown condition prefix <{prefix}>; known: "
            f"{', '.join('<' + p + '>' for p in CONDITION_PREFIXES)}",
            file=file,
            row=row,
            field=field,
        )
    if not rest:
        raise InputError("condition prefix without an item id", file=file, row=row, field=field)
    return CONDITION_PREFIXES[prefix], rest


@dataclass
class WideMatrix:
    """A response matrix read from a wide CSV: ``values`` (models, columns) with NaN = missing
    (raw metric units, or scaled to [0, 1] when read with ``scale=True``), the model names and,
    per column, its (condition, item id)."""

    models: list[str]
    columns: list[tuple[str, str]]
    values: np.ndarray
    orientation: str

    @property
    def scores(self) -> pd.DataFrame:
        """Long form: model, item_id, condition, score (one row per cell, NaN kept)."""
        M, C = self.values.shape
        conds = np.array([c for c, _ in self.columns], dtype=object)
        items = np.array([i for _, i in self.columns], dtype=object)
        return pd.DataFrame(
            {
                "model": np.repeat(np.array(self.models, dtype=object), C),
                "item_id": np.tile(items, M),
                "condition": np.tile(conds, M),
                "score": self.values.ravel().astype(np.float64),
            }
        )


def _read_csv_rows(path: Path) -> list[list[str]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", file=str(path), row=1) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", file=str(path)) from None
    if "\x00" in text:
        raise InputError("file contains NUL bytes; not a CSV", file=str(path), row=1)
    try:  # the csv module on the whole stream: a quoted line break stays inside its cell
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=str(path)) from None
    rows = [r for r in rows if r]
    if not rows:
        raise InputError("file is empty", file=str(path), row=1)
    if len(rows) < 2 or len(rows[0]) < 2:
        raise InputError(
            "a response matrix needs a header row, at least one data row and at "
            "least one data column",
            file=str(path),
            row=1,
        )
    return rows


def _detect_orientation(rows: list[list[str]], file: str) -> str:
    header_pref = any(_PREFIX.match(h) for h in rows[0][1:])
    first_col_pref = any(_PREFIX.match(r[0]) for r in rows[1:])
    if header_pref and first_col_pref:
        raise InputError(
            "mixed orientation: condition-prefixed ids appear both in the header "
            "and in the first column",
            file=file,
            row=1,
            field=rows[0][0],
        )
    if header_pref:
        return "models-x-items"
    if first_col_pref:
        return "items-x-models"
    first = rows[0][0].strip().lower()
    if first in _ITEM_FIRST_HEADERS:
        return "items-x-models"
    if first in _MODEL_FIRST_HEADERS:
        return "models-x-items"
    raise InputError(
        f"cannot tell the orientation from the header {rows[0][0]!r}; pass "
        "--orientation items-x-models|models-x-items",
        file=file,
        row=1,
        field=rows[0][0],
    )


def _parse_careful(path: Path) -> tuple[list[str], list[str], np.ndarray]:
    """The csv module on the whole text: (header, first-column keys, raw values) with an exact
    file/row/field error for every malformed row or cell."""
    rows = _read_csv_rows(path)
    f = str(path)
    header = rows[0]
    width = len(header)
    for ln, r in enumerate(rows[1:], start=2):
        if len(r) != width:
            raise InputError(f"row has {len(r)} cells, the header has {width}", file=f, row=ln)
    body = np.array([r[1:] for r in rows[1:]], dtype=object)
    flat = body.ravel()
    num = pd.to_numeric(pd.Series(flat), errors="coerce").to_numpy()
    empty = np.array([str(v).strip() == "" for v in flat])
    bad = np.isnan(num) & ~empty & ~np.array([str(v).strip().lower() == "nan" for v in flat])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        r, c = divmod(i, body.shape[1])
        raise InputError(
            f"non-numeric score {shown(flat[i])}", file=f, row=r + 2, field=header[c + 1]
        )
    return header, [r[0] for r in rows[1:]], num.reshape(body.shape)


_NAN_CELLS = ["", "nan", "NaN", "NAN", "Nan"]
_FAST_BLOCK = 1 << 20


def _parse_fast(
    path: Path, lo: float, hi: float, dtype: type, scale: bool
) -> tuple[list[str], list[str], np.ndarray] | None:
    """pyarrow's CSV parser, streamed in blocks into one ``dtype`` array of the values (scaled
    to [0, 1] when ``scale``): no per-cell Python objects, so a 20k × 1k matrix stays within a
    few times its dense size. Returns None for anything unusual (a quoted header, a malformed
    row, a cell that is not a plain number, a value out of range): the careful parser then reads
    the file again and names the row and field."""
    import pyarrow.csv as pacsv

    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    nl = data.find(b"\n")
    head = data[: nl if nl >= 0 else len(data)].rstrip(b"\r")
    if not head.strip() or b'"' in head or b"\r" in head or nl < 0:
        return None
    try:
        header = head.decode("utf-8").split(",")
    except UnicodeDecodeError:
        return None
    if len(header) < 2:
        return None
    names = [f"c{i}" for i in range(len(header))]
    types = {n: pa.float64() for n in names[1:]}
    types[names[0]] = pa.string()
    try:
        reader = pacsv.open_csv(
            pa.BufferReader(data[nl + 1 :]),
            read_options=pacsv.ReadOptions(
                column_names=names, block_size=_FAST_BLOCK, use_threads=False
            ),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types=types,
                null_values=_NAN_CELLS,
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
        keys: list[str] = []
        # one output array sized by the line count (an upper bound on the rows), filled block by
        # block: no list of blocks to concatenate (that would hold the values twice)
        values: np.ndarray = np.empty((data.count(b"\n") + 1, len(names) - 1), dtype=dtype)
        for batch in reader:
            if batch.num_rows == 0:
                continue
            raw = np.empty((batch.num_rows, len(names) - 1), dtype=np.float64)
            for j in range(1, len(names)):
                raw[:, j - 1] = batch.column(j).to_numpy(zero_copy_only=False)
            finite = raw[np.isfinite(raw)]
            if np.isinf(raw).any() or (finite.size and (finite.min() < lo or finite.max() > hi)):
                return None
            r0 = len(keys)
            keys.extend(batch.column(0).to_pylist())
            values[r0 : len(keys)] = (raw - lo) / (hi - lo) if scale else raw
            del raw, finite
    except (pa.ArrowException, UnicodeDecodeError, ValueError):
        return None
    if not keys:
        return None
    return header, keys, values[: len(keys)]


def read_wide_csv(
    path: str | Path,
    orientation: str | None = None,
    score_min: float = 0.0,
    score_max: float = 1.0,
    *,
    scale: bool = False,
    dtype: type = np.float64,
) -> WideMatrix:
    """Read a wide response matrix.

    ``items-x-models``: first column = item id, other columns = models (AutoJudger).
    ``models-x-items``: first column = model, other columns = item ids, optionally prefixed with a
    condition (``<no_image>ID``; M3IRT). Raw scores must lie in [score_min, score_max]; with
    ``scale`` the values are returned as (raw − score_min) / (score_max − score_min), computed
    in float64 and stored as ``dtype``.
    """
    p = Path(path)
    f = str(p)
    lo, hi = float(score_min), float(score_max)
    fast = _parse_fast(p, lo, hi, dtype, scale)
    if fast is None:
        header, row_keys, values = _parse_careful(p)
    else:
        header, row_keys, values = fast
    rows_for_detection = [header] + [[k] for k in row_keys]
    orient = orientation or _detect_orientation(rows_for_detection, f)
    if orient not in ("items-x-models", "models-x-items"):
        raise InputError(f"unknown orientation {orient!r}", file=f, field="orientation")
    col_keys = header[1:]
    seen: dict[str, int] = {}
    for ln, k in enumerate(row_keys, start=2):
        if k in seen:
            raise InputError(
                f"duplicate key {k!r} (also on row {seen[k]})", file=f, row=ln, field=header[0]
            )
        if k.strip() == "":
            raise InputError("empty key", file=f, row=ln, field=header[0])
        if k != k.strip():
            raise InputError(
                f"key {k!r} has leading or trailing white space (ambiguous: remove it)",
                file=f,
                row=ln,
                field=header[0],
            )
        seen[k] = ln
    for k in col_keys:
        if k.strip() == "":
            raise InputError("empty column name", file=f, row=1, field=k)
        if k != k.strip():
            raise InputError(
                f"column name {k!r} has leading or trailing white space (ambiguous: remove it)",
                file=f,
                row=1,
                field=k,
            )
    dup_cols = pd.Index(col_keys).duplicated()
    if dup_cols.any():
        k = col_keys[int(np.flatnonzero(dup_cols)[0])]
        raise InputError(f"duplicate column {k!r}", file=f, row=1, field=k)
    if fast is None:
        if np.isinf(values).any():
            r, c = (int(x[0]) for x in np.nonzero(np.isinf(values)))
            raise InputError("infinite score", file=f, row=r + 2, field=col_keys[c])
        out = (values < lo) | (values > hi)
        if out.any():
            r, c = (int(x[0]) for x in np.nonzero(out))
            raise InputError(
                f"score {shown(values[r, c])} outside the metric range [{score_min}, {score_max}]",
                file=f,
                row=r + 2,
                field=col_keys[c],
            )
        values = ((values - lo) / (hi - lo) if scale else values).astype(dtype, copy=False)

    if orient == "models-x-items":
        columns = [split_condition(k, f, 1, k) for k in col_keys]
        models = list(row_keys)
    else:
        columns = [split_condition(k, f, ln, header[0]) for ln, k in enumerate(row_keys, start=2)]
        models = list(col_keys)
        values = np.ascontiguousarray(values.T)
    dup = pd.Index(columns).duplicated()
    if dup.any():
        cond, item = columns[int(np.flatnonzero(dup)[0])]
        raise InputError(
            f"duplicate key (item_id={item!r}, condition={cond!r})", file=f, field="item_id"
        )
    return WideMatrix(models=models, columns=columns, values=values, orientation=orient)


def read_item_metadata(
    path: str | Path,
    benchmark: str,
    id_field: str | None = None,
    image_dir: str | Path | None = None,
) -> pd.DataFrame:
    """Read item metadata from JSON (a list, or a dict keyed by id) or JSONL.

    Recognised fields: id (``id``/``pid``/``index``/``item_id``), question, options
    (``options``/``choices``, stored as a JSON list or null), answer, image (``image``/
    ``image_path``). Image paths are resolved relative to the file; with ``image_dir`` a path that
    does not exist there is looked up by file name in ``image_dir``. Returns ITEM_COLUMNS.
    """
    p = Path(path)
    f = str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", file=f) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", file=f) from None
    if not text.strip():
        raise InputError("file is empty", file=f, row=1)
    records: list[tuple[int, dict[str, object]]] = []
    if p.suffix == ".jsonl":
        records = jsonl_records(text, f)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", file=f, row=exc.lineno) from None
        if isinstance(data, dict):
            for k, rec in data.items():
                if not isinstance(rec, dict):
                    raise InputError("each value must be an object", file=f, row=f"key={k}")
                rec = dict(rec)
                rec.setdefault("__key__", k)
                records.append((len(records) + 1, rec))
        elif isinstance(data, list):
            for i, rec in enumerate(data, start=1):
                if not isinstance(rec, dict):
                    raise InputError("each element must be an object", file=f, row=i)
                records.append((i, rec))
        else:
            raise InputError("JSON must be a list or an object of items", file=f, row=1)
    id_fields = [id_field] if id_field else ["item_id", "id", "pid", "index", "__key__"]
    rows = []
    seen: set[str] = set()
    for ln, rec in records:
        key = next((rec[k] for k in id_fields if k in rec and rec[k] is not None), None)
        if key is None:
            raise InputError(
                f"item has no id (looked for {id_fields})", file=f, row=ln, field=id_fields[0]
            )
        key = str(key)
        if key in seen:
            raise InputError(f"duplicate item id {key!r}", file=f, row=ln, field="id")
        seen.add(key)
        question = rec.get("question")
        options = rec.get("options", rec.get("choices"))
        if options is not None and not isinstance(options, list):
            raise InputError("options must be a list", file=f, row=ln, field="options")
        image = rec.get("image", rec.get("image_path"))
        image_ref = _resolve_image(image, p.parent, image_dir) if image else None
        if not question and not image_ref:
            raise InputError(
                "item has neither question text nor an image", file=f, row=ln, field="question"
            )
        rows.append(
            {
                "benchmark": benchmark,
                "item_id": key,
                "question": None if question is None else str(question),
                "options": json.dumps(options, ensure_ascii=False) if options else None,
                "answer": None if rec.get("answer") is None else str(rec.get("answer")),
                "image_ref": image_ref,
                "source_index": key,
            }
        )
    return pd.DataFrame(rows)


def _resolve_image(image: object, base: Path, image_dir: str | Path | None) -> str:
    rel = Path(str(image))
    cand = rel if rel.is_absolute() else base / rel
    if cand.exists():
        return str(cand.resolve())
    if image_dir is not None:
        alt = Path(image_dir) / rel.name
        if alt.exists():
            return str(alt.resolve())
    return str(cand)


_DATE_YM = re.compile(r"^(\d{4})[.\-/](\d{1,2})(?:[.\-/](\d{1,2}))?$")


def parse_release_date(value: object, file: str, row: int) -> str | None:
    """``'2024.11'`` -> ``'2024-11-01'`` (AutoJudger's YYYY.M, where .1 is January and .11
    November); ``'2024-03-15'`` stays; empty -> None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    s = str(value).strip()
    if not s:
        return None
    m = _DATE_YM.match(s)
    if not m:
        raise InputError(
            f"unreadable release date {s!r} (expected YYYY.M or YYYY-MM-DD)",
            file=file,
            row=row,
            field="release_date",
        )
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
    if not 1 <= mo <= 12 or not 1 <= d <= 31:
        raise InputError(f"unreadable release date {s!r}", file=file, row=row, field="release_date")
    return f"{y:04d}-{mo:02d}-{d:02d}"


def check_model_name(name: str, file: str, row: int | None = None, field: str = "model") -> None:
    """A model name as a panel stores it: no control character (a line break in a quoted CSV
    cell would split every report's line) and no leading or trailing space — refused, naming
    the file (row, field) and the name, never cleaned."""
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise InputError(
            f"model name {name!r} holds a control character", file=file, row=row, field=field
        )
    if name != name.strip():
        raise InputError(
            f"model name {name!r} has leading or trailing spaces", file=file, row=row, field=field
        )


def read_model_metadata(path: str | Path) -> pd.DataFrame:
    """Read a model metadata CSV into MODEL_COLUMNS.

    Headers: model (``model``/``models``/``name``), family, release date (``release_date``/
    ``date``/``发布时间``), parameters in billions (``params_b``), or AutoJudger's size + unit
    (``参数量`` + ``单位`` = M/B).
    """
    p = Path(path)
    f = str(p)
    try:
        df = pd.read_csv(p, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise InputError("file is empty", file=f, row=1) from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot read CSV: {exc}", file=f) from None
    cols = {c.strip(): c for c in df.columns}
    name_col = next((cols[c] for c in ("model", "models", "name") if c in cols), None)
    if name_col is None:
        raise InputError("no model column (model/models/name)", file=f, row=1, field="model")
    date_col = next((cols[c] for c in ("release_date", "date", "发布时间") if c in cols), None)
    out = []
    for i, r in enumerate(df.to_dict("records"), start=2):
        name = r[name_col].strip()
        if not name:
            raise InputError("empty model name", file=f, row=i, field=name_col)
        check_model_name(name, f, i, name_col)
        params: float | None = None
        if "params_b" in cols and r[cols["params_b"]].strip():
            params = _to_float(r[cols["params_b"]], f, i, "params_b")
        elif "参数量" in cols and r[cols["参数量"]].strip():
            size = _to_float(r[cols["参数量"]], f, i, "参数量")
            unit = r.get(cols.get("单位", ""), "B").strip().upper() or "B"
            if unit not in ("M", "B"):
                raise InputError(f"unit {unit!r} is not M or B", file=f, row=i, field="单位")
            params = size / 1000.0 if unit == "M" else size
        out.append(
            {
                "model": name,
                "family": (r[cols["family"]].strip() or None) if "family" in cols else None,
                "release_date": parse_release_date(r[date_col], f, i) if date_col else None,
                "params_b": params,
            }
        )
    res = pd.DataFrame(out, columns=["model", "family", "release_date", "params_b"])
    dup = res["model"].duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(
            f"duplicate model {res['model'].iloc[i]!r}", file=f, row=i + 2, field=name_col
        )
    return res


def _to_float(v: str, file: str, row: int, field: str) -> float:
    try:
        x = float(v)
    except ValueError:
        raise InputError(f"not a number: {v!r}", file=file, row=row, field=field) from None
    if not math.isfinite(x):
        raise InputError(f"not a finite number: {v!r}", file=file, row=row, field=field)
    return x


@dataclass
class ImportReport:
    """What an import did, for people: counts and anything that was not joined."""

    benchmark: str
    n_models: int
    n_items: int
    n_records: int
    n_missing: int
    conditions: list[str]
    notes: list[str]

    def lines(self) -> list[str]:
        out = [
            f"{self.benchmark}: {self.n_models} models x {self.n_items} items, "
            f"{self.n_records} valid records, {self.n_missing} missing, conditions "
            f"{', '.join(self.conditions)}"
        ]
        return out + [f"  note: {n}" for n in self.notes]


def import_matrix(
    scores_csv: str | Path,
    benchmark: str,
    *,
    category: str | None = None,
    orientation: str | None = None,
    items: str | Path | None = None,
    models: str | Path | None = None,
    image_dir: str | Path | None = None,
    restrict_to_items: bool = False,
    score_range: tuple[float, float] | None = None,
    existing: Panel | None = None,
    name: str | None = None,
    model_aliases: dict[str, str] | None = None,
) -> tuple[Panel, ImportReport]:
    """Import one benchmark's wide response matrix (and optional item and model metadata) into a
    new Panel, or into a copy of ``existing`` (which must not already hold that benchmark).

    With ``items`` given, every scored item id must be in the metadata and vice versa; with
    ``restrict_to_items`` the scores of items outside the metadata are left out and *counted* in the
    report (e.g. MATH-Vision responses on the 3,040-item test set joined to the 304-item testmini).
    ``model_aliases`` renames models (raw name -> canonical name) so that files that spell one
    model differently join on it.
    """
    check_benchmark_file_name(benchmark)
    spec = lookup(benchmark, category)
    lo, hi = score_range if score_range is not None else (spec.score_min, spec.score_max)
    if not hi > lo:
        raise InputError(f"empty metric range [{lo}, {hi}]", field="score_range")
    # scaled to [0, 1] while parsing, float32 as the panel stores it (computed in float64)
    wide = read_wide_csv(scores_csv, orientation, lo, hi, scale=True, dtype=np.float32)
    f = str(scores_csv)
    notes: list[str] = []
    names = list(wide.models)
    for m in names:
        check_model_name(m, f)
    if model_aliases:
        renamed = [model_aliases.get(m, m) for m in names]
        first: dict[str, str] = {}
        for raw, new in zip(names, renamed, strict=True):
            if new in first:
                raise InputError(
                    f"models {first[new]!r} and {raw!r} both map to {new!r} (model aliases)",
                    file=f,
                    field="model",
                )
            first[new] = raw
        names = renamed
    columns = wide.columns
    scored_ids = list(dict.fromkeys(i for _, i in columns))
    if items is not None:
        meta = read_item_metadata(items, benchmark, image_dir=image_dir)
        meta_ids = set(meta["item_id"])
        absent = [i for i in scored_ids if i not in meta_ids]
        if absent and not restrict_to_items:
            raise InputError(
                f"{len(absent)} item id(s) in the response file are absent from the "
                f"metadata file {items} (e.g. {absent[:5]}); pass "
                "--restrict-to-items to import only the metadata's items",
                file=f,
                row=1,
                field="item_id",
            )
        if absent:
            notes.append(
                f"{len(absent)} scored items outside {Path(items).name} left out "
                "(--restrict-to-items)"
            )
        scored_set = set(scored_ids)
        unscored = [i for i in meta["item_id"] if i not in scored_set]
        if unscored:
            raise InputError(
                f"{len(unscored)} item id(s) in the metadata file have no column in "
                f"the response file {scores_csv} (e.g. {unscored[:5]})",
                file=str(items),
                field="id",
            )
        item_table = meta
        missing_images = [r for r in meta["image_ref"].dropna() if not Path(r).exists()]
        if missing_images:
            notes.append(f"{len(missing_images)} image files not found (e.g. {missing_images[0]})")
    else:
        item_table = pd.DataFrame({"benchmark": benchmark, "item_id": scored_ids})
        item_table["source_index"] = item_table["item_id"]
    # the columns of each condition, placed at their item's position in the item table
    pos_of = {str(i): k for k, i in enumerate(item_table["item_id"].astype(str))}
    by_cond: dict[str, list[tuple[int, int]]] = {}
    for col, (cond, item) in enumerate(columns):
        if item in pos_of:
            by_cond.setdefault(cond, []).append((col, pos_of[item]))
    M, n = len(names), len(item_table)
    dense: dict[str, dict[str, np.ndarray]] = {}
    n_records = n_missing = 0
    for cond, pairs in by_cond.items():
        cols = np.array([c for c, _ in pairs], dtype=np.int64)
        at = np.array([q for _, q in pairs], dtype=np.int64)
        whole = len(cols) == wide.values.shape[1] and (cols == np.arange(len(cols))).all()
        if whole and len(at) == n and (at == np.arange(n)).all():
            mat = wide.values  # the common case: no copy
        else:
            mat = np.full((M, n), np.nan, dtype=np.float32)
            mat[:, at] = wide.values[:, cols]
        valid = int(np.isfinite(mat if mat is wide.values else mat[:, at]).sum())
        n_records += valid
        n_missing += M * len(at) - valid
        if cond == "vl" or valid:  # a condition without a single record is not stored
            dense[cond] = {benchmark: mat}
    model_table = pd.DataFrame({"model": names})  # the matrices' row order
    if models is not None:
        meta_m = read_model_metadata(models)
        unknown = sorted(set(meta_m["model"]) - set(names))
        if unknown:
            notes.append(
                f"{len(unknown)} models in {Path(models).name} have no scores "
                f"here (e.g. {unknown[:3]}); not added"
            )
        model_table = model_table.merge(meta_m, on="model", how="left")
        joined = len(set(names) & set(meta_m["model"]))
        dated = int(model_table["release_date"].notna().sum())
        notes.append(
            f"{Path(models).name} has a row for {joined} of the {len(model_table)} models "
            f"scored here ({dated} with a release date)"
        )
    bench_table = pd.DataFrame([{c: getattr(spec, c) for c in BENCHMARK_COLUMNS}])
    report = ImportReport(
        benchmark=benchmark,
        n_models=len(names),
        n_items=len(item_table),
        n_records=n_records,
        n_missing=n_missing,
        conditions=sorted(dense),
        notes=notes,
    )
    if existing is not None:
        if benchmark in existing.benchmark_names:
            raise InputError(
                f"panel {existing.name!r} already holds benchmark {benchmark!r}",
                file=f,
                field="benchmark",
            )
        records = _dense_records(
            dense, names, item_table["item_id"].astype(str).to_numpy(), benchmark
        )
        return merge_records(existing, records, model_table, bench_table, item_table, f), report
    # from_dense puts the rows in the panel's (sorted) model order
    panel = Panel.from_dense(name or benchmark, dense, model_table, bench_table, item_table, f)
    return panel, report


def _dense_records(
    dense: dict[str, dict[str, np.ndarray]], models: list[str], item_ids: np.ndarray, benchmark: str
) -> pd.DataFrame:
    """The valid cells of dense matrices as long records (model, benchmark, item_id,
    condition, score)."""
    parts = []
    names = np.array(models, dtype=object)
    for cond, by_b in dense.items():
        mat = by_b[benchmark]
        r, c = np.nonzero(np.isfinite(mat))
        parts.append(
            pd.DataFrame(
                {
                    "model": names[r],
                    "benchmark": benchmark,
                    "item_id": item_ids[c],
                    "condition": cond,
                    "score": mat[r, c],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def panel_records(panel: Panel) -> pd.DataFrame:
    """The panel's valid records as a long table (model, benchmark, item_id, condition, score)."""
    return (
        panel._scores_table()
        .to_pandas()
        .astype({"model": str, "benchmark": str, "item_id": str, "condition": str})
    )


def merge_records(
    panel: Panel,
    scores: pd.DataFrame,
    models: pd.DataFrame,
    benchmarks: pd.DataFrame,
    items: pd.DataFrame,
    source: str,
) -> Panel:
    """A new Panel = ``panel`` plus the given records and table rows. Model metadata already in
    the panel wins over empty new metadata; duplicate score keys are an error."""
    old_models = panel.models
    new_models = models[~models["model"].isin(old_models["model"])]
    upd = models[models["model"].isin(old_models["model"])].set_index("model")
    merged_models = old_models.set_index("model")
    for col in ("family", "release_date", "params_b"):
        if col in upd.columns:
            fill = upd[col].dropna()
            merged_models.loc[fill.index, col] = merged_models.loc[fill.index, col].where(
                merged_models.loc[fill.index, col].notna(), fill
            )
    merged_models = pd.concat([merged_models.reset_index(), new_models], ignore_index=True)
    old_b = panel.benchmarks
    new_b = benchmarks[~benchmarks["benchmark"].isin(old_b["benchmark"])]
    merged_b = pd.concat([old_b, new_b], ignore_index=True)
    merged_items = pd.concat([panel.items, items], ignore_index=True)
    table = pa.concat_tables(
        [
            pa.Table.from_pandas(panel_records(panel), preserve_index=False),
            pa.Table.from_pandas(
                scores[["model", "benchmark", "item_id", "condition", "score"]].astype(
                    {"score": "float32"}
                ),
                preserve_index=False,
            ),
        ],
        promote_options="permissive",
    )
    out = Panel._from_arrow(panel.name, table, merged_models, merged_b, merged_items, source)
    # the items only grow: every stored embedding still belongs to an item of the new panel;
    # new items have none (missing: NaN rows from Panel.embeddings), never a dropped space
    for space in panel.embedding_spaces:
        ids, vecs = panel._embeddings[space]
        out.set_embeddings(space, ids, vecs)
    out.root = panel.root
    return out


def panel_with_benchmarks(panel: Panel, benchmarks: list[str]) -> Panel:
    """A panel restricted to some benchmarks (its models keep their scores). Names are
    stripped of surrounding spaces (``"A, B"``); an unknown one is an error with the closest
    known names."""
    import difflib

    benchmarks = [b.strip() for b in benchmarks if b.strip()]
    unknown = [b for b in benchmarks if b not in panel.benchmark_names]
    if unknown:
        hints = []
        for b in unknown:
            close = difflib.get_close_matches(b, panel.benchmark_names, n=2, cutoff=0.5)
            hints.append(
                f"{b!r}" + (f" (did you mean {' or '.join(map(repr, close))}?)" if close else "")
            )
        raise InputError(
            f"benchmarks not in panel {panel.name!r}: {', '.join(hints)}; known: "
            f"{', '.join(panel.benchmark_names)}"
        )
    rec = panel_records(panel)
    rec = rec[rec["benchmark"].isin(benchmarks)]
    models = panel.models[panel.models["model"].isin(set(rec["model"]))]
    return Panel.from_records(
        f"{panel.name}[{','.join(benchmarks)}]",
        rec,
        models,
        panel.benchmarks[panel.benchmarks["benchmark"].isin(benchmarks)],
        panel.items[panel.items["benchmark"].isin(benchmarks)],
    )


def saved_panel_text(done: str, out: str | Path, panel: Panel) -> str:
    """What a command that saved ``panel`` with :func:`save_imported_panel` says: "<done>
    <out>: <the panel now in the folder>" — after an append, the merged panel, not the rows
    just added."""
    shown = Panel.load(out) if done == "appended to" else panel
    return f"{done} {out}: {shown}"


def save_imported_panel(panel: Panel, out: str | Path, *, replace: bool = False) -> str:
    """The one rule of every command that writes a whole new panel into a folder (``simulate``,
    ``ingest lmms-eval-logs``, ``ingest vlmeval-records``), as ``panel import`` appends a
    benchmark: into an empty folder the panel is written; into a folder that holds a panel its
    benchmarks are **appended** (models joined by name) — and refused, naming them, where the
    panel already holds one of them; ``replace`` (the commands' ``--replace``) writes the new
    panel in place of the old one. Read, merge and save are one step under the panel's lock, so
    two writers at once both land or one is refused — never one silently replacing the other.
    Returns what was done: ``"wrote"``, ``"appended to"`` or ``"replaced"``."""
    from primebench_tasks.data.panel import panel_lock

    root = Path(out)
    with panel_lock(root, create=True):
        if not (root / "panel.json").exists():
            panel.save(root)
            return "wrote"
        if replace:
            panel.save(root)
            return "replaced"
        existing = Panel.load(root)
        held = sorted(set(existing.benchmark_names) & set(panel.benchmark_names))
        if held:
            raise InputError(
                f"the panel {existing.name!r} in this folder already holds {', '.join(held)}; "
                "give another --out, or pass --replace to write the new panel in its place "
                "(its data is then removed)",
                file=str(root / "panel.json"),
            )
        merged = merge_records(
            existing,
            panel_records(panel),
            panel.models,
            panel.benchmarks,
            panel.items,
            str(root),
        )
        merged.save(root)
        return "appended to"


RESERVED_BENCHMARK_NAMES = ("models",)
"""Benchmark names whose score file would be one of the export's own files (``models.csv``)."""


def check_benchmark_file_name(name: str) -> None:
    """Refuse a benchmark name that cannot be a file of its own beside the export's files: one of
    :data:`RESERVED_BENCHMARK_NAMES`, empty, or holding a path separator."""
    if name in RESERVED_BENCHMARK_NAMES or not name or "/" in name or "\\" in name:
        raise InputError(
            f"benchmark name {name!r} cannot name its own files ({name}.csv would be "
            + ("the export's models.csv" if name in RESERVED_BENCHMARK_NAMES else "no plain file")
            + "): rename the benchmark",
            field="benchmark",
        )
