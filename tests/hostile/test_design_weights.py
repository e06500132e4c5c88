"""The hostile battery, the probability design: a design weight edited into a manifest can never
buy a placement. The released flagship records its design (strata, N_h, n_h); a re-versioned
manifest whose inclusion probabilities do not follow from it is refused when it is read, a
manifest of the release before designs were recorded is held to the design its probabilities
imply, and the placement refuses a design that claims more items than its benchmark has. On
4d9a95b an edited π of 1e-300 placed a model at 0.921 [0.921, 0.921], "above all 172 reference
models"; 5e-324 gave a silently missing prediction; NaN a traceback from the version check."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.errors import InputError
from primebench_tasks.place.benchmark import place_models
from primebench_tasks.suite.manifest import SuiteManifest, versioned
from tests.place.test_design_placement import _drawn_suite, frontier  # noqa: F401

FLAGSHIP = Path(__file__).resolve().parents[2] / "task_configs" / "suites" / "primebench.json"


@pytest.fixture(scope="module")
def flagship() -> dict:
    return json.loads(FLAGSHIP.read_text("utf-8"))


def _with_inclusion(doc: dict, benchmark: str, p: float, design: bool = True) -> dict:
    out = copy.deepcopy(doc)
    for c in out["categories"].values():
        e = c["benchmarks"].get(benchmark)
        if e is not None:
            e["inclusion"][e["item_ids"][0]] = p
            if not design:
                e.pop("design")
    return versioned(out)


def test_the_released_flagship_records_its_design(flagship) -> None:
    m = SuiteManifest.from_document(flagship)
    rwqa = m.entry("RealWorldQA")
    assert rwqa.design is not None and rwqa.inclusion is not None
    # Σ 1/π over a stratum's drawn items is its N_h; over the benchmark, the pool it draws from
    assert sum(1 / rwqa.inclusion[i] for i in rwqa.item_ids) == pytest.approx(708, abs=0.01)
    assert rwqa.design.pool == 708
    for h, st in enumerate(rwqa.design.strata):
        members = [i for i in rwqa.item_ids if rwqa.design.stratum[i] == h]
        assert len(members) == st.n
        assert sum(1 / rwqa.inclusion[i] for i in members) == pytest.approx(st.N, abs=1e-3)


@pytest.mark.parametrize("p", [1e-300, 5e-324, 0.001, 0.5])
def test_an_edited_design_weight_is_refused_when_read(flagship, p) -> None:
    doc = _with_inclusion(flagship, "RealWorldQA", p)
    with pytest.raises(InputError, match="does not follow from its stratum's design") as e:
        SuiteManifest.from_document(doc, "edited.json")
    assert "RealWorldQA" in str(e.value) and "inclusion" in str(e.value)


def test_a_design_claiming_an_impossible_pool_is_refused(flagship) -> None:
    doc = copy.deepcopy(flagship)
    e = doc["categories"]["Image Understanding"]["benchmarks"]["RealWorldQA"]
    h = e["design"]["stratum"][e["item_ids"][0]]
    e["design"]["strata"][h]["N"] = 10**300  # with π = n/N to match: still refused
    for i, s in e["design"]["stratum"].items():
        if s == h:
            e["inclusion"][i] = 0.0
    with pytest.raises(InputError, match="design.strata|inclusion"):
        SuiteManifest.from_document(versioned(doc), "edited.json")


@pytest.mark.parametrize("p", [1e-300, 5e-324, 0.2])
def test_a_release_before_designs_is_held_to_the_design_it_implies(flagship, p) -> None:
    # a manifest without ``design`` (released before designs were recorded) reads with the
    # design its probabilities imply — the same pool — and an edited weight is refused
    legacy = copy.deepcopy(flagship)
    for c in legacy["categories"].values():
        for e in c["benchmarks"].values():
            e.pop("design")
    implied = SuiteManifest.from_document(versioned(legacy)).entry("RealWorldQA").design
    assert implied is not None and implied.pool == 708
    with pytest.raises(InputError, match="implies a pool of|does not follow from"):
        SuiteManifest.from_document(_with_inclusion(flagship, "RealWorldQA", p, False))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_probability_in_the_file_is_one_line(tmp_path, literal) -> None:
    text = FLAGSHIP.read_text("utf-8")
    first = json.loads(text)["categories"]["Image Understanding"]["benchmarks"]["RealWorldQA"]
    item = first["item_ids"][0]
    old = f'"{item}": {first["inclusion"][item]}'
    assert old in text
    bad = tmp_path / "manifest.json"
    bad.write_text(text.replace(old, f'"{item}": {literal}', 1), "utf-8")
    with pytest.raises(InputError, match=f"manifest is not valid JSON: {literal}") as e:
        SuiteManifest.read(bad)
    assert str(bad) in str(e.value)


def test_a_deeply_nested_document_is_one_line(tmp_path) -> None:
    bad = tmp_path / "manifest.json"
    bad.write_text('{"schema": "primebench.suite/1", "x": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(InputError, match="nests deeper than"):
        SuiteManifest.read(bad)


def test_the_placement_holds_a_design_to_its_panel(frontier) -> None:  # noqa: F811
    # a manifest of the release before designs (no ``design``) whose weights were all edited
    # (each π a quarter of its own) so that its implied strata stay whole and weigh alike: read,
    # then refused by the placement, whose panel holds fewer items than the weights stand for.
    # (One weight edited alone, 0.001, now makes a design that one item carries: refused when
    # read, test_a_design_whose_few_items_carry_the_estimate_is_refused.)
    panel, new = frontier
    manifest = _drawn_suite(panel, 0)
    doc = copy.deepcopy(dict(manifest.document))
    e = doc["categories"]["Math Reasoning"]["benchmarks"]["b"]
    e.pop("design")
    lone = copy.deepcopy(doc)
    lone["categories"]["Math Reasoning"]["benchmarks"]["b"]["inclusion"][e["item_ids"][0]] = 0.001
    with pytest.raises(InputError, match="effective size"):
        SuiteManifest.from_document(versioned(lone))
    pool = manifest.entry("b").design.pool
    e["inclusion"] = {i: round(p / 4, 6) for i, p in e["inclusion"].items()}
    edited = SuiteManifest.from_document(versioned(doc))
    assert edited.entry("b").design is not None and edited.entry("b").design.pool > 3 * pool
    ids = list(edited.entry("b").item_ids)
    cols = pd.MultiIndex.from_tuples([("b", f"b-{i}") for i in range(new.shape[1])])
    placed = pd.DataFrame(new, index=[f"n{i}" for i in range(len(new))], columns=cols)[
        [("b", i) for i in ids]
    ]
    with pytest.raises(InputError, match="draws from a pool of"):
        place_models(panel, edited, placed, estimator="greg", n_boot=5)
    # the valid design of the same run places it
    r = place_models(panel, manifest, placed, estimator="greg", n_boot=5)
    assert np.isfinite(r["predicted_full"]).all()


@pytest.mark.parametrize("alone", [1, 2])
def test_a_design_whose_few_items_carry_the_estimate_is_refused(flagship, alone) -> None:
    # #79: one (or two) RealWorldQA items alone in a stratum of N = 609, the other 99 (98) in a
    # census stratum: every probability follows from the design and Σ N_h is the panel's pool,
    # yet the estimate rests on those items and the variance of its residuals collapses (on
    # 97d5833: 0.838 [0.706, 0.969], rank 1 of 173; the released design gives 0.332, rank 169)
    doc = copy.deepcopy(flagship)
    e = doc["categories"]["Image Understanding"]["benchmarks"]["RealWorldQA"]
    ids = e["item_ids"]
    rest = len(ids) - alone
    e["design"] = {
        "scheme": "stratified",
        "strata": [{"N": 708 - rest, "n": alone}, {"N": rest, "n": rest}],
        "stratum": {i: (0 if k < alone else 1) for k, i in enumerate(ids)},
    }
    e["inclusion"] = {i: (alone / (708 - rest) if k < alone else 1.0) for k, i in enumerate(ids)}
    with pytest.raises(InputError, match="effective size") as err:
        SuiteManifest.from_document(versioned(doc), "edited.json")
    assert "RealWorldQA" in str(err.value) and "design.strata" in str(err.value)


def test_released_designs_weigh_as_their_drawn_items(flagship) -> None:
    m = SuiteManifest.from_document(flagship)
    for e in m.benchmarks:
        assert e.design is not None
        drawn = sum(h.n for h in e.design.strata)
        assert e.design.effective_size == pytest.approx(drawn, rel=0.01)


def test_effective_size_by_hand() -> None:
    from primebench_tasks.suite.manifest import Design, Stratum

    # N = 609 + 99 = 708; Σ N_h²/n_h = 609² + 99 = 370 980; 708² / 370 980 = 1.3512
    d = Design((Stratum(609, 1), Stratum(99, 99)), {})
    assert d.effective_size == pytest.approx(501264 / 370980)
    # proportional: every weight 9 → Σ n_h
    assert Design((Stratum(36, 4), Stratum(36, 4)), {}).effective_size == pytest.approx(8.0)
