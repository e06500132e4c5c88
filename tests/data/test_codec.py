"""The typed documents' one codec (#81): hand cases of what it writes, what it reads and how it
refuses, on small documents declared here."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from primebench_tasks.data.codec import (
    Document,
    DocumentError,
    decode,
    encode,
    encoded,
    omitted_if,
    optional,
)
from primebench_tasks.errors import InputError


def _cents(v: float | None) -> float | None:
    return None if v is None else round(v, 2)


@dataclass(frozen=True)
class Point(Document):
    x: float
    label: str | None = optional()

    def check_json(self) -> None:
        if not 0 <= self.x <= 1:
            raise ValueError(f"'x' is {self.x!r}, not in [0, 1]")


@dataclass
class Shape(Document):
    json_what = "shape"

    name: str
    n: int
    closed: bool
    points: tuple[Point, ...]
    by_name: dict[str, list[int]]
    note: str | None = None
    tags: list[str] = omitted_if()
    weight: float | None = field(default=None, metadata=encoded(_cents))
    extra: Any = optional()
    schema: str = "shape/1"

    @classmethod
    def json_prepare(cls, d: Any, where: str | None) -> Any:
        if d.get("schema") == "shape/0":  # an earlier version: "count" was "n"
            return {
                **{k: v for k, v in d.items() if k != "count"},
                "n": d["count"],
                "schema": "shape/1",
            }
        return d


def _shape(**kw: Any) -> Shape:
    base: dict[str, Any] = dict(
        name="s", n=2, closed=True, points=(Point(0.5), Point(1, "top")), by_name={"a": [1, 2]}
    )
    return Shape(**{**base, **kw})


def test_what_is_written():
    d = _shape(weight=0.456).to_json()
    assert d == {
        "name": "s",
        "n": 2,
        "closed": True,
        "points": [{"x": 0.5}, {"x": 1, "label": "top"}],  # None left out where optional
        "by_name": {"a": [1, 2]},
        "note": None,  # a plain default: written, null
        "weight": 0.46,  # mapped by its encode first
        "schema": "shape/1",
    }  # tags (empty) and extra (None) left out
    assert _shape(tags=["t"]).to_json()["tags"] == ["t"]
    assert encode({"k": (1, Point(0.2))}) == {"k": [1, {"x": 0.2}]}


def test_what_is_read_back_is_what_was_written_byte_for_byte():
    doc = _shape(tags=["t"], weight=0.25, extra={"any": [1, "x"]})
    text = json.dumps(doc.to_json(), sort_keys=True)
    back = Shape.from_json(json.loads(text))
    assert back == doc and json.dumps(back.to_json(), sort_keys=True) == text
    assert (
        isinstance(back.points, tuple) and back.points[1].x == 1 and type(back.points[1].x) is int
    )
    # a whole number written as 2.0 reads as the int 2
    assert Shape.from_json({**doc.to_json(), "n": 2.0}).n == 2
    # absent fields with defaults read as their defaults
    assert Shape.from_json({k: v for k, v in doc.to_json().items() if k != "note"}).note is None


@pytest.mark.parametrize(
    "edit,path,message",
    [
        (lambda d: d.pop("name"), "name", "is missing"),
        (lambda d: d.update(nmae="s"), "nmae", "is not a field of this document"),
        (lambda d: d.update(n=True), "n", "is a boolean, not a whole number"),
        (lambda d: d.update(n=2.5), "n", "is a number, not a whole number"),
        (lambda d: d.update(closed=1), "closed", "is a number, not a boolean"),
        (lambda d: d.update(name=None), "name", "is null, not a string"),
        (lambda d: d.update(points={"x": 1}), "points", "is an object, not a list"),
        (lambda d: d["points"][1].update(x="1"), "points[1].x", "is a string, not a number"),
        (lambda d: d["points"][0].update(x=1.5), "points[0]", "'x' is 1.5, not in [0, 1]"),
        (lambda d: d["by_name"].update(b=[1, "2"]), "by_name.b[1]", "is a string, not a whole"),
        (lambda d: d.update(note=["n"]), "note", "is a list, not a string or null"),
    ],
)
def test_a_value_of_another_type_is_one_line_naming_its_path(edit, path, message):
    d = _shape().to_json()
    edit(d)
    with pytest.raises(DocumentError) as e:
        decode(Shape, d)
    assert e.value.path == path and e.value.message.startswith(message)
    with pytest.raises(InputError, match=r"not a shape document: ") as f:
        Shape.from_json(d, "s.json")
    assert f.value.file == "s.json" and f.value.field == path and "\n" not in str(f.value)


def test_a_number_that_json_cannot_hold_is_refused():
    with pytest.raises(DocumentError, match="is nan, not a finite number"):
        decode(Point, {"x": float("nan")})


def test_an_earlier_version_is_upgraded_before_its_fields_are_read():
    d = {k: v for k, v in _shape().to_json().items() if k != "n"}
    back = Shape.from_json({**d, "count": 2, "schema": "shape/0"})
    assert back == _shape()


def test_write_and_read_a_file(tmp_path):
    doc = _shape(tags=["t"])
    p = doc.write(tmp_path / "shape.json")
    assert Shape.read(p) == doc
    assert p.read_text() == json.dumps(doc.to_json(), sort_keys=True, indent=2) + "\n"
    p.write_text("[1]")
    with pytest.raises(InputError, match="shape.json"):
        Shape.read(p)
