"""Builders of the per-(item, axis) artifacts (PRISM-VLM §3, App. B–D).

Every builder has an ``id`` (axis/version: stored in the artifact; an artifact is never rebuilt
under the same id), ``request(benchmark, item_id, item)`` → the generator-judge call it needs
(``None`` when it builds offline), and ``make(benchmark, item_id, item, reply)`` → the artifact
payload, raising :class:`ArtifactRejected` when the reply is malformed, a refusal, or unusable.

``item`` is a suite document: ``question``, ``options`` (list), ``answer``, ``image`` (path or
None). Sub-types, bundle sizes and A/B orders come from a hash of ``axis:benchmark/item_id`` so
that a build is reproducible.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

from primebench_tasks.prism.constraints import sample_constraints
from primebench_tasks.prism.judging import JudgeRequest, parse_json_reply
from primebench_tasks.prism.prompts import (
    GEN_C,
    GEN_H,
    GEN_MQ,
    GEN_SC_HINT,
    GEN_VIS,
    H_SUBTYPES,
    SC_Q1,
    SC_Q2,
    SC_Q3,
    SYNTH_MAX_TOKENS,
    Prompt,
)


class ArtifactRejected(ValueError):
    """The generator's reply cannot make an artifact (malformed JSON, a refusal, an item the
    axis does not apply to). The item is dropped from that axis for every model alike."""


class NeedsJudge(RuntimeError):
    """This artifact needs a generator judge and none was given."""


def item_hash(axis: str, benchmark: str, item_id: str) -> int:
    return int(hashlib.sha256(f"{axis}:{benchmark}/{item_id}".encode()).hexdigest(), 16)


def question_text(item: dict[str, Any]) -> str:
    """The question with its lettered options, as context for the generator."""
    q = str(item["question"]).replace("<image1>", "").strip()
    opts = item.get("options") or []
    return q + "".join(f"\n{chr(65 + i)}. {o}" for i, o in enumerate(opts))


class Builder(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def axis(self) -> str: ...

    def request(
        self, benchmark: str, item_id: str, item: dict[str, Any]
    ) -> JudgeRequest | None: ...

    def make(
        self, benchmark: str, item_id: str, item: dict[str, Any], reply: str | None
    ) -> dict[str, Any]: ...


def _obj(reply: str | None) -> dict[str, Any]:
    obj = parse_json_reply(reply)
    if obj is None:
        raise ArtifactRejected(f"malformed generator reply: {str(reply)[:120]!r}")
    if "refused" in obj:
        raise ArtifactRejected(f"the generator refused: {str(obj['refused'])[:120]}")
    return obj


def _text(obj: dict[str, Any], key: str) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or not v.strip():
        raise ArtifactRejected(f"generator reply has no text field {key!r}")
    return v.strip()


def _image_request(
    axis: str, prompt: Prompt, item: dict[str, Any], **fields: object
) -> JudgeRequest:
    """The generator call of an image axis: ``prompt`` rendered with ``fields``, the item's
    image, the prompt's pattern, the synthesis budget; an item without an image is rejected."""
    if not item.get("image"):
        raise ArtifactRejected(f"{axis}: the item has no image")
    return JudgeRequest(
        prompt.render(**fields), prompt.version, item["image"], prompt.pattern, SYNTH_MAX_TOKENS
    )


@dataclass(frozen=True)
class IFBuilder:
    """if: 1-3 constraints from the Table 10 pool, deterministic per item (no judge call)."""

    seed: int = 0
    id: str = "if/v1"
    axis: str = "if"

    def request(self, benchmark: str, item_id: str, item: dict[str, Any]) -> None:
        return None

    def make(
        self, benchmark: str, item_id: str, item: dict[str, Any], reply: str | None
    ) -> dict[str, Any]:
        cs = sample_constraints(f"{benchmark}/{item_id}", self.seed)
        return {
            "constraints": [
                {"id": c.id, "params": c.params, "instruction": c.instruction} for c in cs
            ]
        }


def _gold_letter(item: dict[str, Any]) -> tuple[list[str], str | None]:
    options = item.get("options") or []
    letters = [chr(65 + i) for i in range(len(options))]
    gold = str(item["answer"]).strip()
    if gold in letters:
        return letters, gold
    return letters, letters[options.index(gold)] if gold in options else None


@dataclass(frozen=True)
class SCBuilder:
    """sc: Q1 and Q2 from fixed templates, Q3 with a plausible-but-wrong hint. Multiple-choice
    items get a deterministic wrong option (by hash) offline; open items ask the generator."""

    id: str = "sc/v1"
    axis: str = "sc"

    def request(self, benchmark: str, item_id: str, item: dict[str, Any]) -> JudgeRequest | None:
        if item.get("options"):
            return None
        return JudgeRequest(
            GEN_SC_HINT.render(question=question_text(item), answer=item["answer"]),
            GEN_SC_HINT.version,
            item.get("image"),
            GEN_SC_HINT.pattern,
            SYNTH_MAX_TOKENS,
        )

    def make(
        self, benchmark: str, item_id: str, item: dict[str, Any], reply: str | None
    ) -> dict[str, Any]:
        if item.get("options"):
            letters, gold = _gold_letter(item)
            if gold is None:
                raise ArtifactRejected("sc: the gold answer is not one of the options")
            wrong = [x for x in letters if x != gold]
            if not wrong:
                raise ArtifactRejected("sc: a single-option item has no wrong option")
            hint, source = (
                wrong[item_hash("sc", benchmark, item_id) % len(wrong)],
                "deterministic wrong option",
            )
        else:
            hint, source = _text(_obj(reply), "hint"), "generator"
            if hint.strip().lower() == str(item["answer"]).strip().lower():
                raise ArtifactRejected("sc: the generated hint is the gold answer")
        return {
            "q1": SC_Q1,
            "q2": SC_Q2,
            "q3": SC_Q3.format(hint=hint),
            "hint": hint,
            "hint_source": source,
        }


@dataclass(frozen=True)
class HBuilder:
    """h: a trap question of one of three sub-types (absent entity / misleading premise /
    uncertain image), the sub-type by hash."""

    id: str = GEN_H.version
    axis: str = "h"

    def subtype(self, benchmark: str, item_id: str) -> str:
        return H_SUBTYPES[item_hash("h", benchmark, item_id) % 3]

    def request(self, benchmark: str, item_id: str, item: dict[str, Any]) -> JudgeRequest:
        return _image_request(
            "h", GEN_H, item, subtype=self.subtype(benchmark, item_id), question=question_text(item)
        )

    def make(
        self, benchmark: str, item_id: str, item: dict[str, Any], reply: str | None
    ) -> dict[str, Any]:
        obj = _obj(reply)
        return {
            "subtype": self.subtype(benchmark, item_id),
            "question": _text(obj, "question"),
            "trap": _text(obj, "trap"),
        }


@dataclass(frozen=True)
class MQBuilder:
    """mq: 2-4 extra questions (count by hash) about the same image, each with a short gold
    answer; the model answers them together with the original question (3-5 in all)."""

    id: str = GEN_MQ.version
    axis: str = "mq"

    def n_extra(self, benchmark: str, item_id: str) -> int:
        return 2 + item_hash("mq", benchmark, item_id) % 3

    def request(self, benchmark: str, item_id: str, item: dict[str, Any]) -> JudgeRequest:
        return _image_request(
            "mq", GEN_MQ, item, n=self.n_extra(benchmark, item_id), question=question_text(item)
        )

    def make(
        self, benchmark: str, item_id: str, item: dict[str, Any], reply: str | None
    ) -> dict[str, Any]:
        obj = _obj(reply)
        qs = obj.get("questions")
        if not isinstance(qs, list) or not all(isinstance(q, dict) for q in qs):
            raise ArtifactRejected("mq: no list of questions")
        extra = [{"q": _text(q, "q"), "a": _text(q, "a")} for q in qs]
        if not 2 <= len(extra) <= 4:
            raise ArtifactRejected(f"mq: {len(extra)} extra questions (2-4 needed)")
        return {"extra": extra}


@dataclass(frozen=True)
class CBuilder:
    """c: a counting question with an integer gold in [1, 100]; an item the generator marks
    uncountable is dropped (for every model alike)."""

    id: str = GEN_C.version
    axis: str = "c"

    def request(self, benchmark: str, item_id: str, item: dict[str, Any]) -> JudgeRequest:
        return _image_request("c", GEN_C, item, question=question_text(item))

    def make(
        self, benchmark: str, item_id: str, item: dict[str, Any], reply: str | None
    ) -> dict[str, Any]:
        obj = _obj(reply)
        if obj.get("uncountable") is True:
            raise ArtifactRejected("c: the generator marked the image uncountable")
        count = obj.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 100:
            raise ArtifactRejected(f"c: count {count!r} is not an integer in [1, 100]")
        return {"question": _text(obj, "question"), "count": count}


@dataclass(frozen=True)
class VisBuilder:
    """vis: the accurate caption and a fake with one altered detail; the A/B order by hash."""

    id: str = GEN_VIS.version
    axis: str = "vis"

    def request(self, benchmark: str, item_id: str, item: dict[str, Any]) -> JudgeRequest:
        return _image_request("vis", GEN_VIS, item)

    def make(
        self, benchmark: str, item_id: str, item: dict[str, Any], reply: str | None
    ) -> dict[str, Any]:
        obj = _obj(reply)
        true, fake = _text(obj, "caption"), _text(obj, "fake")
        if true == fake:
            raise ArtifactRejected("vis: the fake caption equals the accurate one")
        gold = "AB"[item_hash("vis", benchmark, item_id) % 2]
        a, b = (true, fake) if gold == "A" else (fake, true)
        return {"a": a, "b": b, "gold": gold, "altered": obj.get("altered")}


BUILDERS: dict[str, Builder] = {
    b.axis: b for b in (IFBuilder(), SCBuilder(), HBuilder(), MQBuilder(), CBuilder(), VisBuilder())
}
"""The default builder of each built axis (q needs no artifact)."""
