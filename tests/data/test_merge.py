"""Merged panels (``primebench_tasks.data.merge``): the shipped MMMU item map checked through the
models two sources share, the alias table, and a merge computed by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.data.merge import (
    merge_panels,
    read_aliases,
    read_item_map,
    relabel_items,
    shipped_item_map,
)
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError

MMMU = "MMMU_DEV_VAL"


def _difficulty_agreement(mapping: dict[str, str]) -> float:
    """Pearson r between each item's mean score among AutoJudger's models and among M3IRT's, on
    the items M3IRT holds, with AutoJudger's items renamed through ``mapping``."""
    aj = relabel_items(Panel.load_default("autojudger"), MMMU, mapping)
    m3 = Panel.load_default("m3irt")
    aj_mean = dict(
        zip(aj.item_ids(MMMU).astype(str), np.nanmean(aj.matrix(MMMU), axis=0), strict=True)
    )
    m3_ids = m3.item_ids(MMMU).astype(str)
    m3_mean = np.nanmean(m3.matrix(MMMU), axis=0)
    both = [k for k, i in enumerate(m3_ids) if i in aj_mean]
    a = np.array([aj_mean[m3_ids[k]] for k in both])
    return float(np.corrcoef(a, m3_mean[both])[0, 1])


def _within_subject(
    mapping: dict[str, str], order: np.ndarray | None = None, shift: int = 0
) -> dict[str, str]:
    """``mapping`` with each subject's 30 targets reordered (a wrong mapping of the same shape)."""
    by_subject: dict[str, list[tuple[str, str]]] = {}
    for s, u in mapping.items():
        by_subject.setdefault(u.rsplit("_", 1)[0], []).append((s, u))
    out = {}
    for pairs in by_subject.values():
        pairs.sort(key=lambda p: int(p[1].rsplit("_", 1)[1]))
        targets = [u for _, u in pairs]
        if order is not None:
            targets = [targets[i] for i in order]
        targets = targets[shift:] + targets[:shift]
        out.update({s: t for (s, _), t in zip(pairs, targets, strict=True)})
    return out


def test_shipped_mmmu_item_map_agrees_with_m3irt_far_above_chance() -> None:
    """AutoJudger's MMMU index → MMMU id: the items' difficulty under the shipped map agrees with
    M3IRT's (which carries MMMU's ids) at r ≈ 0.82; every permutation within subjects (what a
    wrong map of the same layout gives) stays near the subjects' own difficulty spread."""
    shipped = shipped_item_map("autojudger_MMMU_DEV_VAL")
    assert len(shipped) == 900 and all(u.startswith("validation_") for u in shipped.values())
    r = _difficulty_agreement(shipped)
    rng = np.random.default_rng(0)
    null = [_difficulty_agreement(_within_subject(shipped, rng.permutation(30))) for _ in range(20)]
    assert r > 0.75
    assert r > max(null) + 0.3
    # the two wrong maps a careless build would write: off by one, and ids sorted as text
    assert _difficulty_agreement(_within_subject(shipped, shift=1)) < 0.4
    as_text = np.argsort([str(k) for k in range(1, 31)], kind="stable")
    assert _difficulty_agreement(_within_subject(shipped, as_text)) < 0.4


def _panel(name: str, models: list[str], items: list[str], scores: list[list[float]]) -> Panel:
    return Panel.from_dense(
        name,
        {"vl": {"B": np.array(scores, dtype=np.float32)}},
        pd.DataFrame({"model": models, "family": None, "release_date": None, "params_b": np.nan}),
        pd.DataFrame(
            [
                {
                    "benchmark": "B",
                    "category": "C",
                    "metric": "acc",
                    "metric_kind": "binary",
                    "score_min": 0.0,
                    "score_max": 1.0,
                    "lmms_eval_task": None,
                    "vlmeval_dataset": None,
                }
            ]
        ),
        pd.DataFrame(
            {
                "benchmark": "B",
                "item_id": items,
                "question": None,
                "options": None,
                "answer": None,
                "image_ref": None,
                "source_index": None,
            }
        ),
    )


def _aliases(tmp_path: Path, text: str) -> pd.DataFrame:
    p = tmp_path / "aliases.csv"
    p.write_text("canonical,panel,model,evidence\n" + text, encoding="utf-8")
    return read_aliases(p)


def test_merge_by_hand(tmp_path: Path) -> None:
    """x (panel a) and X (panel b) are one model: the row keeps a's scores, fills b's item i3,
    and counts the one shared item scored differently (i2); y is b's own model."""
    a = _panel("a", ["x", "z"], ["i1", "i2"], [[1, 1], [0, 1]])
    b = _panel("b", ["X", "y"], ["i2", "i3"], [[0, 1], [1, 0]])
    al = _aliases(tmp_path, "m,a,x,e\nm,b,X,e\n")
    merged, report = merge_panels("ab", [a, b], "B", al)
    assert merged.model_names == ["x", "y", "z"]
    assert merged.item_ids("B").tolist() == ["i1", "i2", "i3"]
    mat = merged.matrix("B")
    np.testing.assert_array_equal(mat[0], [1, 1, 1])
    np.testing.assert_array_equal(mat[1], [np.nan, 1, 0])
    np.testing.assert_array_equal(mat[2], [0, 1, np.nan])
    assert report.joined == {"b": {"X": "x"}}
    assert report.added == {"a": ["x", "z"], "b": ["y"]}
    assert report.shared_items == {"x": 1} and report.disagreements == {"x": 1}
    assert "| x | 1 | 1 (100%) |" in report.markdown()


def test_merge_refuses_a_name_two_sources_give_to_models_not_joined(tmp_path: Path) -> None:
    a = _panel("a", ["x"], ["i1"], [[1]])
    b = _panel("b", ["x"], ["i1"], [[0]])
    with pytest.raises(InputError, match="alias table"):
        merge_panels("ab", [a, b], "B", _aliases(tmp_path, ""))


def test_alias_table_refuses_ambiguity(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="listed twice") as e:
        _aliases(tmp_path, "m,a,x,e\nn,a,x,e\n")
    assert "row 3" in str(e.value)
    with pytest.raises(InputError, match="two names in panel"):
        _aliases(tmp_path, "m,a,x,e\nm,a,y,e\n")
    with pytest.raises(InputError, match="evidence"):
        _aliases(tmp_path, "m,a,x,\n")
    shipped = read_aliases()
    assert (
        set(shipped["panel"]) == {"autojudger", "m3irt"}
        and shipped["evidence"].str.len().min() > 10
    )


def test_item_map_refuses_a_target_twice(tmp_path: Path) -> None:
    p = tmp_path / "map.csv"
    p.write_text("source_id,upstream_id\n1,a\n2,a\n", encoding="utf-8")
    with pytest.raises(InputError, match="target of rows 2 and 3"):
        read_item_map(p)
    a = _panel("a", ["x"], ["i1"], [[1]])
    with pytest.raises(InputError, match="not items of B"):
        relabel_items(a, "B", {"nope": "q"})


def test_embedded_merged_mmmu_panel() -> None:
    p = Panel.load_default("mmmu_merged")
    assert len(p.model_names) == 185 and len(p.item_ids(MMMU)) == 900
    assert {"gpt-4.1", "claude-3.7-sonnet", "GPT4o"} <= set(p.model_names)
    assert "claude-3-haiku" not in p.model_names  # joined to Claude3V_Haiku
