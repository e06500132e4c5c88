"""The design-only draw (#72): content keys, PRN order within strata, the allocation, the pinned
pool and the stratified estimate, each against a hand computation."""

from __future__ import annotations

import hashlib
import math
import random

import pytest

from primebench_tasks.errors import InputError
from primebench_tasks.suite.content_design import (
    ContentDesign,
    PinnedPool,
    allocate,
    interval_width,
    resolve,
    row_key,
    stratified_estimate,
)


def _rows(n: int, strata: tuple[str, ...] = ("a", "b")) -> list[dict[str, object]]:
    return [
        {"question": f"Q {k}?", "answer": str(k % 4), "cat": strata[k % len(strata)]}
        for k in range(n)
    ]


DESIGN = ContentDesign(n=6, key_fields=("question", "answer"), strata_field="cat")


def test_allocation_by_hand():
    # floors a 2, b 2, c 1; shares 7·(6, 3, 1)/10 = 4.2, 2.1, 0.7; the two left go to a
    assert allocate({"a": 6, "b": 3, "c": 1}, 7) == {"a": 4, "b": 2, "c": 1}
    assert allocate({"a": 6, "b": 3, "c": 1}, 5) == {"a": 2, "b": 2, "c": 1}
    # equal gaps go to the stratum that sorts first; never more than N_h
    assert allocate({"y": 250, "x": 250, "z": 1000}, 100) == {"x": 17, "y": 16, "z": 67}
    assert allocate({"a": 3, "b": 2}, 50) == {"a": 3, "b": 2}
    with pytest.raises(InputError, match="cannot cover 3 strata"):
        allocate({"a": 6, "b": 3, "c": 2}, 5)


def test_the_key_is_the_hash_of_salt_stratum_and_folded_fields():
    row = {"question": "  What   IS this? ", "answer": "B", "cat": "Math"}
    want = hashlib.sha256(b"primebench/1\x1fmath\x1fwhat is this?\x1fb").hexdigest()[:16]
    assert row_key(row, DESIGN) == want
    # the same question in another stratum is another item (POPE's splits share questions)
    assert row_key({**row, "cat": "other"}, DESIGN) != want


def test_the_first_n_h_of_each_stratum_in_key_order_whatever_the_row_order():
    rows = _rows(20)
    drawn = resolve(rows, DESIGN, "bench")
    assert drawn.strata == {"a": (10, 3), "b": (10, 3)}
    for h in ("a", "b"):
        keys = sorted(row_key(r, DESIGN) for r in rows if r["cat"] == h)
        assert [k for k, s, _ in drawn.items if s == h] == keys[:3]
    # each drawn item points at its row
    for k, _, pos in drawn.items:
        assert row_key(rows[pos], DESIGN) == k
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    again = resolve(shuffled, DESIGN, "bench")
    assert [(k, h) for k, h, _ in again.items] == [(k, h) for k, h, _ in drawn.items]
    assert again.fingerprint == drawn.fingerprint
    assert drawn.inclusion("a") == pytest.approx(0.3)


def test_identical_rows_are_told_apart_without_depending_on_row_order():
    rows = [{"question": "same", "answer": "A", "cat": "a", "other": k % 2} for k in range(4)]
    rows += [{"question": f"q{k}", "answer": "A", "cat": "a", "other": 0} for k in range(4)]
    d = ContentDesign(n=8, key_fields=("question", "answer"), strata_field="cat")
    one = resolve(rows, d, "b")
    two = resolve(rows[::-1], d, "b")
    keys = sorted(k for k, _, _ in one.items)
    assert len(set(keys)) == 8
    base = row_key(rows[0], d)
    assert {base, f"{base}#2", f"{base}#3", f"{base}#4"} <= set(keys)
    assert sorted(k for k, _, _ in two.items) == keys
    assert one.fingerprint == two.fingerprint


def test_a_changed_pool_is_refused_naming_what_changed():
    rows = _rows(20)
    pinned = resolve(rows, DESIGN, "MMStar").pinned()
    design = ContentDesign(**{**DESIGN.__dict__, "pool": pinned})
    assert resolve(rows[::-1], design, "MMStar").fingerprint == pinned.fingerprint
    edited = [dict(r) for r in rows]
    edited[4]["question"] = "Q 4, edited?"
    with pytest.raises(InputError, match="MMStar: the dataset is not the pool") as e:
        resolve(edited, design, "MMStar")
    assert "the same strata and sizes, other items" in str(e.value)
    with pytest.raises(InputError, match=r"a: 10 → 9 rows"):
        resolve(rows[:-2], design, "MMStar")
    with pytest.raises(InputError, match="new strata"):
        resolve([*rows, {"question": "x", "answer": "y", "cat": "c"}], design, "MMStar")


def test_a_row_without_a_field_the_design_reads_is_named():
    rows = _rows(6)
    del rows[2]["answer"]
    with pytest.raises(InputError, match="bench: the row has no field 'answer'") as e:
        resolve(rows, DESIGN, "bench")
    assert e.value.row == "dataset row 2" and e.value.field == "answer"


def test_the_design_document_round_trips_and_is_checked():
    d = ContentDesign(
        n=5,
        key_fields=("q",),
        strata_field="s",
        image_field="image",
        pool=PinnedPool({"a": 3, "b": 4}, "0123456789abcdef"),
    )
    assert ContentDesign.from_document(d.as_document(), "f", "r") == d
    bad = {**d.as_document(), "n": 0}
    with pytest.raises(InputError, match="whole number") as e:
        ContentDesign.from_document(bad, "suite.json", "Comprehensive/MMStar")
    assert (e.value.file, e.value.row, e.value.field) == (
        "suite.json",
        "Comprehensive/MMStar",
        "design.n",
    )
    with pytest.raises(InputError, match="hex digits"):
        ContentDesign.from_document(
            {**d.as_document(), "pool": {"strata": {"a": 3}, "fingerprint": "xyz"}}, "f", "r"
        )


def test_the_stratified_estimate_by_hand():
    drawn = {"A": (10, 2), "B": (30, 3)}
    scores = {"A": [1.0, 0.0], "B": [1.0, 1.0, 0.0]}
    # W = (0.25, 0.75): 0.25·0.5 + 0.75·2/3 = 0.625
    # var: 0.25²·(1 − 2/10)·0.5/2 + 0.75²·(1 − 3/30)·(1/3)/3 = 0.0125 + 0.05625 = 0.06875
    e = stratified_estimate(drawn, scores, bounded=False)
    assert e is not None
    assert e.value == pytest.approx(0.625)
    assert e.se == pytest.approx(math.sqrt(0.06875))
    assert e.hi90 == pytest.approx(min(1.0, 0.625 + 1.6448536269514722 * math.sqrt(0.06875)))
    assert e.n_scored == 5
    # bounded: B's s² = 1/3 is floored at p̃(1 − p̃)·3/2, p̃ = 2.5/4 → 0.3515625; A's (p̃ = ½)
    # floor 0.5 equals its s²
    b = stratified_estimate(drawn, scores)
    assert b is not None
    want = 0.0125 + 0.75**2 * 0.9 * 0.3515625 / 3
    assert b.se == pytest.approx(math.sqrt(want))
    # an all-right stratum still has variance
    ones = stratified_estimate({"A": (100, 4)}, {"A": [1.0] * 4})
    assert ones is not None and ones.se > 0 and ones.lo95 < 1.0
    # a census stratum (n = N) adds none; a stratum with no scored item: no estimate
    assert stratified_estimate({"A": (2, 2)}, {"A": [1.0, 0.0]}).se == 0.0  # type: ignore[union-attr]
    assert stratified_estimate(drawn, {"A": [1.0, 0.0]}) is None


def test_the_interval_width_at_a_size():
    assert interval_width(100) == pytest.approx(2 * 1.6448536269514722 * 0.05)
    assert interval_width(50) > interval_width(100) > interval_width(200)


def test_a_suite_pins_its_design_only_pools():
    from pathlib import Path

    from primebench_tasks.data.cards import card
    from primebench_tasks.suite.content_design import design_only_document
    from primebench_tasks.suite.manifest import SuiteManifest

    flagship = Path(__file__).parents[2] / "task_configs" / "suites" / "primebench.json"
    wide = SuiteManifest.read(flagship).with_design_only(
        [design_only_document(card("MMStar"), 6), design_only_document(card("POPE"), 6)], "w"
    )
    pool = PinnedPool({"math": 30, "coarse perception": 30}, "00ff00ff00ff00ff")
    pinned = wide.with_pinned_pools({"MMStar": pool})
    assert pinned.name == "w_pinned" and pinned.version != wide.version
    assert pinned.design_only_entry("MMStar").design.pool == pool
    assert pinned.design_only_entry("POPE").design.pool is None
    with pytest.raises(InputError, match="are not design-only benchmarks"):
        wide.with_pinned_pools({"MMMU_DEV_VAL": pool})


def _picture(grey: int) -> object:
    from PIL import Image

    img = Image.new("RGB", (32, 32), (grey, grey, grey))
    img.paste((255 - grey, 0, grey), (0, 0, 16, 16))  # not flat: a JPEG copy moves it a little
    return img


def test_a_cross_harness_design_ranks_one_texts_rows_by_their_image_and_spreads_their_keys():
    """View designs (#81) key the text alone; the rows of one text in a stratum are ranked by
    their image's mean grey, and rank k is keyed SHA-256(text key#k) — by hand — whatever the
    row order and through a JPEG copy of every image (what VLMEvalKit's TSVs hold)."""
    import io

    from PIL import Image

    pytest.importorskip("numpy")
    design = ContentDesign(
        n=3,
        key_fields=("question", "answers"),
        strata_field="stratum",
        image_field="image",
        salt="primebench/2",
        view="pope",
    )
    rows = [
        {
            "question": "Is there a dog?",
            "answers": ["yes"],
            "stratum": "random",
            "image": _picture(g),
        }
        for g in (200, 40, 120)
    ] + [{"question": "Is there a cat?", "answers": ["no"], "stratum": "random", "image": None}]
    text = hashlib.sha256(b"primebench/2\x1frandom\x1fis there a dog?\x1fyes").hexdigest()[:16]
    assert row_key(rows[0], design) == text  # the image is not in the key
    drawn = resolve(rows, design, "POPE")
    keys = {pos: k for k, _, pos in drawn.items}
    by_grey = {1: 0, 2: 1, 0: 2}  # grey 40 → rank 0, 120 → rank 1, 200 → rank 2
    every = {
        pos: hashlib.sha256(f"{text}#{rank}".encode()).hexdigest()[:16]
        for pos, rank in by_grey.items()
    }
    assert all(keys[pos] == every[pos] for pos in keys if pos in every)
    assert drawn.strata == {"random": (4, 3)}

    def jpeg(image: object) -> object:
        buf = io.BytesIO()
        image.save(buf, format="JPEG", quality=75)  # type: ignore[attr-defined]
        return Image.open(io.BytesIO(buf.getvalue()))

    copied = [{**r, "image": jpeg(r["image"]) if r["image"] else None} for r in rows[::-1]]
    again = resolve(copied, design, "POPE")
    assert again.fingerprint == drawn.fingerprint and again.strata == drawn.strata
    assert sorted(k for k, _, _ in again.items) == sorted(k for k, _, _ in drawn.items)
