"""One rule for a model name, whichever way it enters a panel (``panel import``, ``import-helm``,
``refresh --records``): a name is stored as given, never stripped or renamed, so one a file
system, a CSV or a report line cannot carry is refused.

A model name may hold ``/`` (``openai/gpt-4o``, a Hugging Face id) but no ``.`` or ``..``
segment, no backslash, no leading or trailing space, and no control, format or line/paragraph
separator character (``\\n``, U+0085, U+2028, U+2029, a zero-width space...).
"""

from __future__ import annotations

import unicodedata

# Unicode categories a name must not hold: control, format, line and paragraph separators
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def model_name_problem(name: object) -> str | None:
    """What is wrong with ``name`` as a model name (a phrase: "holds U+2028"), or ``None``."""
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not text"
    for c in name:
        if unicodedata.category(c) in _REFUSED_CATEGORIES:
            return f"holds U+{ord(c):04X} (a control or separator character)"
    if not name.strip():
        return "is empty"
    if name != name.strip():
        return "has leading or trailing spaces"
    if "\\" in name:
        return "holds a backslash"
    if any(part in (".", "..") for part in name.split("/")):
        return "holds a '.' or '..' path segment"
    return None
