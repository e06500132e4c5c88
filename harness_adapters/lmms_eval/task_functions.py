"""Functions the generated lmms-eval task configs call (through ``!function``).

A generated ``primebench_suite.py`` next to the YAML files binds them to the manifest's items.
Every result line carries the stable item id in its ``primebench_item`` metric: lmms-eval's own
``doc_id`` is the row index after filtering and is not a stable key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ITEM_METRIC = "primebench_item"


class ManifestItemsMissing(ValueError):
    """The dataset lacks items that the manifest selected."""


def make_process_docs(item_ids: Iterable[str], key: str, task: str,
                      upstream: tuple[str, str] | None = None) -> Callable[[Any], Any]:
    """A ``process_docs`` that keeps exactly the manifest's items (by ``doc[key]``) and refuses a
    dataset that lacks any of them; ``upstream`` (module.name, folder): the upstream task's own
    ``process_docs``, applied first."""
    wanted = [str(i) for i in item_ids]

    def process_docs(dataset: Any) -> Any:
        if upstream is not None:
            from harness_adapters.lmms_eval.upstream import load_function

            dataset = load_function(upstream)(dataset)
        columns = getattr(dataset, "column_names", None)
        if columns is not None and key not in columns:
            raise ManifestItemsMissing(f"{task}: the dataset has no field {key!r} (the row key "
                                       "declared for it)")
        have = {str(k) for k in dataset[key]}
        missing = [i for i in wanted if i not in have]
        if missing:
            raise ManifestItemsMissing(f"{task}: {len(missing)} manifest item(s) are not in the "
                                       f"dataset (field {key!r}), e.g. {missing[:10]}")
        keep = set(wanted)
        return dataset.filter(lambda doc: str(doc[key]) in keep)

    return process_docs


def _norm(s: Any) -> str:
    return re.sub(r"\s+", " ", str(s)).strip().lower().rstrip(".")


def extract_answer(response: str, options: list[str]) -> str:
    """The option letter (multiple choice) or the last number / the stripped text (open)."""
    r = response.strip()
    if options:
        m = re.search(r"\b([A-Z])\b", r.upper())
        return m.group(1) if m else r[:1].upper()
    nums = re.findall(r"-?\d+(?:\.\d+)?", r)
    return nums[-1] if nums else _norm(r)


def exact_answer_score(doc: dict[str, Any], response: str) -> float:
    """1.0 when the extracted answer equals the gold answer (letters, numbers or text)."""
    options = doc.get("options") or []
    if isinstance(options, str):
        options = json.loads(options) if options.startswith("[") else []
    pred = extract_answer(response, options)
    gold = str(doc["answer"]).strip()
    try:
        return float(abs(float(pred) - float(gold)) < 1e-6)
    except ValueError:
        return float(_norm(pred) == _norm(gold))


def make_process_results(key: str, metric: str) -> Callable[[dict, list], dict]:
    """``process_results`` for a local task: the benchmark's own score plus the stable item id."""

    def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
        score = exact_answer_score(doc, results[0] if results else "")
        return {metric: score, ITEM_METRIC: {"item_id": str(doc[key]), "score": score}}

    return process_results


def upstream_item_score(value: Any, lo: float, hi: float) -> float | None:
    """A per-item score from an upstream metric value, scaled to [0, 1] by the metric's range:
    a number (or bool), or a dict holding one under ``score``/``correct``/``hit``/``acc``;
    None when the metric is only computed at aggregation (e.g. a dict of parsed predictions)."""
    if isinstance(value, dict):
        value = next((value[k] for k in ("score", "correct", "hit", "acc") if k in value), None)
    if isinstance(value, bool):
        value = float(value)
    if not isinstance(value, (int, float)) or value != value:
        return None
    return (float(value) - lo) / (hi - lo)


def make_upstream_process_results(key: str, metric: str, lo: float, hi: float,
                                  upstream: tuple[str, str]) -> Callable[[dict, list], dict]:
    """Wrap the upstream ``process_results``: its metrics unchanged, plus the stable item id and
    the item's score (``metric`` scaled by [lo, hi]) in ``primebench_item``."""

    def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        from harness_adapters.lmms_eval.upstream import load_function

        out = dict(load_function(upstream)(doc, results))
        out[ITEM_METRIC] = {"item_id": str(doc[key]),
                            "score": upstream_item_score(out.get(metric), lo, hi)}
        return out

    return process_results


def item_aggregation(values: list[dict[str, Any]]) -> float:
    """The ``primebench_item`` metric aggregates to the mean item score (items without one
    left out)."""
    scores = [v["score"] for v in values if v.get("score") is not None]
    return sum(scores) / len(scores) if scores else float("nan")


def make_doc_to_visual(base: Path) -> Callable[[dict[str, Any]], list[Any]]:
    """``doc_to_visual`` that opens ``doc["image"]``, a path relative to ``base`` (the generated
    task directory) or absolute."""

    def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
        from PIL import Image

        path = doc.get("image")
        if not path:
            return []
        p = Path(path)
        with Image.open(p if p.is_absolute() else base / p) as im:
            return [im.convert("RGB")]

    return doc_to_visual


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None
                ) -> str:
    """MATH-Vision-style prompt: the question, lettered options, and the answer instruction."""
    kw = lmms_eval_specific_kwargs or {}
    q = str(doc["question"]).replace("<image1>", "").strip()
    options = doc.get("options") or []
    if options:
        letters = "\n".join(f"{chr(65 + i)}. {o}" for i, o in enumerate(options))
        return f"{q}\n{letters}\n{kw.get('mc_prompt', 'Answer with the option letter.')}"
    return f"{q}\n{kw.get('short_answer_prompt', 'Answer with a number directly.')}"
