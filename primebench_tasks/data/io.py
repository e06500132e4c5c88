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


def file_hash(path: str | os.PathLike[str], length: int = 16) -> str:
    """Hex SHA-256 prefix of a file's bytes (read in 1 MiB chunks: a large file is never held
    whole)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:length]


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


def _lone_surrogate(obj: Any, path: str = "") -> str | None:
    """The path (``a.b[2]``) of the first string in ``obj`` holding a lone UTF-16 surrogate
    (what a JSON escape such as ``\\ud800`` decodes to: not text, and no UTF-8 writer takes it),
    or None."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            return path or "(the value)"
        return None
    if isinstance(obj, dict):
        for k, v in obj.items():
            found = _lone_surrogate(k, path) or _lone_surrogate(v, f"{path}.{k}" if path else k)
            if found:
                return found
    elif isinstance(obj, list):
        for j, v in enumerate(obj):
            found = _lone_surrogate(v, f"{path}[{j}]")
            if found:
                return found
    return None


def check_text(obj: Any, file: str, row: int | str | None = None) -> None:
    """``InputError`` naming ``file``, ``row`` and the field where a string of ``obj`` (a parsed
    JSON value) holds a lone surrogate — escaped text that is not Unicode — instead of a
    ``UnicodeEncodeError`` from the first writer that meets it."""
    where = _lone_surrogate(obj)
    if where is not None:
        raise InputError(
            "holds an escaped lone UTF-16 surrogate (such as \\ud800): not text",
            file=file,
            row=row,
            field=where,
        )


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
        if "\\u" in line:
            check_text(rec, file, ln)
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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


MAX_JSON_DEPTH = 64
"""Deepest nesting of objects and lists a document read by :func:`strict_json_loads` may have
(the deepest any PRIMEBench document writes is under 10): a deeper one is refused with a line,
never a ``RecursionError``."""


def _depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON ``text`` (outside strings)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def strict_json_loads(text: str, what: str, file: str) -> Any:
    """``text`` parsed as strict JSON: NaN, Infinity and -Infinity (which Python's parser
    accepts) and nesting deeper than :data:`MAX_JSON_DEPTH` are an ``InputError`` naming
    ``file``, like invalid JSON (with its line)."""
    if _depth(text) > MAX_JSON_DEPTH:
        raise InputError(
            f"{what} nests deeper than {MAX_JSON_DEPTH} levels (not a document this tool writes)",
            file=file,
        )
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{what} is not valid JSON: {exc.msg}", file=file, row=exc.lineno
        ) from None
    except ValueError as exc:
        raise InputError(f"{what} is not valid JSON: {exc}", file=file) from None
    if "\\u" in text:
        check_text(doc, file)
    return doc


def write_json_document(path: str | os.PathLike[str], doc: Any) -> Path:
    """``doc`` (JSON values) written to ``path`` as canonical JSON, atomically (what every typed
    document's ``write`` does)."""
    return atomic_write_text(path, canonical_json(json.loads(json.dumps(doc))))


def read_json_document(
    path: str | os.PathLike[str], what: str, schema: str | None
) -> dict[str, Any]:
    """A JSON object file of schema ``schema`` (None: any schema, which the caller checks);
    unreadable, invalid JSON, not an object or another schema → ``InputError`` naming the file
    (and the line of a JSON error)."""
    from primebench_tasks.errors import InputError

    p = Path(path)
    try:
        doc = strict_json_loads(utf8_text(p.read_bytes(), str(p)), what, str(p))
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", file=str(p)) from None
    if schema is None:
        if not isinstance(doc, dict):
            raise InputError(f"not a {what} document (a JSON object is expected)", file=str(p))
        return doc
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(
            f"unsupported schema {found!r}, expected {schema}", file=str(p), field="schema"
        )
    return doc
