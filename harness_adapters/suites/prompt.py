"""The harness-neutral prompt, decoding and scorer of a suite's local benchmarks (items whose
text, options and answer are in the panel): what the generated lmms-eval tasks call, what the vLLM
runner sends and scores, and what PRISM's rule grader reads — one definition for every harness, so
a model scores the same on a suite whichever way it is run."""

from __future__ import annotations

import json
import re
from typing import Any

PROMPT_KWARGS: dict[str, str] = {
    "mc_prompt": "Answer the question with the option's letter from the given choices directly.",
    "short_answer_prompt": "Answer the question with a number directly.",
}
"""``lmms_eval_specific_kwargs.default`` of every generated task (MATH-Vision's prompts)."""

GENERATION: dict[str, Any] = {"max_new_tokens": 64, "temperature": 0, "do_sample": False}
"""Greedy decoding, as in the generated tasks' ``generation_kwargs``."""


def doc_to_text(
    doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None
) -> str:
    """MATH-Vision-style prompt: the question, lettered options, and the answer instruction."""
    kw = lmms_eval_specific_kwargs or {}
    q = str(doc["question"]).replace("<image1>", "").strip()
    options = doc.get("options") or []
    if options:
        letters = "\n".join(f"{chr(65 + i)}. {o}" for i, o in enumerate(options))
        return f"{q}\n{letters}\n{kw.get('mc_prompt', 'Answer with the option letter.')}"
    return f"{q}\n{kw.get('short_answer_prompt', 'Answer with a number directly.')}"


def _norm(s: Any) -> str:
    return re.sub(r"\s+", " ", str(s)).strip().lower().rstrip(".")


def extract_answer(response: str, options: list[str]) -> str:
    """The option letter (multiple choice) or the last number / the stripped text (open)."""
    return parse_answer(response, options)[0]


def parse_answer(response: str, options: list[str]) -> tuple[str, bool]:
    """(:func:`extract_answer`'s answer, whether it fell back): with options, the first lone
    capital letter, else — the fallback — the response's first character; without, the last
    number, else the normalised text (no fallback: the text is the answer)."""
    r = response.strip()
    if options:
        m = re.search(r"\b([A-Z])\b", r.upper())
        return (m.group(1), False) if m else (r[:1].upper(), True)
    nums = re.findall(r"-?\d+(?:\.\d+)?", r)
    return (nums[-1], False) if nums else (_norm(r), False)


def doc_options(doc: dict[str, Any]) -> list[str]:
    """A shared document's options (a list, or its JSON text), [] for an open question."""
    options = doc.get("options") or []
    if isinstance(options, str):
        options = json.loads(options) if options.startswith("[") else []
    return list(options)


def exact_answer_score(doc: dict[str, Any], response: str) -> float:
    """1.0 when the extracted answer equals the gold answer (letters, numbers or text)."""
    pred = extract_answer(response, doc_options(doc))
    gold = str(doc["answer"]).strip()
    try:
        return float(abs(float(pred) - float(gold)) < 1e-6)
    except ValueError:
        return float(_norm(pred) == _norm(gold))
