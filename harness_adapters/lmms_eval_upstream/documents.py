"""Suite documents read from an upstream lmms-eval dataset, asked and scored by the upstream
task's own code — so that the vLLM runner (offline, server, Ray, training callback) runs the
items of MathVista, MMMU and BLINK as ``lmms-eval --tasks <suite>`` does.

The reference panels of these benchmarks hold only item ids and scores (the item text is not
theirs to share); the rows come from the dataset the upstream task reads: a local
``datasets.save_to_disk`` copy (``--dataset TASK=DIR``, one sub-folder per ``dataset_name`` for a
group of subtasks — the layout ``primebench tasks lmms-eval --dataset`` takes), else the hub
(``datasets.load_dataset`` with the upstream ``dataset_path``/``dataset_name``/``test_split``).
Per item the runner uses the upstream ``doc_to_visual`` (images, in order), ``doc_to_text``
with the task's ``lmms_eval_specific_kwargs.default``, and ``process_results`` on the response,
turned into the item's score by the same item scorer as the generated lmms-eval task
(:func:`~harness_adapters.lmms_eval_upstream.functions.make_upstream_process_results`). Same
response → same score on every path (tested).

Deviation, stated: the runner generates with its own ``--max-new-tokens`` (greedy), not the
upstream ``generation_kwargs`` (MathVista's asks for 16,384 tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_adapters.lmms_eval_upstream.functions import (
    ITEM_METRIC,
    LazyFunction,
    ManifestItemsMissing,
    make_process_docs,
    make_upstream_process_results,
)
from harness_adapters.lmms_eval_upstream.tasks import (
    VERIFIED_UPSTREAM,
    FunctionRef,
    UpstreamMember,
    load_task_config,
    resolve_members,
)
from primebench_tasks.errors import InputError

_HUB_KWARGS = {"token", "revision", "trust_remote_code"}
"""Upstream ``dataset_kwargs`` passed on to ``datasets.load_dataset``."""


def _function(ref: Any) -> LazyFunction:
    if not isinstance(ref, FunctionRef):
        raise InputError(f"upstream function {ref!r} is not a `!function` reference")
    # the installed lmms-eval's function by its module path, else from its folder
    from harness_adapters.lmms_eval_upstream.tasks import portable_ref

    full = portable_ref(ref)
    return LazyFunction(full, None, None) if full else LazyFunction(ref.ref, ref.directory, None)


@dataclass(frozen=True)
class UpstreamSource:
    """The upstream task ``task``'s prompt, visuals and scorer for its rows (a
    :class:`~harness_adapters.suites.documents.DocSource`)."""

    task: str
    key: str
    doc_to_text: Callable[..., str]
    doc_to_visual: Callable[[dict[str, Any]], list[Any]]
    process_results: Callable[[dict[str, Any], list[Any]], dict[str, Any]]
    prompt_kwargs: dict[str, Any]
    target: str

    def text(self, doc: dict[str, Any]) -> str:
        return str(self.doc_to_text(doc, self.prompt_kwargs))

    def visuals(self, doc: dict[str, Any]) -> list[Any]:
        return list(self.doc_to_visual(doc))

    def score(self, doc: dict[str, Any], response: str) -> float | None:
        """The upstream scorer's verdict. Some upstream scorers draw at random (MMMU picks a
        random option for an answer with no option in it): the draw is seeded by the task and
        the item, so a response scores the same in every run, batch order and resume.
        lmms-eval draws from one stream seeded once per run, so such an unparseable answer may
        score differently there (a coin flip either way, by the upstream design)."""
        import hashlib
        import random

        seed = hashlib.sha256(f"{self.task}\0{doc[self.key]}".encode()).digest()
        state = random.getstate()
        random.seed(int.from_bytes(seed[:8], "big"))
        try:
            value = self.process_results(doc, [response])[ITEM_METRIC]["score"]
        finally:
            random.setstate(state)
        return None if value is None else float(value)

    def answer(self, doc: dict[str, Any]) -> str:
        return str(doc.get(self.target, ""))


def member_source(
    member: UpstreamMember, key: str, scorer: str, score_range: tuple[float, float] = (0.0, 1.0)
) -> UpstreamSource:
    """The :class:`UpstreamSource` of one upstream task (its YAML resolved); scorer ``number``:
    the task's first metric is a plain number per item on ``score_range`` (as the generated
    lmms-eval task reads it); ``key``: the row field that is the item's id."""
    cfg = load_task_config(member.path)
    how: str | tuple[str, float, float] = scorer
    if scorer == "number":
        how = (cfg["metric_list"][0]["metric"], float(score_range[0]), float(score_range[1]))
    kwargs = (cfg.get("lmms_eval_specific_kwargs") or {}).get("default") or {}
    target = cfg.get("doc_to_target")
    return UpstreamSource(
        member.task,
        key,
        _function(cfg["doc_to_text"]),
        _function(cfg["doc_to_visual"]),
        make_upstream_process_results(key, _function(cfg["process_results"]), how),
        dict(kwargs),
        target if isinstance(target, str) else "answer",
    )


def load_rows(member: UpstreamMember, local: str | Path | None, task: str) -> Any:
    """The upstream task's test split: from the local copy ``local`` (a ``save_to_disk``
    folder; a group's subtask in ``local/<dataset_name>``), else from the hub. ``task``: the
    catalogue's lmms-eval task (named in errors: ``--dataset TASK=DIR``)."""
    import datasets

    cfg = load_task_config(member.path)
    split = cfg.get("test_split") or "test"
    if local is not None:
        path = Path(local) / member.dataset_name if member.dataset_name else Path(local)
        try:
            loaded = datasets.load_from_disk(str(path))
        except FileNotFoundError as exc:
            raise InputError(
                f"no saved dataset at {path} for upstream task {member.task!r}: {exc}",
                file=str(path),
            ) from None
        if isinstance(loaded, datasets.DatasetDict):
            if split not in loaded:
                raise InputError(
                    f"the saved dataset has no split {split!r} (has {sorted(loaded)})",
                    file=str(path),
                    field="split",
                )
            return loaded[split]
        return loaded
    kw = {k: v for k, v in (cfg.get("dataset_kwargs") or {}).items() if k in _HUB_KWARGS}
    try:
        return datasets.load_dataset(
            cfg["dataset_path"], cfg.get("dataset_name"), split=split, **kw
        )
    except Exception as exc:  # noqa: BLE001 - hub/network errors of every kind, named
        raise InputError(
            f"cannot load upstream dataset {cfg['dataset_path']!r} "
            f"({cfg.get('dataset_name') or 'default'}, split {split!r}) for task "
            f"{member.task!r}: {type(exc).__name__}: {exc}; give a local copy with "
            f"--dataset {task}=DIR (a datasets.save_to_disk folder)"
        ) from None


def upstream_documents(
    benchmark: str,
    item_ids: list[str],
    task: str | None,
    panel_name: str,
    data: Mapping[str, str | Path] | None = None,
    text_keys: Mapping[str, Any] | None = None,
    score_range: tuple[float, float] = (0.0, 1.0),
) -> list[tuple[dict[str, Any], UpstreamSource]]:
    """(row, source) of ``item_ids`` (in this order) of ``benchmark``: the rows of the upstream
    lmms-eval ``task``'s dataset (``data[task]``: a local copy), each with the source that asks
    and scores it by the upstream code. Refuses a benchmark with no verified upstream task and a dataset that lacks any item
    (nothing is silently left out). ``text_keys``: the manifest's ``upstream.text_keys`` of a
    benchmark whose rows are keyed by their text (each row's key computed, as the lmms-eval
    task does)."""
    up = VERIFIED_UPSTREAM.get(task or "")
    if up is None:
        raise InputError(
            f"benchmark {benchmark!r} has no item text/answer in panel {panel_name!r} and no "
            "verified upstream lmms-eval task to read its items from, so its prompts cannot "
            "be built",
            field="question/answer",
        )
    local = (data or {}).get(str(task))
    keys = None
    if up.text_key is not None:
        from harness_adapters.lmms_eval_upstream.content_keys import text_keys_doc

        keys = text_keys_doc(benchmark, up, text_keys)
    by_id: dict[str, tuple[dict[str, Any], UpstreamSource]] = {}
    for member, ids in resolve_members(up, item_ids).items():
        source = member_source(member, up.key, up.scorer, score_range)
        rows = load_rows(member, local, str(task))
        cfg = load_task_config(member.path)
        upstream_pd = cfg.get("process_docs")
        keep = make_process_docs(
            ids,
            up.key,
            member.task,
            _function(upstream_pd) if isinstance(upstream_pd, FunctionRef) else None,
            keys,
        )
        try:
            kept = keep(rows)
        except ManifestItemsMissing as exc:
            raise InputError(str(exc), field=up.key) from None
        for i, row in zip(ids, kept, strict=True):
            by_id[i] = (dict(row), source)
    return [by_id[i] for i in item_ids]


@dataclass(frozen=True)
class DesignDraw:
    """A design-only benchmark's draw on the user's copy of its dataset (#81): the drawn rows in
    draw order, each with its content key (its item id), stratum and the source that asks and
    scores it; ``pool``: the draw as the run records it per item (``{"strata": {value: [N_h,
    n_h]}, "fingerprint"}``, what :func:`~primebench_tasks.place.design_only.design_answers`
    reads back)."""

    rows: list[tuple[str, str, dict[str, Any]]]
    source: UpstreamSource
    pool: dict[str, Any]


def design_documents(
    benchmark: str,
    design: Mapping[str, Any],
    upstream: Mapping[str, Any],
    score_range: tuple[float, float],
    data: Mapping[str, str | Path] | None = None,
) -> DesignDraw:
    """The draw of design-only ``benchmark`` (its ``design`` document and ``upstream``
    ``{"task", "scorer"}``) on the upstream task's dataset — ``data[task]``, a local
    ``save_to_disk`` copy, else the hub — by the very ``process_docs`` the generated lmms-eval
    task runs (:func:`~harness_adapters.lmms_eval_upstream.functions.make_design_docs`: the
    upstream ``process_docs``, then the content-key draw; a pinned pool that differs is
    refused), asked and scored by the upstream task's code as there. Same dataset → the same
    items, keys and strata as ``lmms-eval --tasks <suite>``, whatever the row order."""
    import json

    from harness_adapters.lmms_eval_upstream.functions import (
        DESIGN_KEY,
        DESIGN_POOL,
        DESIGN_STRATUM,
        make_design_docs,
    )
    from harness_adapters.lmms_eval_upstream.tasks import find_task_yaml

    task = str(upstream["task"])
    path = find_task_yaml(task)
    cfg = load_task_config(path)
    member = UpstreamMember(task, path, cfg.get("dataset_name"))
    source = member_source(member, DESIGN_KEY, str(upstream["scorer"]), score_range)
    pd_ref = cfg.get("process_docs")
    draw = make_design_docs(
        design, task, benchmark, _function(pd_ref) if isinstance(pd_ref, FunctionRef) else None
    )
    try:
        picked = draw(load_rows(member, (data or {}).get(task), task))
    except ManifestItemsMissing as exc:
        raise InputError(str(exc), field="design") from None
    rows = [(str(r[DESIGN_KEY]), str(r[DESIGN_STRATUM]), dict(r)) for r in picked]
    pool = json.loads(str(picked[0][DESIGN_POOL])) if len(picked) else {}
    return DesignDraw(rows, source, pool)
