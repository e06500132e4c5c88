"""The project's documentation as the tests read it: README.md and the pages under docs/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def doc_text() -> str:
    """Every page, concatenated (README first)."""
    return "\n".join(p.read_text("utf-8") for p in doc_pages())


def doc_block(marker: str) -> str:
    """The generated block between ``<!-- marker: ... -->`` and ``<!-- /marker -->`` (exactly
    one, on any page)."""
    hits = [
        m.group(1)
        for p in doc_pages()
        for m in re.finditer(
            rf"<!-- {marker}:[^\n]*-->\n(.*?)<!-- /{marker} -->", p.read_text("utf-8"), re.S
        )
    ]
    assert len(hits) == 1, f"{len(hits)} blocks marked {marker!r} in README.md and docs/"
    return hits[0]
