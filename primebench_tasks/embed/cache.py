"""Encode a panel's items into an embedding space, resumably, and store the vectors under the
panel (``embeddings/<space>.npy`` + ``embeddings/<space>.ids.parquet``).

Work in progress lives in ``embeddings/cache/<encoder>/<space>/chunk-NNNNNN.npz``: each chunk
holds the ids, the item content hashes and the vectors of one batch and is written atomically the
moment it is done, so an interrupted run resumes where it stopped. A cached vector is reused only
while its encoder id and the item's content hash (question, options, image bytes) are unchanged; a
changed item is re-encoded. A bad image never aborts the run: the item is recorded as failed
(no ``vl`` vector: no cell, δ = 0) and reported at the end.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.io import atomic_write, check_image_file, read_image_bytes
from primebench_tasks.data.panel import Panel
from primebench_tasks.embed.encoders import Encoder
from primebench_tasks.errors import ConfigError, InputError
from primebench_tasks.progress import progress_bar

SPACES = ("text", "vl")


def item_text(question: Any, options: Any) -> str:
    """The text an encoder sees: the question, then the options."""
    q = "" if question is None else str(question)
    if options:
        opts = json.loads(options) if isinstance(options, str) else options
        if opts:
            q += "\nOptions: " + " | ".join(str(o) for o in opts)
    return q


def image_path(panel_dir: Path, ref: str | None) -> Path | None:
    if not ref:
        return None
    p = Path(ref)
    return p if p.is_absolute() else panel_dir / p


def content_hashes(items: pd.DataFrame, panel_dir: Path, with_images: bool = True) -> list[str]:
    """Per item: SHA-256 prefix of its text and (``with_images``) its image file's bytes — or,
    for an image that is missing or cannot be read (not a regular file, over the size limit), its
    path and the reason, so the item fails when it is encoded instead of stopping the run. The
    ``text`` space reads no image at all."""
    out = []
    for q, o, ref in zip(items["question"], items["options"], items["image_ref"], strict=True):
        h = hashlib.sha256(item_text(q, o).encode("utf-8"))
        ip = image_path(panel_dir, ref) if with_images else None
        if ip is not None:
            try:
                h.update(read_image_bytes(ip))
            except OSError as exc:
                h.update(f"unreadable:{ip}:{exc}".encode())
        out.append(h.hexdigest()[:16])
    return out


@dataclass
class EmbedReport:
    space: str
    encoder: str
    n_items: int
    n_cached: int = 0
    n_encoded: int = 0
    seconds: float = 0.0
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # benchmark, item, why

    @property
    def items_per_second(self) -> float:
        return self.n_encoded / self.seconds if self.seconds > 0 else float("nan")

    def lines(self) -> list[str]:
        out = [
            f"{self.space} space, {self.encoder}: {self.n_items} items, {self.n_cached} from "
            f"cache, {self.n_encoded} encoded in {self.seconds:.1f}s "
            f"({self.items_per_second:.1f} items/s)"
        ]
        if self.failed:
            out.append(f"{len(self.failed)} item(s) failed and have no {self.space} vector:")
            out += [f"  {b}/{i}: {why}" for b, i, why in self.failed[:20]]
        return out


def _load_cache(cdir: Path) -> dict[tuple[str, str], tuple[str, np.ndarray]]:
    cache: dict[tuple[str, str], tuple[str, np.ndarray]] = {}
    dim = None
    for f in sorted(cdir.glob("chunk-*.npz")):
        z = np.load(f, allow_pickle=False)
        vecs = z["vectors"]
        if dim is not None and vecs.shape[1] != dim:
            raise InputError(
                f"cached vectors have dimension {vecs.shape[1]}, earlier chunks "
                f"{dim}: the cache was written by another encoder",
                file=str(f),
            )
        dim = vecs.shape[1]
        for b, i, h, v in zip(z["benchmark"], z["item_id"], z["hash"], vecs, strict=True):
            cache[(str(b), str(i))] = (str(h), v)
    return cache


def _open_image(path: Path) -> Any:
    from PIL import Image

    check_image_file(path)  # a FIFO, a device or an oversized file is refused before reading
    with Image.open(path) as im:
        return im.convert("RGB")


def embed_panel(
    panel: Panel,
    panel_dir: str | Path,
    encoder: Encoder,
    space: str,
    batch: int = 64,
    progress: Callable[[str], None] | None = None,
) -> tuple[Panel, EmbedReport]:
    """Encode every item of ``panel`` into ``space`` (``text`` or ``vl``), resuming from the
    cache, attach the vectors to the panel and save it. Returns the panel and a report."""
    if space not in SPACES:
        raise ConfigError(f"space must be one of {SPACES}")
    root = Path(panel_dir)
    say = progress or (lambda _m: None)
    items = panel.items
    empty = [
        (b, i)
        for b, i, q, ref in zip(
            items["benchmark"], items["item_id"], items["question"], items["image_ref"], strict=True
        )
        if not q and not ref
    ]
    if empty:
        raise InputError(
            f"{len(empty)} item(s) have neither text nor an image, e.g. "
            f"{empty[0][0]}/{empty[0][1]}",
            file=str(root / "items.parquet"),
            row=f"item_id={empty[0][1]}",
            field="question",
        )
    key = hashlib.sha256(encoder.id.encode()).hexdigest()[:12]
    cdir = root / "embeddings" / "cache" / key / space
    cdir.mkdir(parents=True, exist_ok=True)
    (cdir.parent / "encoder.txt").write_text(encoder.id + "\n")
    cache = _load_cache(cdir)
    hashes = content_hashes(items, root, with_images=space != "text")
    rep = EmbedReport(space=space, encoder=encoder.id, n_items=len(items))
    todo = []
    for n, (b, i, h) in enumerate(zip(items["benchmark"], items["item_id"], hashes, strict=True)):
        hit = cache.get((b, i))
        if hit is not None and hit[0] == h:
            rep.n_cached += 1
        else:
            todo.append(n)
    start = time.perf_counter()
    chunk_no = len(list(cdir.glob("chunk-*.npz")))
    dim = next(iter(cache.values()))[1].shape[0] if cache else None
    bar = progress_bar(len(todo), f"embed {space} ({encoder.id})", unit="item")
    for s in range(0, len(todo), batch):
        rows = todo[s : s + batch]
        texts = [item_text(items["question"].iloc[r], items["options"].iloc[r]) for r in rows]
        failed_rows: set[int] = set()
        if space == "text":
            vecs = encoder.encode_text(texts)
        else:
            imgs: list[Any] = []
            for r in rows:
                ip = image_path(root, items["image_ref"].iloc[r])
                if ip is None:
                    imgs.append(None)
                    continue
                try:
                    imgs.append(_open_image(ip))
                except Exception as exc:  # noqa: BLE001 - any unreadable image is recorded
                    rep.failed.append(
                        (
                            items["benchmark"].iloc[r],
                            items["item_id"].iloc[r],
                            f"{type(exc).__name__}: {exc}",
                        )
                    )
                    failed_rows.add(r)
                    imgs.append(None)
            vecs = encoder.encode_vl(texts, imgs)
        vecs = np.asarray(vecs, dtype=np.float32)
        if dim is not None and vecs.shape[1] != dim:
            raise InputError(
                f"new vectors have dimension {vecs.shape[1]} but the cache holds {dim}",
                file=str(cdir),
            )
        dim = vecs.shape[1]
        # failed items are not cached: the next run tries them again
        keep = [j for j, r in enumerate(rows) if r not in failed_rows]
        payload = {
            "benchmark": np.array([items["benchmark"].iloc[rows[j]] for j in keep]),
            "item_id": np.array([items["item_id"].iloc[rows[j]] for j in keep]),
            "hash": np.array([hashes[rows[j]] for j in keep]),
            "vectors": vecs[keep].reshape(len(keep), vecs.shape[1]),
        }

        def write(p: Path, payload: dict[str, np.ndarray] = payload) -> None:
            with open(p, "wb") as fh:
                # numpy's stub reads **payload as possibly holding allow_pickle
                np.savez(fh, **payload)  # type: ignore[arg-type]

        atomic_write(cdir / f"chunk-{chunk_no:06d}.npz", write)
        chunk_no += 1
        for r, v in zip(rows, vecs, strict=True):
            cache[(items["benchmark"].iloc[r], items["item_id"].iloc[r])] = (
                "failed" if r in failed_rows else hashes[r],
                v,
            )
        rep.n_encoded += len(rows)
        bar.update(len(rows))
    bar.close()
    rep.seconds = time.perf_counter() - start
    if todo:
        say(f"embed {space}: {rep.n_encoded} items, {rep.n_encoded / rep.seconds:.1f} items/s")
    ids = items[["benchmark", "item_id"]].reset_index(drop=True)
    vecs = np.stack(
        [cache[(b, i)][1] for b, i in zip(ids["benchmark"], ids["item_id"], strict=True)]
    )
    ok = np.isfinite(vecs).all(axis=1)
    panel.set_embeddings(space, ids[ok].reset_index(drop=True), vecs[ok])
    panel.save(root)
    return panel, rep


def import_vectors(path: str | Path) -> tuple[pd.DataFrame, np.ndarray]:
    """Precomputed vectors: ``X.npy`` with ``X.ids.parquet`` or ``X.ids.csv`` (benchmark,
    item_id, one row per vector), or one parquet with benchmark, item_id and a list column
    ``vector``."""
    p = Path(path)
    if not p.exists():
        raise InputError("file does not exist", file=str(p))
    if p.suffix == ".npy":
        vecs = np.load(p)
        for ext in (".ids.parquet", ".ids.csv"):
            idp = p.with_suffix(ext)
            if idp.exists():
                ids = (
                    pd.read_parquet(idp) if ext.endswith("parquet") else pd.read_csv(idp, dtype=str)
                )
                break
        else:
            raise InputError("no ids file next to it (.ids.parquet or .ids.csv)", file=str(p))
    elif p.suffix == ".parquet":
        df = pd.read_parquet(p)
        if "vector" not in df.columns:
            raise InputError("no 'vector' column", file=str(p), row=1, field="vector")
        ids = df[["benchmark", "item_id"]]
        vecs = np.stack(df["vector"].to_numpy())
    else:
        raise InputError("expected .npy (+ ids) or .parquet", file=str(p))
    for c in ("benchmark", "item_id"):
        if c not in ids.columns:
            raise InputError("required column is missing", file=str(p), row=1, field=c)
    if len(ids) != len(vecs) or vecs.ndim != 2:
        raise InputError(f"{len(ids)} ids for vectors of shape {vecs.shape}", file=str(p))
    return ids.astype(str).reset_index(drop=True), np.asarray(vecs, dtype=np.float32)
