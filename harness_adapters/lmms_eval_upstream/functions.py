"""Functions the generated lmms-eval task configs call (through ``!function``).

A generated ``primebench_suite.py`` next to the YAML files binds them to the manifest's items.
Every result line carries the stable item id in its ``primebench_item`` metric: lmms-eval's own
``doc_id`` is the row index after filtering and is not a stable key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from harness_adapters.suites.prompt import (  # noqa: F401  (the generated tasks call them from here)
    doc_options,
    doc_to_text,
    exact_answer_score,
    extract_answer,
    parse_answer,
)
from primebench_tasks.errors import NotFoundError

ITEM_METRIC = "primebench_item"


class ManifestItemsMissing(ValueError):
    """The dataset lacks items that the manifest selected."""


class LazyFunction:
    """An upstream function resolved on its first call (so that loading one task of a suite
    does not import every upstream module, some of which need keys or packages at import)."""

    def __init__(self, ref: str, folder: str | None, base: Path | None) -> None:
        self.ref, self.folder, self.base = ref, folder, base
        self._fn: Callable[..., Any] | None = None

    def resolve(self) -> Callable[..., Any]:
        if self._fn is None:
            from harness_adapters.lmms_eval_upstream.tasks import upstream_function

            self._fn = upstream_function(self.ref, self.folder, self.base)
        return self._fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    @property
    def __signature__(self) -> Any:
        """The upstream function's own signature: lmms-eval inspects it (e.g. whether an
        aggregation takes ``args``, whether ``doc_to_text`` takes kwargs)."""
        import inspect

        return inspect.signature(self.resolve())


def lazy_upstream(ref: str, folder: str | None = None, base: Path | None = None) -> LazyFunction:
    """``ref`` (``module.name``) from ``folder`` relative to ``base``, or a full module path."""
    return LazyFunction(ref, folder, base)


def make_process_docs(
    item_ids: Iterable[str],
    key: str,
    task: str,
    upstream: Callable[[Any], Any] | None = None,
    content_keys: str | Path | Mapping[str, Any] | None = None,
) -> Callable[[Any], Any]:
    """A ``process_docs`` that keeps exactly the manifest's items (by ``doc[key]``), in manifest
    order (so that a row's ``doc_id`` in the log is its manifest position), and refuses a
    dataset that lacks any of them or holds one of them in several rows; ``upstream``: the upstream task's own ``process_docs``,
    applied first. ``content_keys``: a ``primebench.keys/1`` file; the rows then get ``key``
    computed from their content (the VLMEvalKit index whose fingerprint they have)."""
    wanted = [str(i) for i in item_ids]

    def process_docs(dataset: Any) -> Any:
        if upstream is not None:
            dataset = upstream(dataset)
        if content_keys is not None:
            dataset = _with_content_key(dataset, key, content_keys, set(wanted))
        columns = getattr(dataset, "column_names", None)
        if columns is not None and key not in columns:
            raise ManifestItemsMissing(
                f"{task}: the dataset has no field {key!r} (the row key declared for it)"
            )
        have = [str(k) for k in dataset[key]]
        missing = [i for i in wanted if i not in set(have)]
        if missing:
            raise ManifestItemsMissing(
                f"{task}: {len(missing)} manifest item(s) are not in the "
                f"dataset (field {key!r}), e.g. {missing[:10]}"
            )
        rows_of: dict[str, list[int]] = {}
        for row, k in enumerate(have):
            rows_of.setdefault(k, []).append(row)
        several = [i for i in wanted if len(rows_of[i]) > 1]
        if several:  # never a guess: an item that matches two rows is not run
            raise ManifestItemsMissing(
                f"{task}: {len(several)} manifest item(s) match several rows of the dataset "
                f"(field {key!r}), e.g. {several[:10]}"
                + (" — by content: the dataset holds duplicate items" if content_keys else "")
            )
        order = [rows_of[i][0] for i in wanted]
        return (
            dataset.select(order)
            if hasattr(dataset, "select")
            else dataset.filter(lambda doc: str(doc[key]) in set(wanted))
        )

    return process_docs


def _with_content_key(
    dataset: Any, key: str, keys: str | Path | Mapping[str, Any], wanted: set[str]
) -> Any:
    from harness_adapters.lmms_eval_upstream.content_keys import fingerprint, read_keys
    from primebench_tasks.data.text_keys import lmms_eval_row_key

    doc = keys if isinstance(keys, Mapping) else read_keys(keys)
    by_fp = {fp: i for i, fp in doc["keys"].items() if i in wanted}
    rule = doc.get("text_rule")
    f = doc.get("fields") or {}

    def add(row: dict[str, Any]) -> dict[str, Any]:
        if rule is not None:  # keyed by the text the records carry (no image in them)
            fp = lmms_eval_row_key(rule, row)
        else:
            fp = fingerprint(row[f["question"]], row[f["options"]] or [], row[f["image"]])
        return {key: by_fp.get(fp, "")}

    return dataset.map(add, load_from_cache_file=False)


def make_process_results(key: str, metric: str) -> Callable[[dict, list], dict]:
    """``process_results`` for a local task: the benchmark's own score plus the stable item id."""

    def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
        response = results[0] if results else ""
        score = exact_answer_score(doc, response)
        parsed, fell_back = parse_answer(response, doc_options(doc))
        item = {"item_id": str(doc[key]), "score": score, "parsed": parsed}
        return {metric: score, ITEM_METRIC: {**item, "parse_fallback": fell_back}}

    return process_results


def make_upstream_process_results(
    key: str, upstream: Callable[[dict, list], dict], scorer: str | tuple[str, float, float]
) -> Callable[[dict, list], dict]:
    """Wrap the upstream ``process_results``: its metrics unchanged, plus the stable item id and
    the item's score in ``primebench_item``. ``scorer``: a registered item scorer's name
    (:data:`~harness_adapters.lmms_eval_upstream.item_scorers.ITEM_SCORERS`), or (metric, lo, hi) for an
    upstream metric that is a plain number per item on [lo, hi]."""
    import inspect

    from harness_adapters.lmms_eval_upstream.item_scorers import ITEM_SCORERS, score_number

    if isinstance(scorer, str):
        metric, score = ITEM_SCORERS[scorer]
    else:
        metric, score = scorer[0], score_number(scorer[1], scorer[2])

    def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        fn = upstream.resolve() if isinstance(upstream, LazyFunction) else upstream
        out = dict(fn(doc, results))
        if metric not in out:
            raise NotFoundError(
                f"upstream process_results returned no {metric!r} (got {sorted(out)})"
            )
        module = inspect.getmodule(fn)
        assert module is not None  # an upstream function has its module
        out[ITEM_METRIC] = {"item_id": str(doc[key]), "score": score(out[metric], module)}
        return out

    return process_results


def item_aggregation(values: list[dict[str, Any]]) -> float:
    """The ``primebench_item`` metric aggregates to the mean item score (items without one
    left out)."""
    scores = [v["score"] for v in values if v.get("score") is not None]
    return sum(scores) / len(scores) if scores else float("nan")


EMBEDDED_PREFIX = "embedded:"
"""An image path ``embedded:<panel>/images/<file>`` lies in the installed package's embedded data
(:func:`primebench_tasks.data.defaults.embedded_root`), wherever the package is installed."""


def resolve_image(path: str, base: Path) -> Path:
    """The file of a document's image path: ``embedded:...``, absolute, or relative to ``base``."""
    if path.startswith(EMBEDDED_PREFIX):
        from primebench_tasks.data.defaults import embedded_root

        return embedded_root() / path[len(EMBEDDED_PREFIX) :]
    p = Path(path)
    return p if p.is_absolute() else base / p


def make_doc_to_visual(base: Path) -> Callable[[dict[str, Any]], list[Any]]:
    """``doc_to_visual`` that opens ``doc["image"]`` (see :func:`resolve_image`; ``base``: the
    generated task directory)."""

    def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
        from PIL import Image

        path = doc.get("image")
        if not path:
            return []
        with Image.open(resolve_image(str(path), base)) as im:
            return [im.convert("RGB")]

    return doc_to_visual


DESIGN_KEY = "primebench_content_key"
"""The column a design-only task's drawn rows carry their content key in (their item id)."""
DESIGN_STRATUM = "primebench_stratum"
DESIGN_POOL = "primebench_pool"
"""The drawn rows' stratum, and the draw (strata {value: [N_h, n_h]}, fingerprint) as JSON: what
the placement reads back from the logs to weigh each item by 1/π."""


def make_design_docs(
    design: Mapping[str, Any],
    task: str,
    benchmark: str,
    upstream: Callable[[Any], Any] | None = None,
) -> Callable[[Any], Any]:
    """A ``process_docs`` for a design-only benchmark (#72): the upstream task's own
    ``process_docs`` first, then the design resolved on the rows
    (:func:`primebench_tasks.suite.content_design.resolve`: content keys, strata, the first n_h
    of each stratum in key order; a pinned pool that differs is refused) and the drawn rows
    kept in draw order, each with its key, stratum and the draw (:data:`DESIGN_POOL`)."""
    import json

    from primebench_tasks.suite.content_design import ContentDesign, resolve

    spec = ContentDesign.from_document(dict(design), task, benchmark)
    fields = spec.lmms_eval_fields()

    def process_docs(dataset: Any) -> Any:
        if upstream is not None:
            dataset = upstream(dataset)
        columns = list(getattr(dataset, "column_names", []) or [])
        lacking = [f for f in fields if f not in columns]
        if lacking:
            raise ManifestItemsMissing(
                f"{task}: the dataset has no field {lacking[0]!r}, which the design of "
                f"{benchmark} reads (it has {columns})"
            )
        view = dataset.select_columns(fields)
        drawn = resolve(
            lambda pos: spec.lmms_eval_row(view[pos]),
            spec,
            f"{task} ({benchmark})",
            n_rows=len(view),
        )
        pool = json.dumps(
            {"strata": drawn.as_document()["strata"], "fingerprint": drawn.fingerprint},
            sort_keys=True,
        )
        picked = dataset.select([pos for _, _, pos in drawn.items])
        picked = picked.add_column(DESIGN_KEY, [k for k, _, _ in drawn.items])
        picked = picked.add_column(DESIGN_STRATUM, [h for _, h, _ in drawn.items])
        return picked.add_column(DESIGN_POOL, [pool] * len(drawn.items))

    return process_docs


def make_design_results(
    upstream: Callable[[dict, list], dict], scorer: str | tuple[str, float, float]
) -> Callable[[dict, list], dict]:
    """The upstream ``process_results`` of a design-only task, its metrics unchanged, plus
    ``primebench_item``: the item's content key, score, stratum and the draw it came from."""
    import json

    inner = make_upstream_process_results(DESIGN_KEY, upstream, scorer)

    def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        out = inner(doc, results)
        out[ITEM_METRIC] = {
            **out[ITEM_METRIC],
            "stratum": str(doc[DESIGN_STRATUM]),
            "pool": json.loads(str(doc[DESIGN_POOL])),
        }
        return out

    return process_results
