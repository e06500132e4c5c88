"""Error types that name the file, the row and the field of bad input."""

from __future__ import annotations


class PrimeBenchError(Exception):
    """Base class of every error raised by primebench_tasks on bad input."""


class InputError(PrimeBenchError, ValueError):
    """Bad input data, located by file, row and field.

    ``row`` is the 1-based line number in the file as a person sees it (the header is row 1), or a
    stable key such as ``model=X item_id=Y`` where line numbers do not apply.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        row: int | str | None = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.row = row
        self.field = field
        where = []
        if file is not None:
            where.append(f"file {file}")
        if row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ConfigError(PrimeBenchError, ValueError):
    """A parameter or option outside what a function accepts (a ``ValueError``)."""


class NotFoundError(PrimeBenchError, KeyError):
    """A named thing (benchmark, panel, embedding space, models) that is not there (a
    ``KeyError`` with a readable message)."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


class UnknownBenchmarkError(PrimeBenchError, KeyError):
    """A benchmark that the catalogue does not know and that was given no category."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0])


def shown(value: object) -> str:
    """``repr`` of a value for a message, numpy scalars as plain Python (``7``, not
    ``np.int64(7)``)."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()
    return repr(value)
