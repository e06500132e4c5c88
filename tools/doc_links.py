"""Check (and with ``--fix`` repair) the links between README.md and docs/*.md: every relative
link must name a file that exists and, with ``#anchor``, a heading of that file (GitHub's slugs,
which mkdocs' ``toc`` gives too for the headings used here: a test checks both agree).

    python tools/doc_links.py          # list broken links, exit 1 if any
    python tools/doc_links.py --fix    # point bare #anchors at the page that has the heading
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(path: Path) -> set[str]:
    out, fenced = set(), False
    for line in path.read_text("utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = re.match(r"#{1,6} (.+)", line)
        if m and not fenced:
            out.add(slug(m.group(1)))
    return out


def links(path: Path) -> list[tuple[int, str]]:
    out, fenced = [], False
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out += [(n, m.group(1)) for m in LINK.finditer(line)]
    return out


def broken(root: Path = ROOT) -> list[str]:
    """``page:line: link (why)`` for every relative link that does not resolve."""
    bad = []
    for page in pages(root):
        for n, target in links(page):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not checked here
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.exists():
                bad.append(f"{page.relative_to(root)}:{n}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in headings(dest):
                bad.append(f"{page.relative_to(root)}:{n}: {target} (no such heading)")
    return bad


def fix(root: Path = ROOT) -> int:
    """Point ``#anchor`` links whose heading is on another page at that page; returns fixes."""
    owner: dict[str, Path] = {}
    for p in pages(root):
        for h in headings(p):
            owner.setdefault(h, p)
    fixed = 0
    for page in pages(root):
        own = headings(page)
        text = page.read_text("utf-8")

        def repl(m: re.Match[str], page: Path = page, own: set[str] = own) -> str:
            nonlocal fixed
            target = m.group(1)
            if not target.startswith("#") or target[1:] in own or target[1:] not in owner:
                return m.group(0)
            fixed += 1
            rel = os.path.relpath(owner[target[1:]], page.parent)
            return f"]({rel}{target})"

        page.write_text(LINK.sub(repl, text), "utf-8")
    return fixed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--fix", action="store_true")
    args = ap.parse_args(argv)
    if args.fix:
        print(f"{fix()} link(s) repointed")
    bad = broken()
    print("\n".join(bad) or "every link resolves")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
