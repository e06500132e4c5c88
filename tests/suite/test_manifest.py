"""The typed suite manifest: read and checked once, typed views, restrictions, bad documents."""

from __future__ import annotations

import json

import pytest

from harness_adapters.suites.released import suites_path
from primebench_tasks.errors import InputError
from primebench_tasks.suite import SuiteManifest, as_suite, versioned
from tests.fixtures.manifests import small_document

FLAGSHIP = suites_path() / "primebench.json"


def _doc(**changes):
    """A small valid document (two categories; B with its own calibration, the suite with
    another), with ``changes`` applied to its body (version rehashed)."""
    doc = small_document(
        {"Math Reasoning": {"A": ["a1", "a2", "a3"]}, "Visual Reasoning": {"B": ["b1", "b2"]}},
        name="tiny",
        placement_calibration={"estimator": "pirt", "residuals": [0.2]},
    )
    b = doc["categories"]["Visual Reasoning"]["benchmarks"]["B"]
    b["placement_calibration"] = {"estimator": "pirt", "residuals": [0.1]}
    return versioned({**doc, **changes})


def test_the_released_flagship_read_typed():
    m = SuiteManifest.read(FLAGSHIP)
    assert m.name == "primebench" and m.version == "24f24c68164a38d4" and m.n_items == 754
    assert [e.name for e in m.benchmarks] == [
        "MMMU_DEV_VAL",
        "RealWorldQA",
        "MATH-Vision_MINI",
        "MathVista_MINI",
        "AI2D_TEST",
        "OCRBench",
        "BLINK",
    ]
    mmmu = m.entry("MMMU_DEV_VAL")
    assert mmmu.category == "Academic Knowledge" and len(mmmu.item_ids) == 100
    assert mmmu.source is not None and mmmu.source.panel == "mmmu_merged"
    assert len(mmmu.source.models) == 185
    assert mmmu.upstream is not None and mmmu.upstream["key"] == "id"
    # AI2D: no lmms-eval task, and the manifest says why; OCRBench keyed by text
    assert "keys build" in (m.entry("AI2D_TEST").no_lmms_eval_task or "")
    ocr = m.entry("OCRBench").upstream or {}
    assert ocr["text_keys"]["rule"] == "ocrbench"
    assert set(ocr["text_keys"]["keys"]) == set(m.entry("OCRBench").item_ids)
    assert m.entry("BLINK").source.panel == "openvlm_blink"  # type: ignore[union-attr]
    # the document is kept as written: writing it back gives the file, byte for byte
    assert m.to_json() == FLAGSHIP.read_text()
    # the mapping interface reads the document and cannot change it
    assert m["name"] == "primebench" and "stages" in m
    with pytest.raises(TypeError):
        m["name"] = "x"  # type: ignore[index]


def test_typed_views_hand_checked():
    m = as_suite(_doc())
    assert m.item_ids() == {
        "Math Reasoning": {"A": ["a1", "a2", "a3"]},
        "Visual Reasoning": {"B": ["b1", "b2"]},
    }
    assert list(m.categories) == ["Math Reasoning", "Visual Reasoning"]
    assert m.calibration("B") == {"estimator": "pirt", "residuals": [0.1]}  # its own
    assert m.calibration("A") == {"estimator": "pirt", "residuals": [0.2]}  # the suite's
    assert m.built_from.models == ("m1", "m2")
    with pytest.raises(InputError, match="has no benchmark 'C'"):
        m.entry("C")


def test_restricted_and_one_benchmark():
    m = as_suite(_doc())
    r = m.restricted({"A": ["a3", "a1"]}, name="tiny_r001")
    assert r.name == "tiny_r001" and r.n_items == 2
    assert r.item_ids() == {"Math Reasoning": {"A": ["a3", "a1"]}}
    assert r.document["categories"]["Math Reasoning"]["n_items"] == 2
    # a restriction is itself a checked manifest: its version is its content hash
    assert SuiteManifest.from_document(dict(r.document)).version == r.version
    with pytest.raises(InputError, match="not in 'A'"):
        m.restricted({"A": ["zz"]})
    one = m.of_benchmark("B")
    assert [e.name for e in one.benchmarks] == ["B"]
    assert one.calibration() == {"estimator": "pirt", "residuals": [0.1]}


def test_asking_takes_items_of_the_pool_outside_the_suite():
    """An adaptive round's manifest: items the static suite does not hold are allowed (the
    pool is the reference panel's), a benchmark the suite does not have is not."""
    m = as_suite(_doc())
    r = m.asking({"A": ["zz", "a1"]}, name="tiny_adaptive_r001")
    assert r.item_ids() == {"Math Reasoning": {"A": ["zz", "a1"]}} and r.n_items == 2
    assert SuiteManifest.from_document(dict(r.document)).version == r.version
    with pytest.raises(InputError, match="not in suite"):
        m.asking({"C": ["c1"]})


def _categories_with(**entry_changes):
    doc = _doc()
    cats = json.loads(json.dumps(doc["categories"]))
    cats["Math Reasoning"]["benchmarks"]["A"].update(entry_changes)
    return cats


@pytest.mark.parametrize(
    ("changes", "row", "field", "message"),
    [
        (
            {"categories": _categories_with(item_ids=[])},
            "Math Reasoning/A",
            "item_ids",
            "non-empty",
        ),
        (
            {"categories": _categories_with(item_ids=["a1", "a1"])},
            "Math Reasoning/A",
            "item_ids",
            "repeats",
        ),
        (
            {"categories": _categories_with(item_ids=[1, 2])},
            "Math Reasoning/A",
            "item_ids",
            "strings",
        ),
        (
            {"categories": _categories_with(score_range=[1, 0])},
            "Math Reasoning/A",
            "score_range",
            "min < max",
        ),
        (
            {"categories": _categories_with(source={"panel": "p"})},
            "Math Reasoning/A",
            "source.models",
            "list",
        ),
        ({"n_items": 6}, None, "n_items", "hold 5 items"),
        ({"aggregate": "median"}, None, "aggregate", "one of"),
        ({"built_from": None}, None, "built_from", "panel, panel_hash"),
        ({"categories": {}}, None, "categories", "non-empty"),
    ],
)
def test_a_bad_document_names_file_row_and_field(changes, row, field, message):
    with pytest.raises(InputError, match=message) as exc:
        SuiteManifest.from_document(_doc(**changes), "suite.json")
    assert exc.value.file == "suite.json" and exc.value.field == field and exc.value.row == row


def test_a_benchmark_in_two_categories_and_a_hand_edit_are_refused(tmp_path):
    doc = _doc()
    cats = json.loads(json.dumps(doc["categories"]))
    cats["Visual Reasoning"]["benchmarks"]["A"] = cats["Math Reasoning"]["benchmarks"]["A"]
    with pytest.raises(InputError, match="two categories"):
        SuiteManifest.from_document(_doc(categories=cats))
    edited = {**doc, "name": "other"}  # body changed, version not
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(edited))
    with pytest.raises(InputError, match="edited by hand") as exc:
        SuiteManifest.read(path)
    assert exc.value.file == str(path) and exc.value.field == "version"
