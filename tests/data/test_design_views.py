"""The cross-harness views of the design-only benchmarks (#81), by hand: a row of lmms-eval's
schema and a row of VLMEvalKit's TSV of the same item give the same canonical rows."""

from __future__ import annotations

import pytest

from primebench_tasks.data.design_views import check_view, design_view
from primebench_tasks.errors import InputError
from primebench_tasks.suite.content_design import ContentDesign

IMG = object()  # the image passes through as given (the caller decodes VLMEvalKit's base64)


def _same(view: str, lmms: dict, vlmeval: dict) -> dict:
    v = design_view(view)
    (ours,) = v.vlmeval_rows({**vlmeval, "image": IMG})
    theirs = v.lmms_eval_row({**lmms, "image": IMG})
    assert ours == theirs
    return ours


def test_mmstar_keys_the_stem_whether_the_options_are_inlined_or_in_columns():
    row = _same(
        "mmstar",
        {
            "question": "Which shape?\nOptions: A: circle, B: square",
            "answer": "B",
            "category": "math",
        },
        {
            "question": "Which shape?",
            "A": "circle",
            "B": "square",
            "answer": "B",
            "category": "math",
        },
    )
    assert row == {"question": "Which shape?", "answers": ["B"], "image": IMG, "stratum": "math"}
    lines = {"question": "Which shape?\nA. circle\nB. square", "answer": "B", "category": "math"}
    assert design_view("mmstar").vlmeval_rows({**lines, "image": IMG}) == [row]


def test_scienceqa_reads_the_answer_index_as_its_letter_and_the_columns_as_options():
    row = _same(
        "scienceqa",
        {"question": "Which is north?", "choices": ["Maine", "Ohio", "Texas"], "answer": 1,
         "hint": ""},
        {"question": "Which is north?", "A": "Maine", "B": "Ohio", "C": "Texas", "D": "",
         "E": "", "answer": "B", "hint": ""},
    )  # fmt: skip
    assert row["options"] == ["Maine", "Ohio", "Texas"] and row["answers"] == ["B"]
    with pytest.raises(ValueError, match="answer index 12"):
        design_view("scienceqa").lmms_eval_row({**row, "choices": [], "answer": 12})


def test_textvqa_and_chartqa_sort_the_accepted_answers_however_written():
    row = _same(
        "textvqa",
        {"question": "What does it say?", "answers": ["stop", "STOP", "stop"]},
        {"question": "What does it say?", "answer": "['stop', 'stop', 'STOP']"},
    )
    assert row["answers"] == ["STOP", "stop", "stop"]
    _same("chartqa", {"question": "Value?", "answer": "14"}, {"question": "Value?", "answer": "14"})
    _same(
        "chartqa",
        {"question": "Value?", "answer": "14"},
        {"question": "Value?", "answer": "['14']"},
    )


def test_a_vlmevalkit_pope_row_of_several_splits_is_one_item_per_split():
    rows = design_view("pope").vlmeval_rows(
        {"question": "Is there a dog?", "answer": "Yes", "category": "adversarial,popular",
         "image": IMG}
    )  # fmt: skip
    assert [r["stratum"] for r in rows] == ["adversarial", "popular"]
    assert rows[0] == design_view("pope").lmms_eval_row(
        {"question": "Is there a dog?", "answer": "Yes", "category": "adversarial", "image": IMG}
    )
    # battery 7: a split named twice is one item, not two
    twice = design_view("pope").vlmeval_rows(
        {"question": "Is there a dog?", "answer": "Yes", "category": "adversarial, adversarial",
         "image": IMG}
    )  # fmt: skip
    assert [r["stratum"] for r in twice] == ["adversarial"]


def test_a_design_keys_only_its_views_fields_and_unknown_views_are_named():
    def fail(msg: str, fld: str) -> InputError:
        return InputError(msg, field=fld)

    with pytest.raises(InputError, match="'type' is not a text field of view 'chartqa'"):
        check_view("chartqa", ("type",), None, "image", fail)
    with pytest.raises(InputError, match="view 'chartqa' carries no strata"):
        check_view("chartqa", ("question",), "stratum", "image", fail)
    with pytest.raises(InputError, match="no design view 'nope'"):
        design_view("nope")
    doc = {"scheme": "content_prn", "n": 5, "key_fields": ["question"], "view": "nope"}
    with pytest.raises(InputError, match=r"field 'design.view'.*must be a view name"):
        ContentDesign.from_document(doc, "suite.json", "Cat/POPE")
