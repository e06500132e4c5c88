"""A design-only benchmark (#72, #81) drawn from the user's VLMEvalKit TSV: the same items as
lmms-eval's generated task draws from its copy of the dataset.

Every TSV row is read through the design's cross-harness view
(:mod:`primebench_tasks.data.design_views`: the image decoded from its base64, or from the row
whose index it names) into canonical rows — one per item; a POPE row that several splits share is
one item per split — and the design is resolved on them
(:func:`primebench_tasks.suite.content_design.resolve`: content keys, strata, the first n_h of
each stratum in key order). The drawn items become the exported dataset's rows: ``index`` 0..n−1
in draw order (a POPE row drawn in two splits is two rows, each with its one split as
``category``, as lmms-eval asks it), every image inline; the export's config maps each index to
the item's content key and keeps the draw (strata N_h, n_h and the pool's fingerprint), which
the result sidecar carries to the placement (:func:`primebench_tasks.place.design_only.design_answers`).
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from primebench_tasks.data.design_views import design_view
from primebench_tasks.errors import InputError
from primebench_tasks.suite.content_design import ContentDesign, resolve

IMAGE_REF_MAX = 64
"""VLMEvalKit's rule: an ``image`` value this short is the index of the row holding the image."""


def check_index(df: pd.DataFrame, tsv: Path) -> None:
    """A VLMEvalKit TSV has an ``index`` column and no index twice (refused naming the file)."""
    if "index" not in df.columns:
        raise InputError("no 'index' column", file=str(tsv), row=1, field="index")
    if df["index"].duplicated().any():
        dup = df["index"][df["index"].duplicated()].iloc[0]
        raise InputError(f"index {dup!r} occurs more than once", file=str(tsv), field="index")


@dataclass(frozen=True)
class DesignExport:
    """The drawn rows (VLMEvalKit's columns; ``index`` 0..n−1), index → content key, and the
    draw as the placement reads it (``{"strata": {value: [N_h, n_h]}, "fingerprint",
    "items": {key: stratum}}``)."""

    rows: pd.DataFrame
    index_to_item: dict[str, str]
    draw: dict[str, Any]


def _image_value(df: pd.DataFrame, pos: int, by_index: dict[str, str], tsv: Path) -> str:
    """The base64 image of row ``pos`` (a reference to another row's image followed)."""
    data = str(df["image"].iloc[pos])
    if len(data) <= IMAGE_REF_MAX:
        target = by_index.get(data)
        if target is None or len(target) <= IMAGE_REF_MAX:
            raise InputError(
                f"the image refers to row index {data!r}, which holds no image of its own",
                file=str(tsv),
                row=pos + 2,
                field="image",
            )
        data = target
    return data


def _decode(data: str, tsv: Path, pos: int) -> Any:
    from PIL import Image

    try:
        img = Image.open(io.BytesIO(base64.b64decode(data)))
        img.load()
    except Exception as exc:  # noqa: BLE001 - any decode failure is bad input
        raise InputError(
            f"image does not decode: {exc}", file=str(tsv), row=pos + 2, field="image"
        ) from None
    return img


def draw_from_tsv(
    design: ContentDesign, benchmark: str, table: pd.DataFrame, tsv: Path
) -> DesignExport:
    """The design of ``benchmark`` resolved on VLMEvalKit TSV ``tsv`` (its rows as strings:
    ``table``; see the module docstring).
    A design without a view, a TSV lacking a column the view reads, an undecodable image and
    a pool other than the one the suite pins are refused, naming the file, row and field."""
    if design.view is None:
        raise InputError(
            f"{benchmark}: its design keys lmms-eval's own row fields (a suite version before "
            "the cross-harness views); VLMEvalKit cannot draw the same items",
            field="design.view",
        )
    view = design_view(design.view)
    df = table.reset_index(drop=True)
    check_index(df, tsv)
    for col in view.vlmeval_columns:
        if col not in df.columns:
            raise InputError(
                f"{benchmark}: no {col!r} column, which the design's view {view.name!r} reads "
                f"(columns: {list(df.columns)})",
                file=str(tsv),
                row=1,
                field=col,
            )
    records = df.to_dict("records")
    by_index = {str(r["index"]): str(r["image"]) for r in records}
    datas = [_image_value(df, pos, by_index, tsv) for pos in range(len(records))]
    images: dict[str, Any] = {}
    canon: list[tuple[int, dict[str, Any]]] = []
    for pos, (r, data) in enumerate(zip(records, datas, strict=True)):
        if data not in images:
            images[data] = _decode(data, tsv, pos)
        try:
            items = view.vlmeval_rows({**r, "image": images[data]})
        except (KeyError, ValueError, TypeError) as exc:
            raise InputError(
                f"{benchmark}: the row cannot be read by view {view.name!r}: {exc}",
                file=str(tsv),
                row=pos + 2,
            ) from None
        canon.extend((pos, item) for item in items)
    drawn = resolve(lambda k: canon[k][1], design, f"{benchmark} ({tsv})", n_rows=len(canon))
    out = []
    for k, (_key, _h, at) in enumerate(drawn.items):
        pos, item = canon[at]
        row = {**records[pos], "index": str(k), "image": datas[pos]}
        if "stratum" in item and view.strata_column:  # the one split this item is asked in
            row[view.strata_column] = str(item["stratum"])
        out.append(row)
    rows = pd.DataFrame(out, columns=list(df.columns))
    doc = drawn.as_document()
    return DesignExport(
        rows=rows,
        index_to_item={str(k): key for k, (key, _, _) in enumerate(drawn.items)},
        draw={"strata": doc["strata"], "fingerprint": doc["fingerprint"], "items": doc["items"]},
    )
