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

README_MAX_LINES = 150


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


def _same_pixels(rendered, committed: str, page: str = "README.md") -> None:
    """The figure ``rendered`` has the committed ``docs/img/<committed>``'s pixels, and
    ``page`` (the README, or a page under docs/) shows it."""
    import numpy as np
    from PIL import Image

    with Image.open(rendered) as new, Image.open(ROOT / "docs" / "img" / committed) as old:
        assert np.array_equal(np.asarray(new), np.asarray(old))
    shown = f"docs/img/{committed}" if page == "README.md" else f"img/{committed}"
    assert shown in (ROOT / page).read_text("utf-8")


def test_readme_figure_is_drawn_from_the_committed_results(tmp_path):
    _same_pixels(readme_figure.render(tmp_path / "fig.png"), "placement_accuracy.png")


def test_adaptive_figure_is_drawn_from_the_committed_results(tmp_path):
    """The adaptive figure (docs/results.md) re-renders to the committed pixels, and its curves are the
    replay's: pooled over the splits, the adaptive and static MAE at 25 / 50 / 100 items are the
    replay table's."""
    import pandas as pd

    _same_pixels(
        readme_figure.render_adaptive(tmp_path / "fig.png"),
        "adaptive_replay.png",
        "docs/results.md",
    )
    rep = pd.read_csv(ROOT / "benchmarks" / "results" / "adaptive_replay.csv")
    curves = readme_figure.adaptive_curves()
    assert {p for p, _ in curves} == set(readme_figure.ADAPTIVE_PANELS)
    for (panel, protocol), (adaptive, static) in curves.items():
        e = rep[(rep.benchmark == panel) & (rep.protocol == protocol)].groupby("items")
        for k in (25, 50, 100):
            # the curves' CSV keeps 6 decimals per split
            assert adaptive[k] == pytest.approx(e.adaptive_err.mean()[k], abs=2e-6)
            assert static[k] == pytest.approx(e.static_err.mean()[k], abs=1e-12)


def test_readme_words_under_the_adaptive_figure_are_the_results():
    """The sentence under the figure: the share of the static suite's items the adaptive test
    needs (the items-needed table) and the cells short of the goal (the replay's ratios)."""
    import pandas as pd

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import adaptive_replay as replay

    results = ROOT / "benchmarks" / "results"
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in (results / "adaptive_items_needed.md").read_text("utf-8").splitlines()
        if line.startswith("| ") and "%" in line.split("|")[6]
    ]
    share = {(r[0].split(" (")[0], r[1]): int(r[5].rstrip(" %")) for r in rows}
    met = [x for x in share.values() if x <= 40]
    assert (min(met), max(met), len(met), len(share)) == (5, 40, 9, 10)
    assert share[("RealWorldQA records", "frontier")] == 90
    readme = " ".join((ROOT / "docs" / "results.md").read_text("utf-8").split())
    assert "with 5–40 % of its items in 9 of 10 cells (RealWorldQA's frontier: 90 %)" in readme
    rep = pd.read_csv(results / "adaptive_replay.csv")
    r = rep.groupby(["benchmark", "models", "protocol", "items"], sort=False)
    cells = (r.adaptive_err.mean() / r.static_err.mean()).rename("ratio").reset_index()
    cells = replay.goal_cells(cells)
    short = cells[cells.ratio > replay.GOAL_RATIO]
    assert set(zip(short.benchmark, short.protocol, short["items"], strict=True)) == {
        ("autojudger AI2D_TEST", "random", 50),
        ("autojudger AI2D_TEST", "random", 100),
        ("autojudger MMMU_DEV_VAL", "frontier", 50),
        ("OCRBench records (held out)", "frontier", 100),
        ("RealWorldQA records (held out)", "frontier", 100),
    }
    assert (
        "AI2D's random hold-outs at both counts, MMMU's frontier at 50 items, OCRBench's and "
        "RealWorldQA's frontier at 100" in readme
    )


def test_the_code_cites_the_architecture_page_by_its_headings():
    """#57: module docstrings cite docs/architecture.md (not a design file the repository lacks),
    and every section they name is a heading there."""
    import re

    page = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    headings = {m.group(1) for m in re.finditer(r"^#{2,3} (.+)$", page, re.M)}
    cited, sections = 0, set()
    for path in [
        *(ROOT / "primebench_tasks").rglob("*.py"),
        *(ROOT / "harness_adapters").rglob("*.py"),
    ]:
        text = path.read_text("utf-8")
        assert "DESIGN.md" not in text, path
        for m in re.finditer(r'docs/architecture\.md(?:, "([^"]+)")?', text):
            cited += 1
            if m.group(1):
                sections.add(" ".join(m.group(1).split()))
    assert cited >= 6 and sections and sections <= headings, sections - headings
