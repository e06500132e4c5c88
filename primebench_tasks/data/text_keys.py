"""Item keys built from the text an item's records carry — for benchmarks whose reference panel
is keyed by one harness's row index (VLMEvalKit's ``index`` of OCRBench and RealWorldQA) while
another harness's rows carry no such id (lmms-eval's ``ocrbench`` and ``realworldqa`` rows).

A key is the SHA-256 (first 16 hex digits) of the item's normalised parts (case and white space
folded, full-width ASCII folded), by a named rule:

- ``ocrbench``: the question and the accepted answers, sorted (VLMEvalKit writes them as a
  Python list literal, lmms-eval's rows hold a list or one string);
- ``mcq_inline``: the question stem, the option texts in order and the gold letter. VLMEvalKit
  holds the options in columns ``A``..; the records panel as ``["A. text", ...]``; lmms-eval's
  RealWorldQA rows inline them in the question as ``A. text`` lines followed by the instruction
  ("Please answer directly with ...").

Keys are built at release from the reference records (:func:`panel_text_keys`); an item whose key
another item of the benchmark shares cannot be told apart by text and is left out of the suite
(counted in the manifest). At run time every harness computes the key of the rows it loaded and
keeps exactly the suite's items: a suite item that matches no row or several rows is refused by
name, never guessed.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from primebench_tasks.errors import InputError

TEXT_RULES = ("ocrbench", "mcq_inline")
TEXT_KEY_FIELD = "primebench_content_key"
"""The computed row field a text-keyed task filters on (the content keys' field)."""


def _fold(text: Any) -> str:
    s = "".join(
        chr(ord(c) - 0xFEE0) if 0xFF01 <= ord(c) <= 0xFF5E else " " if c == "\u3000" else c
        for c in str(text)
    )
    return re.sub(r"\s+", " ", s).strip().lower()


def text_key(parts: list[str]) -> str:
    """The key of already-normalised ``parts``."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def accepted_answers(value: Any) -> list[str]:
    """Accepted answers: a list, a Python/JSON list literal, or one string."""
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if hasattr(value, "tolist"):  # a numpy array from a parquet/arrow column
        return [str(v) for v in value.tolist()]
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, list):
            return [str(v) for v in parsed]
    return [text]


def ocrbench_key(question: Any, answer: Any) -> str:
    return text_key([_fold(question), *sorted(_fold(a) for a in accepted_answers(answer))])


def mcq_key(question: Any, options: list[Any], letter: Any) -> str:
    return text_key([_fold(question), *(_fold(o) for o in options), _fold(letter)])


_OPTION_LINE = re.compile(r"^\s*([A-J])[.)]\s*(.*)$")
_INSTRUCTION = re.compile(r"^\s*please answer", re.IGNORECASE)


def split_inline_mcq(question: str) -> tuple[str, list[str]]:
    """(stem, option texts) of a question that inlines its options as ``A. text`` lines
    (consecutive letters from A); instruction lines after them are dropped."""
    lines = str(question).splitlines()
    start = next(
        (k for k, line in enumerate(lines) if (m := _OPTION_LINE.match(line)) and m[1] == "A"),
        None,
    )
    if start is None:
        kept = [ln for ln in lines if not _INSTRUCTION.match(ln)]
        return "\n".join(kept), []
    options: list[str] = []
    for line in lines[start:]:
        m = _OPTION_LINE.match(line)
        if m and m[1] == "ABCDEFGHIJ"[len(options)]:
            options.append(m[2])
        elif line.strip() and not _INSTRUCTION.match(line):
            break
    return "\n".join(lines[:start]), options


def _strip_letter(option: str) -> str:
    m = _OPTION_LINE.match(option)
    return m[2] if m else option


def record_key(rule: str, question: Any, options: Any, answer: Any) -> str:
    """The key of a records panel item (``options``: the panel's JSON list of ``"A. text"``)."""
    if rule == "ocrbench":
        return ocrbench_key(question, answer)
    if rule == "mcq_inline":
        opts = json.loads(options) if isinstance(options, str) and options else options or []
        return mcq_key(question, [_strip_letter(str(o)) for o in opts], answer)
    raise InputError(f"no text-key rule {rule!r} (known: {', '.join(TEXT_RULES)})", field="rule")


def lmms_eval_row_key(rule: str, row: Mapping[str, Any]) -> str:
    """The key of an upstream lmms-eval row (``ocrbench``: question, answer;
    ``mcq_inline``: question with its inline options, answer letter)."""
    if rule == "ocrbench":
        return ocrbench_key(row["question"], row["answer"])
    if rule == "mcq_inline":
        stem, options = split_inline_mcq(str(row["question"]))
        return mcq_key(stem, options, row["answer"])
    raise InputError(f"no text-key rule {rule!r} (known: {', '.join(TEXT_RULES)})", field="rule")


def vlmeval_row_key(rule: str, row: Mapping[str, Any]) -> str:
    """The key of a VLMEvalKit TSV row (question, answer; options in columns A..)."""
    if rule == "ocrbench":
        return ocrbench_key(row["question"], row["answer"])
    if rule == "mcq_inline":
        options = []
        for c in "ABCDEFGHIJ":
            v = row.get(c)
            if v is None or (isinstance(v, float) and v != v) or str(v).strip() in ("", "nan"):
                break
            options.append(v)
        return mcq_key(row["question"], options, row["answer"])
    raise InputError(f"no text-key rule {rule!r} (known: {', '.join(TEXT_RULES)})", field="rule")


def panel_text_keys(items: Any, rule: str) -> tuple[dict[str, str], list[str]]:
    """(item id → key for the items whose key no other item shares, the ids left out as
    ambiguous) of a records panel's item table (columns item_id, question, options, answer)."""
    keys = {
        str(r.item_id): record_key(rule, r.question, r.options, r.answer)
        for r in items.itertuples()
    }
    count: dict[str, int] = {}
    for k in keys.values():
        count[k] = count.get(k, 0) + 1
    unique = {i: k for i, k in keys.items() if count[k] == 1}
    return unique, sorted(set(keys) - set(unique))
