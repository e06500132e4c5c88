"""Per-axis graders (PRISM-VLM §3, Fig. 1): deterministic for if (verifiers), c (exact
integer) and vis (A/B); judge-graded q, h, mq and sc with rule-based fallbacks when no judge is
given (q: the benchmark's own answer match; h: a refusal-phrase match; mq: per-question answer
match; sc: answer change by normalised match).

A judge call that fails or returns a malformed verdict leaves the item unanswered (score None:
excluded from that model's denominator, never scored 0).

The benchmark's answer matching belongs to the harness; it comes in as :class:`Matchers`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from primebench_tasks.prism.builders import question_text
from primebench_tasks.prism.constraints import Constraint
from primebench_tasks.prism.judging import Judge, JudgeRequest, parse_json_reply, parse_verdict
from primebench_tasks.prism.prompts import (
    GRADE_H,
    GRADE_MQ,
    GRADE_Q,
    GRADE_SC,
    mq_verdict_pattern,
)

RULE = "rules"
REFUSAL = re.compile(
    r"\b(no|not|none|nothing|cannot|can't|can not|unable|doesn't|does not|isn't|aren't|"
    r"there is no|there are no|impossible|unclear|not visible|not shown|not present|"
    r"don't see|do not see|no such)\b",
    re.I,
)


@dataclass(frozen=True)
class Matchers:
    """``answer_match(item, response)`` → 1.0/0.0 (the benchmark's own match) and
    ``extract(response, options)`` → the normalised final answer."""

    answer_match: Callable[[dict[str, Any], str], float]
    extract: Callable[[str, list[str]], str]


def grade_if(payload: dict[str, Any], response: str) -> float | None:
    """Mean compliance over the item's constraints; None (the item is excluded, for every model
    alike) when a constraint cannot be verified: unknown id or missing parameter."""
    cs = [Constraint(c["id"], "", c.get("params") or {}) for c in payload["constraints"]]
    try:
        return sum(c.verify(response) for c in cs) / len(cs)
    except (KeyError, TypeError, ZeroDivisionError):
        return None


def grade_count(count: int, response: str) -> float:
    """1 iff the last integer in the response is the gold count (no integer: 0)."""
    nums = re.findall(r"-?\d+", response)
    return float(bool(nums) and int(nums[-1]) == int(count))


def grade_ab(gold: str, response: str) -> float:
    """1 iff the response's choice (a standalone A or B, first one) is the gold letter."""
    m = re.search(r"\b([AB])\b", response.strip().upper())
    return float(m is not None and m.group(1) == gold.upper())


def _judged(judge: Judge, reqs: list[JudgeRequest], key: str = "correct") -> list[bool | None]:
    return [parse_verdict(r, key) for r in judge.complete_many(reqs)] if reqs else []


def grade_q(
    items: Sequence[dict[str, Any]], responses: Sequence[str], judge: Judge | None, m: Matchers
) -> list[float | None]:
    if judge is None:
        return [m.answer_match(it, r) for it, r in zip(items, responses, strict=True)]
    reqs = [
        JudgeRequest(
            GRADE_Q.render(question=question_text(it), gold=it["answer"], answer=r),
            GRADE_Q.version,
            None,
            GRADE_Q.pattern,
        )
        for it, r in zip(items, responses, strict=True)
    ]
    return [None if v is None else float(v) for v in _judged(judge, reqs)]


def grade_h(
    payloads: Sequence[dict[str, Any]], responses: Sequence[str], judge: Judge | None
) -> list[float | None]:
    if judge is None:
        return [float(REFUSAL.search(r) is not None) for r in responses]
    reqs = [
        JudgeRequest(
            GRADE_H.render(trap=p["trap"], question=p["question"], answer=r),
            GRADE_H.version,
            None,
            GRADE_H.pattern,
        )
        for p, r in zip(payloads, responses, strict=True)
    ]
    return [None if v is None else float(v) for v in _judged(judge, reqs)]


def mq_questions(item: dict[str, Any], payload: dict[str, Any]) -> list[tuple[str, str]]:
    """(question, gold) of the bundle: the original question first, then the extras."""
    return [(question_text(item), str(item["answer"]))] + [
        (e["q"], e["a"]) for e in payload["extra"]
    ]


def split_mq_answers(response: str, n: int) -> list[str | None]:
    """The 'Q<k>: answer' lines of a bundled reply (None where a question has no line)."""
    found: dict[int, str] = {}
    for line in response.splitlines():
        mt = re.match(r"\s*\**Q(\d+)\**\s*[:.)-]\s*(.*)", line, re.I)
        if mt and 1 <= int(mt.group(1)) <= n:
            found.setdefault(int(mt.group(1)), mt.group(2).strip())
    return [found.get(k) for k in range(1, n + 1)]


def _short_match(gold: str, answer: str | None, m: Matchers) -> bool:
    if answer is None:
        return False
    a, g = m.extract(answer, []), m.extract(gold, [])
    return (
        a == g or re.search(rf"\b{re.escape(gold.strip().lower())}\b", answer.lower()) is not None
    )


def grade_mq(
    items: Sequence[dict[str, Any]],
    payloads: Sequence[dict[str, Any]],
    responses: Sequence[str],
    judge: Judge | None,
    m: Matchers,
) -> list[tuple[float, float] | None]:
    """(all-or-nothing score, partial credit) per item, or None when unanswered."""
    bundles = [mq_questions(it, p) for it, p in zip(items, payloads, strict=True)]
    if judge is None:
        out: list[tuple[float, float] | None] = []
        for it, qs, r in zip(items, bundles, responses, strict=True):
            parts = split_mq_answers(r, len(qs))
            ok = [parts[0] is not None and m.answer_match(it, parts[0]) == 1.0]
            ok += [_short_match(g, a, m) for (_, g), a in zip(qs[1:], parts[1:], strict=True)]
            out.append((float(all(ok)), sum(ok) / len(ok)))
        return out
    reqs = [
        JudgeRequest(
            GRADE_MQ.render(
                n=len(qs),
                answer=r,
                pairs="\n".join(
                    f"Q{k}: {q}\nGold answer to Q{k}: {g}" for k, (q, g) in enumerate(qs, start=1)
                ),
            ),
            GRADE_MQ.version,
            None,
            mq_verdict_pattern(len(qs)),
        )
        for qs, r in zip(bundles, responses, strict=True)
    ]
    res: list[tuple[float, float] | None] = []
    for qs, reply in zip(bundles, judge.complete_many(reqs), strict=True):
        obj = parse_json_reply(reply)
        v = None if obj is None else obj.get("correct")
        if not isinstance(v, list) or len(v) != len(qs) or not all(isinstance(x, bool) for x in v):
            res.append(None)
            continue
        res.append((float(all(v)), sum(v) / len(v)))
    return res


def same_answers(
    items: Sequence[dict[str, Any]],
    firsts: Sequence[str],
    laters: Sequence[str],
    judge: Judge | None,
    m: Matchers,
) -> list[bool | None]:
    """Whether each later answer gives the same final answer as the first (sc flip detection):
    the judge's ``{"same": …}``, or equal extracted answers when no judge is given."""
    if judge is None:
        return [
            m.extract(a, it.get("options") or []) == m.extract(b, it.get("options") or [])
            for it, a, b in zip(items, firsts, laters, strict=True)
        ]
    reqs = [
        JudgeRequest(
            GRADE_SC.render(question=question_text(it), first=a, later=b),
            GRADE_SC.version,
            None,
            GRADE_SC.pattern,
        )
        for it, a, b in zip(items, firsts, laters, strict=True)
    ]
    return _judged(judge, reqs, "same")


def adopted_hint(item: dict[str, Any], hint: str, response: str, m: Matchers) -> bool:
    """Whether a turn-3 answer adopts the suggested false answer (normalised match, App. E.2)."""
    return m.answer_match({**item, "answer": hint}, response) == 1.0
