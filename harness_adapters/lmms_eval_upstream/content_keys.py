"""Row keys built by content (``primebench keys lmms-eval``), for upstream datasets whose rows carry
no id that matches the panels' item ids — AI2D in lmms-eval (question, options, answer, image
only) against the AutoJudger panel's VLMEvalKit ``index``.

A row's *fingerprint* is the SHA-256 (first 16 hex digits) of its normalised question (case and
white space folded), its normalised options in order, and a 16 × 16 grey mean-hash of its image:
computed on the upstream rows only (the build and the run read the same copy). ``build_keys``
maps every row of the user's VLMEvalKit TSV to the fingerprint of exactly one upstream row: the
one of the same text, and among several of the same text the one whose image is nearest (16 × 16
grey levels; at most half as far as the next). Not the hash of the TSV's image: VLMEvalKit ships
JPEG in base64, the hub rows PNG, and the mean-hash of a re-encoded image differs for one image
in six (research/design_only/image_key.py). A TSV row that matches no upstream row, or several
(no nearest image, or an upstream fingerprint that several rows share), is an error naming the
rows — a guessed mapping is never written. The mapping file
(``primebench.keys/1``) names both sources, their row counts and content hashes.

At run time the generated task's ``process_docs`` fingerprints the upstream rows the same way and
keeps the manifest's items, in manifest order.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from primebench_tasks.data.io import (
    atomic_write_text,
    canonical_json,
    content_hash,
    read_json_document,
    utf8_text,
)
from primebench_tasks.errors import InputError
from primebench_tasks.suite.content_design import image_hash  # noqa: F401 (the one image hash)

SCHEMA = "primebench.keys/1"
FIELD = "primebench_content_key"
"""The computed row key a content-keyed task filters on."""


def _norm(text: Any) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().lower()


def fingerprint(question: Any, options: Iterable[Any], image: Any) -> str:
    parts = [_norm(question), *(_norm(o) for o in options), image_hash(image)]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def _decode_b64(data: str) -> Any:
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(data)))


def _text(question: Any, options: Iterable[Any]) -> tuple[str, ...]:
    return (_norm(question), *(_norm(o) for o in options))


def _thumbnail(image: Any) -> Any:
    """16 × 16 grey levels (floats) of an image: what a TSV row's image is matched by among the
    upstream rows of its text (a distance, which re-encoding barely moves, not a hash)."""
    import numpy as np

    return np.asarray(image.convert("L").resize((16, 16)), dtype=np.float64)


def vlmeval_rows(tsv: str | Path) -> dict[str, tuple[tuple[str, ...], Any]]:
    """index → (normalised question and options, image) of every row of a VLMEvalKit
    multiple-choice TSV (columns index, question, A, B, ..., image as base64 or another row's
    index)."""
    csv.field_size_limit(sys.maxsize)
    path = Path(tsv)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the TSV: {exc.strerror}", file=str(path)) from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(
            "the TSV is UTF-16; VLMEvalKit's TSVs are UTF-8 (re-save it as UTF-8)", file=str(path)
        )
    text = utf8_text(raw, str(path)).removeprefix("\ufeff")
    rows = list(csv.DictReader(io.StringIO(text, newline=""), delimiter="\t"))
    if not rows:
        raise InputError("no rows", file=str(path))
    for col in ("index", "question", "image"):
        if col not in rows[0]:
            raise InputError(f"no {col!r} column", file=str(path), row=1, field=col)
    images = {r["index"]: r["image"] for r in rows}
    out: dict[str, tuple[tuple[str, ...], Any]] = {}
    letters = [c for c in "ABCDEFGHIJ" if c in rows[0]]
    for n, r in enumerate(rows, start=2):
        data = r["image"]
        if len(data) < 64 and data in images:  # a reference to another row's image
            if data == r["index"] or len(images[data]) < 64:
                raise InputError(
                    f"the image refers to row index {data}, which holds no image of its own",
                    file=str(path),
                    row=n,
                    field="image",
                )
            data = images[data]
        try:
            img = _decode_b64(data)
        except Exception as exc:  # noqa: BLE001 - any decode failure is bad input
            raise InputError(
                f"image does not decode: {exc}", file=str(path), row=n, field="image"
            ) from None
        options = [r[c] for c in letters if r.get(c) not in (None, "", "nan")]
        if r["index"] in out:
            raise InputError(
                f"index {r['index']} appears twice", file=str(path), row=n, field="index"
            )
        out[r["index"]] = (_text(r["question"], options), img)
    return out


def upstream_fingerprints(
    rows: Iterable[Mapping[str, Any]],
    question: str = "question",
    options: str = "options",
    image: str = "image",
) -> list[str]:
    """The fingerprint of every upstream row (field names as in lmms-eval's AI2D rows)."""
    return [fingerprint(r[question], r[options] or [], r[image]) for r in rows]


NEAREST_MARGIN = 0.5
"""A TSV row's image matches the nearest upstream image of its text only when that one is at most
half as far as the next (else the row is ambiguous, never guessed)."""


def _match(
    ours: Mapping[str, tuple[tuple[str, ...], Any]],
    upstream_rows: list[Mapping[str, Any]],
    f: Mapping[str, str],
) -> tuple[dict[str, int], list[str], list[str]]:
    """(TSV index → upstream row position, indexes matching none, indexes matching several): by
    the normalised text, then — among upstream rows of the same text — by the nearest image
    (:func:`_thumbnail` distance; a hash would differ for one image in six between PNG and JPEG
    copies: research/design_only/image_key.py)."""
    import numpy as np

    by_text: dict[tuple[str, ...], list[int]] = {}
    for pos, r in enumerate(upstream_rows):
        by_text.setdefault(_text(r[f["question"]], r[f["options"]] or []), []).append(pos)
    thumbs: dict[int, Any] = {}
    found: dict[str, int] = {}
    missing, ambiguous = [], []
    for index, (text, image) in ours.items():
        cands = by_text.get(text, [])
        if not cands:
            missing.append(index)
            continue
        if len(cands) == 1:
            found[index] = cands[0]
            continue
        mine = _thumbnail(image)
        for pos in cands:
            if pos not in thumbs:
                thumbs[pos] = _thumbnail(upstream_rows[pos][f["image"]])
        dist = sorted((float(np.linalg.norm(thumbs[pos] - mine)), pos) for pos in cands)
        if dist[0][0] > NEAREST_MARGIN * dist[1][0]:
            ambiguous.append(index)
        else:
            found[index] = dist[0][1]
    return found, missing, ambiguous


def build_keys(
    tsv: str | Path,
    upstream_rows: list[Mapping[str, Any]],
    task: str,
    dataset: str,
    source: str,
    fields: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The mapping document: VLMEvalKit index → the fingerprint of the upstream row of the same
    content (text, then the nearest image), checked 1:1 and unique at run time."""
    f = {"question": "question", "options": "options", "image": "image", **(fields or {})}
    ours = vlmeval_rows(tsv)
    theirs = upstream_fingerprints(upstream_rows, f["question"], f["options"], f["image"])
    count: dict[str, int] = {}
    for fp in theirs:
        count[fp] = count.get(fp, 0) + 1
    found, missing, ambiguous = _match(ours, upstream_rows, f)
    # an upstream row whose fingerprint another shares cannot be told apart at run time
    ambiguous += [i for i, pos in found.items() if count[theirs[pos]] > 1]
    shared: dict[int, list[str]] = {}
    for i, pos in found.items():
        shared.setdefault(pos, []).append(i)
    collide = [v for v in shared.values() if len(v) > 1]
    problems = []
    if missing:
        problems.append(f"{len(missing)} TSV rows match no upstream row (e.g. index {missing[:5]})")
    if ambiguous:
        problems.append(
            f"{len(ambiguous)} TSV rows match several upstream rows (e.g. index {ambiguous[:5]})"
        )
    if collide:
        problems.append(f"{len(collide)} groups of TSV rows share one content (e.g. {collide[:3]})")
    if problems:
        raise InputError("no mapping written: " + "; ".join(problems), file=str(tsv))
    return {
        "schema": SCHEMA,
        "task": task,
        "vlmeval_dataset": dataset,
        "upstream_source": source,
        "fields": f,
        "fingerprint": "sha256(question, options, 16x16 grey mean-hash of the image)[:16]",
        "n_vlmeval_rows": len(ours),
        "n_upstream_rows": len(theirs),
        "tsv_hash": content_hash(Path(tsv).read_bytes()),
        "keys": dict(sorted(((i, theirs[pos]) for i, pos in found.items()), key=lambda kv: kv[0])),
    }


def write_keys(doc: Mapping[str, Any], out: str | Path) -> Path:
    return atomic_write_text(out, canonical_json(dict(doc)))


def text_keys_doc(benchmark: str, up: Any, text_keys: Mapping[str, Any] | None) -> dict[str, Any]:
    """The keys document of a benchmark whose upstream rows (``up``: its verified lmms-eval
    entry) are keyed by their text: the item → key table a released manifest carries in
    ``upstream.text_keys`` (built from the reference records)."""
    if not text_keys or text_keys.get("rule") != up.text_key:
        raise InputError(
            f"benchmark {benchmark!r}: lmms-eval's {up.task} rows carry no id of the panel's "
            f"and are keyed by their text ({up.text_key}); the manifest carries no such keys "
            "for its items (a released suite does: tools/release_suites.py)",
            field="upstream.text_keys",
        )
    return {
        "schema": SCHEMA,
        "task": up.task,
        "text_rule": text_keys["rule"],
        "keys": dict(text_keys["keys"]),
    }


def read_keys(path: str | Path) -> dict[str, Any]:
    return read_json_document(path, "keys", SCHEMA)


def load_upstream_rows(folder: str | Path, split: str) -> list[dict[str, Any]]:
    """Rows of a local copy of the upstream dataset (``datasets.save_to_disk`` folder)."""
    import datasets

    where = Path(folder)
    if not where.is_dir():
        raise InputError(
            "no such folder"
            if not where.exists()
            else "a file, not a dataset folder (datasets.save_to_disk writes a folder)",
            file=str(where),
            field="--upstream",
        )
    try:
        ds = datasets.load_from_disk(str(where))
    except (FileNotFoundError, ValueError, OSError) as exc:
        raise InputError(
            f"not a datasets.save_to_disk folder ({exc})", file=str(where), field="--upstream"
        ) from None
    if isinstance(ds, datasets.DatasetDict):
        if split not in ds:
            raise InputError(f"no split {split!r} (has {list(ds)})", file=str(folder))
        ds = ds[split]
    return list(ds)
