"""The documentation holds together: a short README (the user's page), the rest under docs/ as a
mkdocs site, every link between them resolving, anchors that GitHub and mkdocs both produce."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.docs import ROOT, doc_pages

sys.path.insert(0, str(ROOT / "tools"))
import doc_links  # noqa: E402
import readme_figure  # noqa: E402, F401

README_MAX_LINES = 250


def test_readme_is_the_short_users_page():
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES
    assert lines[0] == "# PRIMEBench" and "## Set up and check" in "\n".join(lines[:20])


def test_every_link_between_readme_and_docs_resolves():
    assert doc_links.broken() == []


def test_the_link_check_catches_a_broken_link(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# A\n\n[x](docs/p.md#nope) [y](#a) [z](docs/q.md)\n")
    (tmp_path / "docs" / "p.md").write_text("# P: one — two\n\n```\n# not a heading\n```\n")
    assert doc_links.headings(tmp_path / "docs" / "p.md") == {"p-one--two"}
    bad = doc_links.broken(tmp_path)
    assert [b.split(": ", 1)[1] for b in bad] == [
        "docs/p.md#nope (no such heading)",
        "docs/q.md (no such file)",
    ]


def test_mkdocs_nav_lists_every_page():
    import re

    text = (ROOT / "mkdocs.yml").read_text("utf-8")
    nav = set(re.findall(r"^  - [^:\n]+: (\S+\.md)$", text, re.M))
    assert nav == {p.name for p in doc_pages() if p.parent.name == "docs"}


@pytest.mark.skipif(
    importlib.util.find_spec("markdown") is None,
    reason="needs the 'docs' extra (markdown is not installed): pip install -e '.[docs]'",
)
def test_github_and_mkdocs_give_the_same_anchors():
    from markdown.extensions.toc import slugify

    for page in doc_pages():
        if page.parent.name != "docs":
            continue  # the README is GitHub's page only
        for line in page.read_text("utf-8").splitlines():
            if line.startswith("## ") or line.startswith("### "):
                text = line.lstrip("#").strip().replace("`", "")
                assert slugify(text, "-") == doc_links.slug(text), (page.name, line)


def test_readme_figure_is_drawn_from_the_committed_results(tmp_path):
    import numpy as np
    from PIL import Image

    out = readme_figure.render(tmp_path / "fig.png")
    with (
        Image.open(out) as new,
        Image.open(ROOT / "docs" / "img" / "placement_accuracy.png") as old,
    ):
        assert np.array_equal(np.asarray(new), np.asarray(old))
    assert "docs/img/placement_accuracy.png" in (ROOT / "README.md").read_text("utf-8")
