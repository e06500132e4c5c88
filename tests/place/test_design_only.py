"""A run's answers to a design-only benchmark (#72): read back with their draw, held to the suite's
design, placed by the design alone, ranked on the leaderboard, written and read back typed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from primebench_tasks.data.cards import card
from primebench_tasks.errors import InputError
from primebench_tasks.place.design_only import design_answers, place_design_only
from primebench_tasks.place.result import ModelPlacement
from primebench_tasks.suite.content_design import design_only_document, stratified_estimate
from primebench_tasks.suite.manifest import SuiteManifest

FLAGSHIP = Path(__file__).parents[2] / "task_configs" / "suites" / "primebench.json"


@pytest.fixture(scope="module")
def suite() -> SuiteManifest:
    base = SuiteManifest.read(FLAGSHIP)
    return base.with_design_only([design_only_document(card("MMStar"), 6)], "pb_design_test")


POOL = {
    "strata": {"math": [30, 3], "coarse perception": [30, 3]},
    "fingerprint": "00ff00ff00ff00ff",
}


def _records(pool=POOL, extra=()) -> pd.DataFrame:
    rows = []
    for m, right in (("good", 5), ("poor", 1)):
        for k in range(6):
            rows.append(
                {
                    "model": m,
                    "benchmark": "MMStar",
                    "item_id": f"k{k}",
                    "score": 1.0 if k < right else 0.0,
                    "stratum": "math" if k < 3 else "coarse perception",
                    "pool": json.dumps(pool),
                }
            )
    return pd.DataFrame([*rows, *extra])


def test_the_manifest_keeps_the_design_and_the_listed_benchmarks_unchanged(suite):
    base = SuiteManifest.read(FLAGSHIP)
    assert suite.benchmarks == base.benchmarks and suite.version != base.version
    (e,) = suite.design_only
    assert (e.name, e.category, e.design.n, e.design.strata_field, e.design.view) == (
        "MMStar",
        "Comprehensive",
        6,
        "stratum",
        "mmstar",
    )
    again = SuiteManifest.from_document(json.loads(suite.to_json()))
    assert again.design_only == suite.design_only
    with pytest.raises(InputError, match="in the suite twice"):
        suite.with_design_only([design_only_document(card("MMStar"), 6)], "twice")


def test_answers_are_placed_by_their_design_by_hand(suite):
    a = design_answers(_records(), suite)["MMStar"]
    assert a.strata == {"math": (30, 3), "coarse perception": (30, 3)}
    good = place_design_only(a, "good")
    # math 3/3 right, coarse 2/3: ½·1 + ½·⅔ = 5/6
    assert good.predicted_full.value == pytest.approx(5 / 6)
    want = stratified_estimate(
        {"math": (30, 3), "coarse perception": (30, 3)},
        {"math": [1, 1, 1], "coarse perception": [1, 1, 0]},
    )
    assert want is not None
    assert good.se == pytest.approx(want.se) and good.interval_90.lo == pytest.approx(want.lo90)
    assert good.strata == {"coarse perception": [30, 3], "math": [30, 3]}
    assert place_design_only(a, "poor").predicted_full.value == pytest.approx(1 / 6)
    # a typed record that reads back as written
    mp = ModelPlacement.from_json(
        {
            "suite": {
                "n_items": 0,
                "n_scored": 0,
                "score": {"value": None, "lo": None, "hi": None},
                "predicted_full": {"value": None, "lo": None, "hi": None},
                "predicted_rank": None,
            },
            "categories": {},
            "benchmarks": {},
            "design_only": {"MMStar": good.to_json()},
        }
    )
    assert mp.design_only["MMStar"] == good
    assert mp.to_json()["design_only"]["MMStar"]["interval_from"] == "design"


def test_a_stratum_without_a_scored_item_has_no_estimate(suite):
    recs = _records()
    recs.loc[(recs.model == "poor") & (recs.stratum == "math"), "score"] = float("nan")
    p = place_design_only(design_answers(recs, suite)["MMStar"], "poor")
    assert p.predicted_full.value is None and "no scored item in stratum 'math'" in str(
        p.no_estimate_because
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("two pools", "come from 2 different datasets"),
        ("another allocation", "where the suite's design of 6 items takes"),
        ("unknown stratum", "which the draw does not have"),
        ("no stratum column", "a record has no stratum"),
        ("too many items", "of which the draw took 3"),
        ("not a draw", "is not {strata"),
    ],
)
def test_answers_that_do_not_follow_from_the_design_are_refused(suite, change, message):
    recs = _records()
    if change == "two pools":
        other = {**POOL, "fingerprint": "1111111111111111"}
        recs.loc[recs.model == "poor", "pool"] = json.dumps(other)
    elif change == "another allocation":
        recs["pool"] = json.dumps(
            {**POOL, "strata": {"math": [30, 4], "coarse perception": [30, 2]}}
        )
    elif change == "unknown stratum":
        recs.loc[0, "stratum"] = "physics"
    elif change == "no stratum column":
        recs = recs.drop(columns="stratum")
    elif change == "too many items":
        recs.loc[(recs.model == "good") & (recs.item_id == "k4"), "stratum"] = "math"
    else:
        recs["pool"] = json.dumps({"strata": {"math": [2, 3]}, "fingerprint": "x"})
    with pytest.raises(InputError, match=message) as e:
        design_answers(recs, suite)
    assert "MMStar (design-only)" in str(e.value)


def test_a_pinned_pool_refuses_another_dataset(suite):
    doc = json.loads(suite.to_json())
    doc["design_only"][0]["design"]["pool"] = {
        "strata": {"math": 30, "coarse perception": 30},
        "fingerprint": "abcdefabcdefabcd",
    }
    doc.pop("version")
    from primebench_tasks.suite.manifest import versioned

    pinned = SuiteManifest.from_document(versioned(doc))
    with pytest.raises(InputError, match="not the pool the suite pins"):
        design_answers(_records(), pinned)


def test_the_placement_ranks_a_design_only_benchmark_on_the_leaderboard(suite):
    from primebench_tasks.data.leaderboard import Leaderboard
    from primebench_tasks.pipeline.multi_source import source_panels
    from primebench_tasks.place.standing import add_leaderboard_standing
    from primebench_tasks.place.suite import place_on_suite

    a = design_answers(_records(), suite)
    new = pd.DataFrame(
        index=pd.Index(["good", "poor"], name="model"),
        columns=pd.MultiIndex.from_tuples(
            [(e.name, i) for e in suite.benchmarks for i in e.item_ids],
            names=["benchmark", "item_id"],
        ),
        dtype=float,
    )
    doc = place_on_suite(suite, source_panels(suite), new, n_boot=50, design=a)
    board = Leaderboard.load_default("openvlm")
    good = doc.models["good"].design_only["MMStar"]
    lb = good.leaderboard
    assert lb is not None and lb["column"] == "MMStar"
    scores = board.scores["MMStar"].dropna().to_numpy()
    assert lb["rank"]["value"] == 1 + (scores > good.predicted_full.value).sum()
    assert lb["rank"]["lo"] == 1 + (scores > good.predicted_full.hi).sum()
    assert "lmms-eval task" in lb["caveat"]
    # the suite score is not touched: no listed item was answered
    assert doc.models["good"].suite.n_scored == 0
    assert math.isclose(doc.models["poor"].design_only["MMStar"].predicted_full.value or 0, 1 / 6)
    add_leaderboard_standing(doc, suite, board)  # idempotent on the same snapshot
    assert doc.models["good"].design_only["MMStar"].leaderboard == lb


def test_a_pool_size_edited_in_the_log_is_refused(suite):
    """#79: TextVQA's logged N_h edited 36 → 12 (the fingerprint kept) placed 0.833
    [0.833, 0.833]. A pinned suite holds every logged N_h to its pool; an unpinned one refuses a
    log saying every stratum was drawn whole when that whole is exactly the suite's n (a census
    only a pin can confirm), and otherwise says its interval rests on the log's sizes."""
    from primebench_tasks.suite.content_design import PinnedPool

    pinned = suite.with_pinned_pools(
        {"MMStar": PinnedPool({"math": 30, "coarse perception": 30}, "00ff00ff00ff00ff")}
    )
    assert design_answers(_records(), pinned)["MMStar"].pinned
    edited = {**POOL, "strata": {"math": [3, 3], "coarse perception": [30, 3]}}
    with pytest.raises(
        InputError, match="stratum 'math' N_h = 3 where the pool the suite pins has 30"
    ):
        design_answers(_records(edited), pinned)
    census = {**POOL, "strata": {"math": [3, 3], "coarse perception": [3, 3]}}
    with pytest.raises(InputError, match="every stratum was drawn whole") as e:
        design_answers(_records(census), suite)
    assert "primebench pin lmms-eval" in str(e.value) and "pool" in str(e.value)
    # the same census of a dataset smaller than the suite's n is what it says: exact
    small = suite.with_design_items(12)
    placed = place_design_only(design_answers(_records(census), small)["MMStar"], "good")
    assert placed.interval_90.lo == placed.interval_90.hi == placed.predicted_full.value
    # unpinned: the placement says what its interval rests on
    a = design_answers(_records(), suite)["MMStar"]
    assert not a.pinned and place_design_only(a, "good").pool_sizes_from == "log"
