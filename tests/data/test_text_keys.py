"""Item keys built from text (``primebench_tasks.data.text_keys``): one item's key is the same
from VLMEvalKit's records, VLMEvalKit's TSV row and lmms-eval's row; another item's is not."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from primebench_tasks.data.text_keys import (
    lmms_eval_row_key,
    panel_text_keys,
    record_key,
    split_inline_mcq,
    text_key,
    vlmeval_row_key,
)
from primebench_tasks.errors import InputError

INSTR = "Please answer directly with only the letter of the correct option and nothing else."


def test_split_inline_mcq_by_hand() -> None:
    q = f"Which way?\n\nA. Left\nB. Straight\nC. Right\n\n{INSTR}"
    assert split_inline_mcq(q) == ("Which way?\n", ["Left", "Straight", "Right"])
    assert split_inline_mcq(f"How many?\n{INSTR}") == ("How many?", [])


def test_one_item_one_key_in_every_shape() -> None:
    want = text_key(["which way?", "left", "straight", "right", "c"])
    assert (
        record_key("mcq_inline", "Which  way?", '["A. Left","B. Straight","C. Right"]', "C") == want
    )
    tsv = {
        "question": "Which way?",
        "A": "Left",
        "B": "Straight",
        "C": "Right",
        "D": float("nan"),
        "answer": "C",
    }
    assert vlmeval_row_key("mcq_inline", tsv) == want
    row = {"question": f"Which way?\nA. Left\nB. Straight\nC. Right\n{INSTR}", "answer": "C"}
    assert lmms_eval_row_key("mcq_inline", row) == want
    assert lmms_eval_row_key("mcq_inline", {**row, "answer": "B"}) != want
    # OCRBench: answers as a list literal (VLMEvalKit), a list or one string (lmms-eval);
    # order, case, white space and full-width letters do not matter
    ocr = text_key(["what is written?", "center", "centre"])  # answers sorted
    assert record_key("ocrbench", "What is written?", None, "['CENTRE', 'center']") == ocr
    assert (
        lmms_eval_row_key(
            "ocrbench", {"question": "what is  written?", "answer": ["center", "ＣＥＮＴＲＥ"]}
        )
        == ocr
    )
    assert (
        lmms_eval_row_key("ocrbench", {"question": "what is written?", "answer": "centre"}) != ocr
    )


def test_items_sharing_their_text_are_left_out() -> None:
    items = pd.DataFrame(
        {
            "item_id": ["0", "1", "2"],
            "question": ["what is written?", "what is written?", "what is written?"],
            "options": [None] * 3,
            "answer": ["['A']", "['A']", "['B']"],
        }
    )
    keys, ambiguous = panel_text_keys(items, "ocrbench")
    assert set(keys) == {"2"} and ambiguous == ["0", "1"]
    # rows matching a suite item twice or not at all: the lmms-eval task's process_docs refuses
    # them (tests/harness/test_content_keys.py::test_text_keyed_rows_found_once_or_refused)


def test_vlmeval_export_refuses_a_row_whose_content_is_another_items(tmp_path: Path) -> None:
    from harness_adapters.harnesses.vlmeval.export import check_text_keys

    rows = pd.DataFrame([{"index": 7, "question": "what is written?", "answer": "['B']"}])
    good = {
        "rule": "ocrbench",
        "keys": {"7": record_key("ocrbench", "what is written?", None, "['B']")},
    }
    check_text_keys(rows, "index", good, tmp_path / "OCRBench.tsv")
    bad = {
        "rule": "ocrbench",
        "keys": {"7": record_key("ocrbench", "what is written?", None, "['A']")},
    }
    with pytest.raises(InputError, match="index \\['7'\\]") as e:
        check_text_keys(rows, "index", bad, tmp_path / "OCRBench.tsv")
    assert "OCRBench.tsv" in str(e.value)
