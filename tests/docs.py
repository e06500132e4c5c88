"""The project's documentation as the tests read it: README.md and the pages under docs/, with
every ``--8<-- "path"`` include (pymdownx.snippets: the generated tables of benchmarks/results/)
replaced by the included file, as the site shows it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = re.compile(r'^--8<-- "([^"]+)"\n', re.M)


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def page_text(page: Path) -> str:
    """``page`` with its includes resolved (a missing file fails, as the strict build does)."""
    return INCLUDE.sub(lambda m: (ROOT / m.group(1)).read_text("utf-8"), page.read_text("utf-8"))


def doc_text() -> str:
    """Every page, concatenated (README first)."""
    return "\n".join(page_text(p) for p in doc_pages())


def decision_logs() -> list[Path]:
    """The decision logs beside their research scripts (``research/*/README.md``)."""
    return sorted((ROOT / "research").glob("*/README.md"))


def doc_block(marker: str) -> str:
    """The generated block between ``<!-- marker: ... -->`` and ``<!-- /marker -->`` (exactly
    one, on any page or decision log)."""
    hits = [
        m.group(1)
        for p in [*doc_pages(), *decision_logs()]
        for m in re.finditer(
            rf"<!-- {marker}:[^\n]*-->\n(.*?)<!-- /{marker} -->", page_text(p), re.S
        )
    ]
    assert len(hits) == 1, (
        f"{len(hits)} blocks marked {marker!r} in README.md, docs/ and research/*/README.md"
    )
    return hits[0]


def script_output(*args: str) -> str:
    """The standard output of ``python ARGS`` run in the repository root (a generator of a
    documented block: ``tools/release_suites.py --table``, ...); fails on a non-zero exit."""
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=True, timeout=600
    ).stdout
