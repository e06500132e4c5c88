"""The hostile battery, records: one model-name rule for every way a name enters a panel
(``refresh --records`` as ``panel import`` and ``import-helm``), and a JSON ``true`` is not a
score of 1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from primebench_tasks.errors import InputError
from primebench_tasks.refresh.records import read_records


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "name,problem",
    [
        ("m\nx", "holds U+000A"),
        ("m\u2028x", "holds U+2028"),
        ("../../m", "'.' or '..' path segment"),
        ("org\\m", "holds a backslash"),
    ],
)
def test_refresh_records_refuse_model_names_a_panel_cannot_carry(tmp_path, name, problem) -> None:
    good = {"model": "org/ok", "benchmark": "B", "item_id": "1", "score": 1.0}
    path = _jsonl(tmp_path / "r.jsonl", [good, {**good, "model": name}])
    with pytest.raises(InputError, match=re.escape(problem)) as exc:
        read_records(path)
    assert "row 2" in str(exc.value) and "field 'model'" in str(exc.value)


def test_a_boolean_score_is_refused(tmp_path) -> None:
    path = _jsonl(
        tmp_path / "r.jsonl", [{"model": "m", "benchmark": "B", "item_id": "1", "score": True}]
    )
    with pytest.raises(InputError, match="is a boolean, not a number") as exc:
        read_records(path)
    assert "row 1" in str(exc.value)


def test_a_name_with_a_slash_is_a_model_name(tmp_path) -> None:
    path = _jsonl(
        tmp_path / "r.jsonl",
        [{"model": "openai/gpt-4o", "benchmark": "B", "item_id": "1", "score": 0.5}],
    )
    assert read_records(path)["model"].tolist() == ["openai/gpt-4o"]
