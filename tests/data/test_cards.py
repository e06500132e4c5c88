"""Benchmark cards: parsed and checked, hand-checked values, and what is derived from them."""

from __future__ import annotations

import shutil

import pytest

from primebench_tasks.data.cards import (
    benchmark_cards,
    card,
    cards_folder,
    parse_card,
    read_cards,
    released_sources,
)
from primebench_tasks.data.catalogue import aliases, lookup
from primebench_tasks.errors import InputError

MINIMAL = """name = "NewBench"
aliases = ["NewBench_TEST"]

[catalogue]
category = "Image Understanding"
metric = "exact match"
metric_kind = "binary"
score_min = 0
score_max = 1
lmms_eval_task = "newbench"
vlmeval_dataset = "NewBench"
"""


def test_the_installed_cards_hand_checked():
    blink = card("BLINK")
    assert blink.catalogue.category == "Visual Reasoning"
    assert blink.lmms_eval is not None and blink.lmms_eval.key == "idx"
    assert blink.lmms_eval.subtask_pattern == r"^val_(.+)_\d+$"
    assert blink.records_rule == "mcq" and blink.embedded is not None
    assert blink.embedded.panel == "openvlm_blink"
    assert {(r.suite, r.panel, r.position) for r in blink.released} == {
        ("primebench", "openvlm_blink", 4),
        ("primebench_vlmeval", "openvlm_blink", 3),
    }
    assert card("MMMU").name == "MMMU_DEV_VAL" and card("AI2D").name == "AI2D_TEST"
    assert released_sources("primebench") == (
        ("m3irt", "MathVista_MINI"),
        ("mathvision", "MATH-Vision_MINI"),
        ("mmmu_merged", "MMMU_DEV_VAL"),
        ("openvlm_blink", "BLINK"),
        ("autojudger", "AI2D_TEST"),
        ("openvlm_ocrbench_text", "OCRBench"),
        ("openvlm_realworldqa_text", "RealWorldQA"),
    )
    assert [b for _, b in released_sources("primebench_vlmeval")] == [
        "AI2D_TEST",
        "MMMU_DEV_VAL",
        "BLINK",
        "OCRBench",
        "RealWorldQA",
    ]


def test_the_catalogue_names_are_the_cards_names():
    names = {n for c in benchmark_cards() for n in c.names}
    assert set(aliases()) == names
    assert lookup("MMMU_VAL").lmms_eval_task == "mmmu_val"
    assert lookup("OCRBench").category == "Text Recognition"


def test_the_harness_tables_are_read_from_the_cards():
    from harness_adapters.harnesses.vlmeval.records import DATASET_KINDS
    from harness_adapters.lmms_eval_upstream.tasks import VERIFIED_UPSTREAM

    assert sorted(VERIFIED_UPSTREAM) == [
        "blink",
        "mathvista_testmini",
        "mmmu_val",
        "ocrbench",
        "realworldqa",
    ]
    assert VERIFIED_UPSTREAM["ocrbench"].text_key == "ocrbench"
    assert VERIFIED_UPSTREAM["mathvista_testmini"].variant == "mathvista_testmini_format"
    assert DATASET_KINDS["OCRBench"] == "ocrbench" and DATASET_KINDS["RealWorldQA"] == "mcq"


def test_a_new_released_benchmark_is_one_card(tmp_path):
    """A copy of the cards plus one new card: the suite's sources grow by it, in its place."""
    folder = tmp_path / "cards"
    shutil.copytree(cards_folder(), folder)
    (folder / "NewBench.toml").write_text(
        MINIMAL + '\n[vlmeval]\nrecords_rule = "mcq"\n\n[[released]]\n'
        'suite = "primebench_vlmeval"\npanel = "openvlm_newbench"\nposition = 6\n'
    )
    cards = read_cards(folder)
    assert released_sources("primebench_vlmeval", cards)[-1] == ("openvlm_newbench", "NewBench")
    assert len(released_sources("primebench_vlmeval", cards)) == 6


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (
            MINIMAL.replace('metric_kind = "binary"', 'metric_kind = "ordinal"'),
            "metric_kind",
            "one of",
        ),
        (MINIMAL.replace("score_max = 1", "score_max = 0"), "score_min", "below"),
        (
            MINIMAL.replace('metric = "exact match"\n', ""),
            "catalogue",
            "missing fields \\['metric'\\]",
        ),
        (MINIMAL + "\n[vlmeval]\nrecords_rule = 'judge'\n", "records_rule", "one of"),
        (
            MINIMAL + "\n[lmms_eval]\ntask = 'other'\nkey = 'id'\nscorer = 'x'\n",
            "lmms_eval.task",
            "not the catalogue",
        ),
        (MINIMAL + "\n[[released]]\nsuite = 'primebench'\n", "released", "exactly suite"),
        (MINIMAL + "\ncolour = 'blue'\n", None, "unknown fields \\['colour'\\]"),
        ("name = [", None, "not valid TOML"),
    ],
)
def test_a_bad_card_names_file_and_field(text, field, message):
    with pytest.raises(InputError, match=message) as exc:
        parse_card(text, "cards/NewBench.toml")
    assert "cards/NewBench.toml" in str(exc.value)
    if field:
        assert field in str(exc.value)


def test_two_cards_claiming_one_name_are_refused(tmp_path):
    folder = tmp_path / "cards"
    folder.mkdir()
    (folder / "A.toml").write_text(MINIMAL)
    (folder / "B.toml").write_text(MINIMAL.replace('name = "NewBench"', 'name = "Other"'))
    with pytest.raises(InputError, match="name 'NewBench_TEST' is claimed by .*A.toml too"):
        read_cards(folder)
