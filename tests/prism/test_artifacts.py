import json

import pytest

from primebench_tasks.prism.artifacts import ArtifactStore, IFBuilder, NeedsJudge, SCBuilder
from primebench_tasks.prism.sampling import SEEDS, sample_items


def test_sampling_union_of_five_seeds():
    pool = {"big": [str(i) for i in range(1000)], "small": [str(i) for i in range(60)]}
    s = sample_items(pool)
    assert SEEDS == (0, 1, 42, 1234, 2026)
    assert len(s["small"]) == 60  # K > n: every seed draws all items; the union dedups
    assert 100 < len(s["big"]) <= 500 and len(set(s["big"])) == len(s["big"])
    assert s == sample_items(pool)
    assert sample_items(pool, seeds=(0,))["big"] == s["big"][:100]


def test_store_never_rebuilds(tmp_path):
    store = ArtifactStore(tmp_path)
    item = {"options": ["3", "4", "5"], "answer": "B"}
    a = store.get_or_build("if", "b", "7", IFBuilder(), item)
    assert a["status"] == "built" and a["review_status"] == "unreviewed"
    assert 1 <= len(a["payload"]["constraints"]) <= 3

    class Exploding:
        id = "if/v1"

        def build(self, *args):
            raise AssertionError("rebuilt")

    assert store.get_or_build("if", "b", "7", Exploding(), item) == a
    on_disk = json.loads(store.path("if", "b", "7").read_text())
    assert on_disk["builder"] == "if/v1"


def test_sc_builder_offline_fallback(tmp_path):
    store = ArtifactStore(tmp_path)
    art = store.get_or_build("sc", "b", "1", SCBuilder(), {"options": ["x", "y", "z"],
                                                           "answer": "B"})
    assert art["payload"]["hint"] in ("A", "C") and "Are you sure" in art["payload"]["q1"]
    open_item = store.get_or_build("sc", "b", "2", SCBuilder(), {"options": [], "answer": "6"})
    assert open_item["status"] == "unbuilt" and "judge" in open_item["payload"]["reason"]
    with pytest.raises(NeedsJudge):
        SCBuilder().build("b", "3", {"options": ["x"], "answer": "Q"})
