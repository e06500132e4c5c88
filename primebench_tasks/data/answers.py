"""Reading a model's answer from its free-text response, as VLMEvalKit's exact-matching policy
reads it (ported, so that the same rule reads a new run's responses and the reference runs'
published predictions alike): the option letter of a multiple-choice answer
(:func:`builtin_can_infer`) and the yes/no of a yes/no answer (:func:`builtin_yorn`). Used by
the VLMEvalKit records import (the reference panels' scores) and by the placement's response
check (:mod:`primebench_tasks.place.responses`)."""

from __future__ import annotations

import re


def builtin_can_infer(answer: str, choices: dict[str, str]) -> str | bool:
    """The option letter VLMEvalKit's ``can_infer`` reads from ``answer`` (its exact_matching
    rule, ported): ``'Z'`` for a refusal, ``False`` when no letter can be read."""
    answer = str(answer)
    if "Failed to obtain answer via API" in answer:
        return False
    for refusal in (
        "Sorry, I can't help with images of people yet.",
        "I can't process this file.",
        "I'm sorry, but without the image provided",
        "Cannot determine the answer",
    ):
        if refusal in answer:
            return "Z"
    mod = answer
    for c in ".()[],:;!*#{}":
        mod = mod.replace(c, " ")
    splits = [x.strip() for x in mod.split()]
    count = sum(1 for c in choices if c in splits)
    if count == 1:
        for ch in choices:
            if ch in splits and splits.index(ch) > (len(splits) - 5):
                return ch
    elif count == 0 and sum(1 for c in ("Z", "") if c in splits) == 1:
        return "Z"
    m = _VERBOSE_ANSWER.search(answer)
    if m and m.group(1).upper() in choices:
        return m.group(1).upper()
    return _can_infer_text(answer, choices)


_VERBOSE_ANSWER = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")
"""VLMEvalKit's ``_VERBOSE_ANSWER_RE`` ("The correct answer is **B**")."""


def _can_infer_text(answer: str, choices: dict[str, str]) -> str | bool:
    low = answer.lower()
    if len(low) > 2 * sum(len(str(v)) for v in choices.values()):
        return False
    hits = [k for k, v in choices.items() if str(v).lower() in low]
    return hits[0] if len(hits) == 1 else False


_PUNCT: tuple[str, ...] = (
    ";",
    "/",
    "[",
    "]",
    '"',
    "{",
    "}",
    "(",
    ")",
    "=",
    "+",
    "\\",
    "_",
    "-",
    ">",
    "<",
    "@",
    "`",
)
_PUNCT = (*_PUNCT, ",", "?", "!")
_COMMA_STRIP = re.compile(r"(\d)(,)(\d)")
_PERIOD_STRIP = re.compile(r"(?<!\d)\.(?!\d)")


def _process_punctuation(text: str) -> str:
    """VLMEvalKit's ``process_punctuation`` (``vlmeval.smp.misc``), ported as it is — including
    that it removes at most 32 lone periods (upstream passes ``re.UNICODE`` as ``count``)."""
    out = text
    for p in _PUNCT:
        if (p + " " in text or " " + p in text) or _COMMA_STRIP.search(text) is not None:
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    return _PERIOD_STRIP.sub("", out, count=32)


def builtin_yorn(prediction: str) -> str:
    """VLMEvalKit's ``YOrN_Extraction`` (its exact_matching policy for yes/no datasets), ported:
    ``'Yes'`` when the folded words hold "yes" and not "no", ``'No'`` the other way round,
    ``'Unknown'`` otherwise."""
    words = _process_punctuation(str(prediction).lower()).split()
    if "yes" in words and "no" not in words:
        return "Yes"
    if "yes" not in words and "no" in words:
        return "No"
    return "Unknown"
