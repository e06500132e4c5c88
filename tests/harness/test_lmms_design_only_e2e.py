"""Design-only benchmarks (#72) through the real upstream lmms-eval 0.7.3 task code.

The wide suite's five design-only benchmarks (MMStar, ChartQA, TextVQA val, POPE, ScienceQA-IMG)
run as generated tasks on their upstream task code, each on a stand-in of its upstream schema
(``tests/fixtures/design_standins.py``) in a shuffled row order: exactly the items the design
draws from the unshuffled rows run (the content draw does not depend on row order), each scored
by the upstream scorer as intended; ``primebench place`` reads the draw back from the logs and
places each benchmark by its design, and a second run on another row order gives the same
placement. A pinned pool refuses a changed dataset before anything is asked.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from harness_adapters.harnesses.lmms_eval.taskgen import generate_tasks, slug
from primebench_tasks.data.cards import design_only_cards
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.multi_source import source_panels
from primebench_tasks.suite.content_design import design_only_document
from primebench_tasks.suite.manifest import SuiteManifest
from tests.fixtures import design_standins as standins
from tests.fixtures.lmms_runs import plugin_env, run_lmms_eval

pytestmark = pytest.mark.slow  # end to end through a real harness (CI)

pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")
FLAGSHIP = Path(__file__).parents[2] / "task_configs" / "suites" / "primebench.json"
ENV = plugin_env()
KINDS = standins.KINDS
N_ROWS, N_DRAWN = 36, 12


def _suite() -> SuiteManifest:
    cards = design_only_cards("primebench_wide")
    assert sorted(c.name for c in cards) == sorted(KINDS)
    return SuiteManifest.read(FLAGSHIP).with_design_only(
        [design_only_document(c, N_DRAWN) for c in cards], "pbwide_standin"
    )


def _run(tmp: Path, suite: SuiteManifest, order_seed: int) -> tuple[Path, dict]:
    """Stand-ins in a shuffled order, the generated tasks, the answers, lmms-eval's run."""
    folders, table, intended = {}, {}, {}
    for e in suite.design_only:
        kind = KINDS[e.name]
        rows = standins.ROWS[kind](N_ROWS)
        drawn = standins.lmms_draw(
            rows, e.design, e.name
        )  # the draw on the rows in their own order
        shuffled = rows[:]
        random.Random(order_seed).shuffle(shuffled)
        standins.write(kind, shuffled, tmp / kind)
        folders[str((e.upstream or {})["task"])] = tmp / kind
        t = f"primebench_pbwide_standin_{slug(e.name)}"
        table[t] = {}
        for key, _, pos in drawn.items:
            ok = int(key[:4], 16) % 3 != 0
            table[t][key] = standins.ANSWERS[kind](rows[pos], ok)
            intended[(e.name, key)] = ok
    generate_tasks(suite, source_panels(suite), tmp / "tasks", datasets=folders)
    (tmp / "answers.json").write_text(json.dumps(table))
    run_lmms_eval(
        ",".join(table),
        tmp / "out",
        include=tmp / "tasks",
        model="pb_answers",
        model_args=f"answers={tmp / 'answers.json'},contexts={tmp / 'contexts.json'}",
        env=ENV,
        cwd=tmp,
        timeout=900,
    )
    return tmp / "out", intended


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    suite = _suite()
    one = _run(tmp_path_factory.mktemp("order1"), suite, 1)
    two = _run(tmp_path_factory.mktemp("order2"), suite, 2)
    return suite, one, two


def _place(out: Path, suite: SuiteManifest, dest: Path) -> dict:
    dest.parent.mkdir(parents=True, exist_ok=True)
    manifest = dest.parent / "suite.json"
    manifest.write_text(suite.to_json(), "utf-8")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "primebench_tasks.cli",
            "place",
            str(out),
            "--suite",
            str(manifest),
            "--out",
            str(dest),
            "--allow-partial",
            "--n-boot",
            "50",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads((dest / "report.json").read_text())


def test_exactly_the_drawn_items_run_and_are_scored_by_the_upstream_code(runs):
    from harness_adapters.harnesses.lmms_eval.ingest import read_run

    suite, (out, intended), _ = runs
    recs = read_run(out, suite_version=suite.version)
    got = {(r.benchmark, r.item_id): r.score for r in recs.itertuples()}
    assert set(got) == set(intended)  # the unshuffled rows' draw, asked of shuffled data
    for (b, key), ok in intended.items():
        assert got[(b, key)] == (1.0 if ok else 0.0), (b, key)
    for b in KINDS:
        scores = [s for (bb, _), s in got.items() if bb == b]
        assert len(scores) == N_DRAWN and 0 < sum(scores) < N_DRAWN


def test_primebench_place_places_each_by_its_design_whatever_the_row_order(runs, tmp_path):
    suite, (out1, intended), (out2, _) = runs
    a = _place(out1, suite, tmp_path / "one" / "report")
    b = _place(out2, suite, tmp_path / "two" / "report")
    (model,) = a["models"]
    placed = a["models"][model]["design_only"]
    assert sorted(placed) == sorted(KINDS)
    for name, e in placed.items():
        right = [ok for (bb, _), ok in intended.items() if bb == name]
        strata = e["strata"]
        assert sum(n for _, n in strata.values()) == N_DRAWN == e["n_scored"]
        assert sum(N for N, _ in strata.values()) == N_ROWS
        if len(strata) == 1:  # one stratum: the estimate is the mean of its items
            assert e["predicted_full"]["value"] == pytest.approx(sum(right) / N_DRAWN)
        lo, hi = e["predicted_full"]["lo"], e["predicted_full"]["hi"]
        assert lo <= e["interval_90"]["lo"] <= e["predicted_full"]["value"] <= hi
    assert placed["MMStar"]["leaderboard"]["column"] == "MMStar"
    assert b["models"][next(iter(b["models"]))]["design_only"] == placed
    md = (tmp_path / "one" / "report" / "report.md").read_text()
    assert "Design-only benchmarks" in md and "| MMStar |" in md


def test_a_pinned_pool_refuses_a_changed_dataset_before_anything_is_asked(runs, tmp_path):
    import datasets

    from harness_adapters.lmms_eval_upstream.functions import make_design_docs

    suite, _, _ = runs
    e = suite.design_only_entry("MMStar")
    rows = standins.ROWS["mmstar"](N_ROWS)
    pinned = standins.lmms_draw(rows, e.design, e.name).pinned()
    design = {**e.design.as_document(), "pool": pinned.as_document()}
    standins.write("mmstar", rows, tmp_path / "same")
    same = datasets.load_from_disk(str(tmp_path / "same"))["val"]
    docs = make_design_docs(design, "t", "MMStar")(same)
    assert len(docs) == N_DRAWN
    rows[5]["question"] = "Which colour is shown?"
    standins.write("mmstar", rows, tmp_path / "changed")
    changed = datasets.load_from_disk(str(tmp_path / "changed"))["val"]
    with pytest.raises(InputError, match="is not the pool this suite's design was drawn on"):
        make_design_docs(design, "t", "MMStar")(changed)


def test_the_pools_a_run_drew_from_are_pinned_and_then_hold(runs, tmp_path):
    """``primebench pin lmms-eval OUT`` writes the suite with every design-only benchmark
    pinned to the pool the run drew from; the pinned design accepts the same data in another
    row order and refuses a changed dataset."""
    import datasets

    from harness_adapters.lmms_eval_upstream.functions import make_design_docs

    suite, (out, _), _ = runs
    manifest = tmp_path / "suite.json"
    manifest.write_text(suite.to_json(), "utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "primebench_tasks.cli", "pin", "lmms-eval", str(out),
         "--suite", str(manifest), "--out", str(tmp_path / "pinned.json")],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    pinned = SuiteManifest.read(tmp_path / "pinned.json")
    assert pinned.name == "pbwide_standin_pinned" and pinned.benchmarks == suite.benchmarks
    assert all(e.design.pool is not None for e in pinned.design_only)
    e = pinned.design_only_entry("ChartQA_TEST")
    rows = standins.ROWS["chartqa"](N_ROWS)
    assert e.design.pool is not None
    assert (
        e.design.pool.fingerprint
        == standins.lmms_draw(rows, suite.design_only_entry(e.name).design, "x").fingerprint
    )
    random.Random(9).shuffle(rows)
    standins.write("chartqa", rows, tmp_path / "same")
    same = datasets.load_from_disk(str(tmp_path / "same"))["test"]
    assert len(make_design_docs(e.design.as_document(), "t", e.name)(same)) == N_DRAWN
    standins.write("chartqa", rows[:-1], tmp_path / "fewer")
    fewer = datasets.load_from_disk(str(tmp_path / "fewer"))["test"]
    with pytest.raises(InputError, match="is not the pool this suite's design was drawn on"):
        make_design_docs(e.design.as_document(), "t", e.name)(fewer)
