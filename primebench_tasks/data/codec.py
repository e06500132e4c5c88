"""One codec for the typed documents (#81): a dataclass's fields ↔ JSON values, read from its
type hints, so no document writes its own serializer.

**Writing** (:func:`encode`): each field under its own name; a nested dataclass written the same
way, a tuple as a list, a mapping as an object. A field declared with :func:`optional` is left
out where it is None, with :func:`omitted_if` where its predicate holds (e.g. an empty list); a
field's ``encode`` maps its value first (e.g. rounding to 6 decimals); a :func:`rest` field's
keys are written beside the declared ones.

**Reading** (:func:`decode`): every field checked against its hint — ``str``; ``int`` (a whole
number, not a bool); ``float`` (a finite number, not a bool, kept as written); ``bool``; None
only where the hint allows it; ``list``/``tuple``/``dict`` (string keys) of those; a nested
dataclass; ``Any`` (kept as written). A missing field with no default, a key the document does
not declare (unless it keeps them in a :func:`rest` field), or a value of another type is a
:class:`DocumentError` naming the field's path from the document's root
(``models.m.benchmarks.MMMU.score.value``); after its fields a document's ``check_json`` tests
what a type cannot say (a score in [0, 1]).

:class:`Document` gives a dataclass ``to_json``/``from_json`` and, for a file, ``write``/``read``
(canonical JSON, atomic): ``from_json`` turns a DocumentError into one :class:`InputError` line
naming the file and the field. Hand-written because the documents' shapes predate it (which
fields are left out where empty, numbers kept as written) and their outputs stay byte-identical;
pydantic v2 would add 60 ms and a dependency to ``import primebench_tasks`` (this module: 15 ms)
for plain dataclasses that numpy code builds, and msgspec would need hooks of its own for those
rules.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from primebench_tasks.errors import InputError

D = TypeVar("D", bound="Document")
_OMIT = "primebench.codec.omit"
_ENCODE = "primebench.codec.encode"
_REST = "primebench.codec.rest"
_DOCUMENTS: dict[str, type] = {}
"""Every :class:`Document` subclass by name: how a hint names a document that its module
imports only for type checking (the module stays light)."""
_HINTS: dict[type, dict[str, Any]] = {}


class DocumentError(ValueError):
    """A value the codec cannot read: ``path`` (dotted from the document's root; '' for the
    root) and ``message``."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)


def _is_none(v: Any) -> bool:
    return v is None


def _is_empty(v: Any) -> bool:
    return v is None or (hasattr(v, "__len__") and len(v) == 0)


def optional() -> Any:
    """A field left out of the JSON where it is None (and read back as None where absent)."""
    return dataclasses.field(default=None, metadata=_meta(_is_none, None))


def omitted_if(
    predicate: Callable[[Any], bool] = _is_empty,
    *,
    default_factory: Callable[[], Any] = list,
) -> Any:
    """A field left out of the JSON where ``predicate`` holds (default: None or empty), read
    back as ``default_factory()`` where absent."""
    return dataclasses.field(default_factory=default_factory, metadata=_meta(predicate, None))


def encoded(encode: Callable[[Any], Any]) -> Mapping[str, Any]:
    """The metadata of a field always written, its value mapped by ``encode`` first:
    ``field(metadata=encoded(fn))``."""
    return _meta(None, encode)


def rest() -> Any:
    """The field that keeps the keys a document does not declare (another writer's), as
    written: read into it instead of refused, written back beside the declared fields."""
    return dataclasses.field(default_factory=dict, metadata={_REST: True})


def _meta(omit: Callable[[Any], bool] | None, encode: Callable[[Any], Any] | None) -> Any:
    return {k: v for k, v in ((_OMIT, omit), (_ENCODE, encode)) if v is not None}


def encode(value: Any) -> Any:
    """``value`` as JSON values (see the module docstring); scalars as they are."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if f.metadata.get(_REST):
                out.update(encode(v))
                continue
            omit = f.metadata.get(_OMIT)
            if omit is not None and omit(v):
                continue
            mapper = f.metadata.get(_ENCODE)
            out[f.name] = encode(v if mapper is None else mapper(v))
        return out
    if isinstance(value, Mapping):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    return value


def decode(cls: type[Any], d: Any, path: str = "", *, nullable: bool = False) -> Any:
    """The dataclass ``cls`` that the JSON object ``d`` holds (see the module docstring); a
    :class:`DocumentError` naming the field otherwise (``nullable``: the message says null
    would do)."""
    if not isinstance(d, Mapping):
        raise _wrong(path, d, "an object", nullable)
    hints = _hints(cls)
    fields = [f for f in dataclasses.fields(cls) if f.init and not f.metadata.get(_REST)]
    unknown = sorted(set(d) - {f.name for f in fields})
    kept = [f.name for f in dataclasses.fields(cls) if f.metadata.get(_REST)]
    kw: dict[str, Any] = {kept[0]: {k: d[k] for k in unknown}} if kept else {}
    if unknown and not kept:
        raise DocumentError(_at(path, str(unknown[0])), "is not a field of this document")
    for f in fields:
        if f.name in d:
            kw[f.name] = _value(hints[f.name], d[f.name], _at(path, f.name))
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise DocumentError(_at(path, f.name), "is missing")
    try:
        obj = cls(**kw)
        check = getattr(obj, "check_json", None)
        if check is not None:
            check()
    except (TypeError, ValueError) as e:
        if isinstance(e, DocumentError):
            raise
        raise DocumentError(path, str(e)) from None
    return obj


def _value(hint: Any, v: Any, path: str, nullable: bool = False) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return v
    if origin in (typing.Union, types.UnionType):
        if v is None and type(None) in args:
            return None
        kinds = [a for a in args if a is not type(None)]
        if len(kinds) == 1:
            return _value(kinds[0], v, path, type(None) in args)
        for a in kinds:
            try:
                return _value(a, v, path)
            except DocumentError:
                continue
        raise _wrong(path, v, " or ".join(map(_name, args)), False)
    if dataclasses.is_dataclass(hint):
        return decode(typing.cast(type, hint), v, path, nullable=nullable)
    if origin in (list, tuple, Sequence):
        if not isinstance(v, list):
            raise _wrong(path, v, "a list", nullable)
        items = [_value(args[0] if args else Any, x, f"{path}[{i}]") for i, x in enumerate(v)]
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping):
        if not isinstance(v, dict):
            raise _wrong(path, v, "an object", nullable)
        inner = args[1] if args else Any
        return {k: _value(inner, x, _at(path, k)) for k, x in v.items()}
    if hint is float and isinstance(v, float) and not math.isfinite(v):
        raise DocumentError(path, f"is {v!r}, not a finite number")
    if not _is(hint, v):
        raise _wrong(path, v, _name(hint), nullable)
    return int(v) if hint is int else v


def _wrong(path: str, v: Any, expected: str, nullable: bool) -> DocumentError:
    return DocumentError(path, f"is {_kind(v)}, not {expected}" + (" or null" if nullable else ""))


def _is(hint: Any, v: Any) -> bool:
    if isinstance(v, bool):
        return hint is bool
    if hint is int:
        return isinstance(v, int) or (isinstance(v, float) and v.is_integer())
    if hint is float:
        return isinstance(v, int | float) and math.isfinite(v)
    return isinstance(hint, type) and isinstance(v, hint)


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        for module in getattr(cls, "json_imports", ()):
            importlib.import_module(module)
        _HINTS[cls] = typing.get_type_hints(cls, localns=dict(_DOCUMENTS))
    return _HINTS[cls]


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(v: Any) -> str:
    names = {bool: "a boolean", str: "a string", int: "a number", float: "a number"}
    names.update({list: "a list", dict: "an object", type(None): "null"})
    return names.get(type(v), f"a {type(v).__name__}")


def _name(hint: Any) -> str:
    names = {bool: "a boolean", str: "a string", int: "a whole number", float: "a number"}
    return names.get(hint, "null" if hint is type(None) else f"a {getattr(hint, '__name__', hint)}")


class Document:
    """A dataclass read and written by the codec: ``to_json``/``from_json`` and, for a file,
    ``write``/``read``. ``json_what`` names it in errors ("not a placement document");
    ``json_imports``: modules whose documents its hints name (imported on first read);
    :meth:`json_prepare` checks or upgrades a document's schema before its fields are read."""

    json_what: ClassVar[str] = ""
    json_imports: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        _DOCUMENTS[cls.__name__] = cls

    def to_json(self) -> dict[str, Any]:
        """The document as JSON values."""
        return typing.cast(dict[str, Any], encode(self))

    @classmethod
    def json_prepare(cls, d: Any, where: str | None) -> Any:
        """``d`` as this version's fields read it (a schema check or upgrade); as given here."""
        return d

    @classmethod
    def from_json(cls: type[D], d: Any, where: str | None = None) -> D:
        """The document ``d`` holds; an :class:`InputError` naming the file ``where`` and the
        field otherwise."""
        d = cls.json_prepare(d, where)
        try:
            return typing.cast(D, decode(cls, d))
        except DocumentError as e:
            what = cls.json_what or cls.__name__
            article = "an" if what[0].lower() in "aeiou" else "a"
            raise InputError(
                f"not {article} {what} document: {e.message}", file=where, field=e.path or None
            ) from None

    def write(self, path: str | Path) -> Path:
        """Write the document to ``path`` (canonical JSON, atomically)."""
        from primebench_tasks.data.io import write_json_document

        return write_json_document(path, self.to_json())

    @classmethod
    def read(cls: type[D], path: str | Path) -> D:
        """The document written at ``path``."""
        from primebench_tasks.data.io import read_json_document

        doc = read_json_document(path, cls.json_what or cls.__name__, None)
        return cls.from_json(doc, str(path))
