"""The instruction-following (if) axis: the 11-constraint pool of PRISM-VLM Table 10 (adapted
from IFEval), deterministic per-item sampling of 1-3 constraints, and a verifier for each."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

KEYWORDS = ("because", "therefore", "image", "answer", "clearly", "first", "result", "shown")
_SENT = re.compile(r"[^.!?]+[.!?]+(?=\s|$)")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.findall(text.strip()) if s.strip()]


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9']+", text)


def _json_obj(text: str) -> Any:
    t = text.strip()
    if t.startswith("```"):
        t = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", t)
    return json.loads(t)


@dataclass(frozen=True)
class Constraint:
    id: str
    family: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def instruction(self) -> str:
        p = self.params
        return {
            "max_words": f"Answer in at most {p.get('n')} words.",
            "exact_sentences": f"Answer in exactly {p.get('n')} sentences.",
            "all_caps": "Write your entire answer in capital letters.",
            "all_lowercase": "Write your entire answer in lowercase letters.",
            "include_word": f'Include the word "{p.get("word")}" in your answer.',
            "exclude_word": f'Do not use the word "{p.get("word")}" in your answer.',
            "json_keys": "Answer as a JSON object with exactly the keys "
            + ", ".join(f'"{k}"' for k in p.get("keys", []))
            + ".",
            "python_list": 'Answer as a Python list literal, e.g. ["a", "b"].',
            "starts_with_answer": "Start your answer with 'Answer:'.",
            "ends_single_sentence": "End your answer with a final line that is a single sentence.",
            "yes_no_only": "Answer with 'yes' or 'no' only.",
        }[self.id]

    def verify(self, answer: str) -> bool:
        return VERIFIERS[self.id](answer, self.params)


def _python_list(a: str, p: dict[str, Any]) -> bool:
    import ast

    try:
        return isinstance(ast.literal_eval(a.strip()), list)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False


def _json_keys(a: str, p: dict[str, Any]) -> bool:
    try:
        obj = _json_obj(a)
    except (json.JSONDecodeError, ValueError):
        return False
    return isinstance(obj, dict) and sorted(obj) == sorted(p["keys"])


def _ends_single(a: str, p: dict[str, Any]) -> bool:
    lines = [ln for ln in a.strip().splitlines() if ln.strip()]
    return bool(lines) and len(_sentences(lines[-1])) == 1


VERIFIERS: dict[str, Callable[[str, dict[str, Any]], bool]] = {
    "max_words": lambda a, p: 0 < len(_words(a)) <= p["n"],
    "exact_sentences": lambda a, p: len(_sentences(a)) == p["n"],
    "all_caps": lambda a, p: any(c.isalpha() for c in a) and a == a.upper(),
    "all_lowercase": lambda a, p: any(c.isalpha() for c in a) and a == a.lower(),
    "include_word": lambda a, p: re.search(rf"\b{re.escape(p['word'])}\b", a, re.I) is not None,
    "exclude_word": lambda a, p: re.search(rf"\b{re.escape(p['word'])}\b", a, re.I) is None,
    "json_keys": _json_keys,
    "python_list": _python_list,
    "starts_with_answer": lambda a, p: a.lstrip().startswith("Answer:"),
    "ends_single_sentence": _ends_single,
    "yes_no_only": lambda a, p: a.strip().strip(".!").lower() in ("yes", "no"),
}

FAMILIES = {
    "max_words": "length",
    "exact_sentences": "length",
    "all_caps": "casing",
    "all_lowercase": "casing",
    "include_word": "keyword",
    "exclude_word": "keyword",
    "json_keys": "output format",
    "python_list": "output format",
    "starts_with_answer": "answer shape",
    "ends_single_sentence": "answer shape",
    "yes_no_only": "answer shape",
}
CONFLICTS = [
    {"all_caps", "all_lowercase"},
    {"json_keys", "python_list", "yes_no_only", "exact_sentences", "ends_single_sentence"},
    {"yes_no_only", "starts_with_answer"},
    {"yes_no_only", "include_word"},
    {"json_keys", "starts_with_answer"},
    {"python_list", "starts_with_answer"},
]


def sample_constraints(item_key: str, seed: int = 0) -> list[Constraint]:
    """1-3 mutually compatible constraints, chosen deterministically from a hash of the item key
    and seed (the same item always gets the same constraints)."""
    h = int(hashlib.sha256(f"{seed}:{item_key}".encode()).hexdigest(), 16)
    n = 1 + h % 3
    ids = sorted(VERIFIERS)
    order = sorted(ids, key=lambda c: hashlib.sha256(f"{h}:{c}".encode()).hexdigest())
    chosen: list[str] = []
    for c in order:
        if len(chosen) == n:
            break
        if any(c in grp and any(x in grp for x in chosen) for grp in CONFLICTS):
            continue
        chosen.append(c)
    out = []
    for c in chosen:
        params: dict[str, Any] = {}
        if c == "max_words":
            params["n"] = 10 + h % 4 * 10
        elif c == "exact_sentences":
            params["n"] = 1 + h % 3
        elif c in ("include_word", "exclude_word"):
            params["word"] = KEYWORDS[(h >> 8) % len(KEYWORDS)]
        elif c == "json_keys":
            params["keys"] = ["answer", "reason"]
        out.append(Constraint(c, FAMILIES[c], params))
    return out


def if_score(answer: str, constraints: list[Constraint]) -> float:
    """Mean compliance over the item's constraints."""
    return sum(c.verify(answer) for c in constraints) / len(constraints)
