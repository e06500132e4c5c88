"""The released wide suite (#72): twelve benchmarks that run in lmms-eval, five of them
design-only; its generated folder; the size a user picks (``tasks lmms-eval --design-items``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness_adapters.harnesses.lmms_eval import task_path
from harness_adapters.suites.released import resolve_suite
from primebench_tasks.data.cards import design_only_cards
from primebench_tasks.errors import InputError
from primebench_tasks.suite.content_design import DESIGN_ONLY_ITEMS
from tests.extras import requires


def test_the_wide_suite_is_the_flagship_plus_the_cards_design_only_benchmarks():
    wide, flagship = resolve_suite("primebench_wide"), resolve_suite("primebench")
    assert wide.benchmarks == flagship.benchmarks  # the same items, panels and ranks
    names = [e.name for e in wide.design_only]
    assert names == [c.name for c in design_only_cards("primebench_wide")]
    assert len(wide.benchmarks) + len(names) >= 12
    for e in wide.design_only:
        assert e.design.n == DESIGN_ONLY_ITEMS and e.design.pool is None
        assert e.upstream is not None and e.lmms_eval_task == e.upstream["task"]
    folder = task_path() / "primebench_wide"
    designs = json.loads((folder / "primebench_designs.json").read_text())
    assert sorted(designs) == sorted(f"primebench_wide_{n.lower()}" for n in names)
    yaml = (folder / "primebench_wide_mmstar.yaml").read_text()
    assert "dataset_path: Lin-Chen/MMStar" in yaml and "design_only: true" in yaml
    # every lmms-eval task of the suite is in one of its category groups
    groups = (folder / "primebench_wide.yaml").read_text()
    assert "primebench_wide_comprehensive" in groups and "primebench_wide_hallucination" in groups


def test_a_suite_sized_by_the_user_is_another_version_under_another_name():
    wide = resolve_suite("primebench_wide")
    small = wide.with_design_items(40)
    assert small.name == "primebench_wide_n40" and small.version != wide.version
    assert {e.design.n for e in small.design_only} == {40}
    assert small.benchmarks == wide.benchmarks
    with pytest.raises(InputError, match="no design-only benchmark"):
        resolve_suite("primebench").with_design_items(40)


@requires("lmms", "lmms_eval")  # the tasks are written from the upstream task YAMLs
def test_tasks_lmms_eval_writes_the_sized_suite_and_says_its_interval(tmp_path):
    out = tmp_path / "tasks"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "primebench_tasks.cli",
            "tasks",
            "lmms-eval",
            "--manifest",
            "primebench_wide",
            "--design-items",
            "40",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "draw 40 items each" in r.stdout and "±0.130" in r.stdout
    assert "--tasks primebench_wide_n40" in r.stdout
    designs = json.loads((out / "primebench_designs.json").read_text())
    assert {d["n"] for d in designs.values()} == {40}
    manifest = json.loads((out / "primebench_manifest.json").read_text())
    assert manifest["name"] == "primebench_wide_n40"


def test_the_docs_table_of_the_design_only_benchmarks_is_the_generated_one():
    from tests.docs import doc_block, script_output

    assert doc_block("wide-table") == script_output("tools/release_suites.py", "--wide-table")


def test_a_design_only_benchmark_a_run_did_not_draw_is_missing_with_why():
    from harness_adapters.run.report import undrawn_design_only
    from primebench_tasks.place.design_only import NOT_DRAWN_BY_THE_RUN

    wide = resolve_suite("primebench_wide")
    missing: dict = {"m": {"MMMU_DEV_VAL": {"of": 100, "missing": 3}}}
    undrawn_design_only(wide, ["m"], {}, missing)
    assert missing["m"]["MMMU_DEV_VAL"] == {"of": 100, "missing": 3}
    assert set(missing["m"]) == {"MMMU_DEV_VAL", *(e.name for e in wide.design_only)}
    assert missing["m"]["MMStar"] == {"of": 100, "missing": 100, "why": NOT_DRAWN_BY_THE_RUN}


@pytest.mark.parametrize("n", [1, 2, 9])
def test_a_size_whose_design_cannot_be_drawn_is_refused_at_tasks(n):
    """#79: --design-items 1 or 2 wrote a suite whose design cannot be drawn (a stratum needs
    two) and whose interval means nothing; refused when the suite is sized, naming the least."""
    with pytest.raises(InputError, match="give --design-items 10 or more"):
        resolve_suite("primebench_wide").with_design_items(n)


def test_a_size_past_any_dataset_says_census():
    """#79: --design-items 10^9 said "±0.000"; it is a census of any dataset of fewer items."""
    from harness_adapters.harnesses.lmms_eval.cli import sized_suite_line

    wide = resolve_suite("primebench_wide")
    line = sized_suite_line(wide.with_design_items(10**9), 10**9)
    assert "a census of each dataset of fewer items" in line and "±0.000" not in line
    assert "±0.130" in sized_suite_line(wide.with_design_items(40), 40)
