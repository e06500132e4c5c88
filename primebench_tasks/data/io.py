"""Atomic file writes and canonical JSON, so outputs are byte-identical for identical inputs."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from primebench_tasks.errors import InputError


def canonical_json(obj: Any) -> str:
    """Serialise ``obj`` deterministically: sorted keys, two-space indent, trailing newline."""
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def json_scalar(v: Any) -> Any:
    """A numpy scalar as its Python value, NaN as None (missing), for JSON output."""
    if hasattr(v, "item"):
        v = v.item()
    return None if isinstance(v, float) and v != v else v


def content_hash(data: bytes | str, length: int = 16) -> str:
    """Hex SHA-256 prefix of ``data``."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:length]


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def current_umask() -> int:
    """The process umask (read without changing it for longer than the call)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike[str], writer: Callable[[Path], object]) -> Path:
    """Write a file atomically: ``writer(tmp_path)`` fills a temporary file in the same directory,
    which is fsynced and renamed over ``path``. A crash leaves either the old file or the new one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        writer(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp makes 0600: use the umask instead
        os.replace(tmp, target)
        fsync_dir(target.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Atomically write UTF-8 text."""
    return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Atomically write bytes."""
    return atomic_write(path, lambda p: p.write_bytes(data))


def utf8_text(data: bytes, file: str) -> str:
    """``data`` decoded as UTF-8; bytes that are not UTF-8 are an ``InputError`` naming ``file``
    and the line that holds them (never replaced or dropped)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})",
            file=file,
            row=line,
        ) from None


def jsonl_records(
    text: str, file: str, invalid: str = "invalid JSON"
) -> list[tuple[int, dict[str, Any]]]:
    """(1-based line number, object) for every non-blank line of JSONL ``text``; a line that does
    not parse (``InputError`` "<invalid>: <reason>") or is not an object is an error naming
    ``file`` and the line."""
    out = []
    # lines end at "\n" only: str.splitlines would also cut at U+2028, U+0085 and the like,
    # which json.dumps(ensure_ascii=False) leaves raw inside a string (a model's answer)
    for ln, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{invalid}: {exc.msg}", file=file, row=ln) from None
        if not isinstance(rec, dict):
            raise InputError("a JSONL line must be an object", file=file, row=ln)
        out.append((ln, rec))
    return out


MAX_IMAGE_BYTES = 64 * 1024 * 1024
"""Largest item image read (64 MiB): a larger file, or one that is not a regular file (a device
such as ``/dev/zero``, a FIFO), is refused instead of being read whole into memory."""


def check_image_file(path: str | os.PathLike[str], limit: int = MAX_IMAGE_BYTES) -> Path:
    """``path`` if it is a regular file of at most ``limit`` bytes; else ``OSError`` naming it."""
    import stat

    p = Path(path)
    st = p.stat()
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"image {p} is not a regular file")
    if st.st_size > limit:
        raise OSError(f"image {p} is {st.st_size} bytes, above the {limit}-byte limit")
    return p


def read_image_bytes(path: str | os.PathLike[str], limit: int = MAX_IMAGE_BYTES) -> bytes:
    """The bytes of an item image, bounded (see :func:`check_image_file`)."""
    return check_image_file(path, limit).read_bytes()


def read_json_document(path: str | os.PathLike[str], what: str, schema: str) -> dict[str, Any]:
    """A JSON object file of schema ``schema``; unreadable, invalid JSON, not an object or
    another schema → ``InputError`` naming the file (and the line of a JSON error)."""
    from primebench_tasks.errors import InputError

    p = Path(path)
    try:
        doc = json.loads(p.read_text("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", file=str(p)) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{what} is not valid JSON: {exc.msg}", file=str(p), row=exc.lineno
        ) from None
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(
            f"unsupported schema {found!r}, expected {schema}", file=str(p), field="schema"
        )
    return doc
