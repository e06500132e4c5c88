"""The variant race, whatever engine answers it: ``primebench rank-variants --adaptive`` — every
variant asked the same items, round by round (drawn with known probabilities, favouring those the
variants are unsure of: :func:`~primebench_tasks.adaptive.race.race_variants`), until adjacent
variants are separated or the budget is spent. Each round is one batch per variant on the
engine's backend (:func:`~harness_adapters.run.adaptive_loop.engine_executor`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from harness_adapters.run.adaptive_loop import (
    AdaptiveSettings,
    ItemPool,
    engine_executor,
    item_pools,
    place_variants,
    recorded_states,
)
from harness_adapters.run.engine import CheckedRun
from harness_adapters.run.errors import BackendError
from harness_adapters.run.records import RecordFile, failure_digest, variant_name
from harness_adapters.run.request import RunRequest, freeze_spec, run_lock
from harness_adapters.suites.documents import SuiteDoc, documents_digest
from primebench_tasks.adaptive.race import RaceResult, race_variants
from primebench_tasks.data.io import atomic_write_text
from primebench_tasks.data.panel import Panel
from primebench_tasks.place.defaults import N_BOOT, N_BOOT_VARIANTS
from primebench_tasks.place.result import Placement
from primebench_tasks.place.variant_ranking import (
    VariantRanking,
    Verdict,
    pairwise_table,
    ranking_rows,
)
from primebench_tasks.report.tables import markdown_table


def rank_variants_adaptive(
    req: RunRequest,
    panels: Mapping[str, Panel],
    settings: AdaptiveSettings,
    progress: Callable[[str], None] | None = None,
    backend: Any = None,
    n_boot: int = N_BOOT_VARIANTS,
    seed: int = 0,
    engine: Any = None,
) -> VariantRanking:
    """``primebench rank-variants --adaptive``: every variant is asked the same items, round by
    round (drawn with known probabilities, favouring those the variants are unsure of), until
    every adjacent pair of the ranking is separated at 95 % or ``max_items`` per benchmark are
    spent
    (:func:`~primebench_tasks.adaptive.race.race_variants`). Resumable: the items recorded
    for any variant are completed for the others first, and the race goes on from them. Writes
    ``adaptive_variants.json`` (a typed :class:`~primebench_tasks.place.variant_ranking.VariantRanking`,
    race ``adaptive``) and ``.md``, and every variant's placement on the suite from the race's
    draws (``report.json``/``.md``/``placement.png``: :func:`race_placement`); returns the
    ranking. ``engine``: an
    :class:`~harness_adapters.run.engine.Engine` (default: the installed default engine, vLLM);
    ``backend``: answers instead of the engine's backend."""
    from harness_adapters.run.engine import checked_run, engine_named

    checked = checked_run(engine or engine_named(), req)
    with run_lock(req.out):
        return _rank_variants_adaptive(
            req, panels, settings, progress, backend, n_boot, seed, checked
        )


def _rank_variants_adaptive(
    req: RunRequest,
    panels: Mapping[str, Panel],
    settings: AdaptiveSettings,
    progress: Callable[[str], None] | None,
    backend: Any,
    n_boot: int,
    seed: int,
    checked: CheckedRun,
) -> VariantRanking:
    say = progress or (lambda _m: None)
    pools = item_pools(req.suite, panels, settings, data=req.data)
    req.out.mkdir(parents=True, exist_ok=True)
    # a race draws by the 2PL alone: no policy
    spec = checked.spec.with_(
        adaptive={
            **asdict(settings),
            "documents": documents_digest([d for p in pools for d in p.docs]),
        }
    )
    freeze_spec(req.out, spec)
    records = RecordFile(req.out / "records.jsonl")
    variants = req.variants()
    names = {a: variant_name(req.model_name, a) for a in variants}
    execute = engine_executor(req, checked.start, backend)

    def send(docs_by_variant: Mapping[str | None, list[SuiteDoc]]) -> None:
        before = len(records.read())
        execute(docs_by_variant, records)
        # a variant whose every request of a round failed cannot be raced: refused by name,
        # not ranked on nothing (its failed items are asked again by a rerun)
        new = records.read()[before:]
        for a, docs in docs_by_variant.items():
            mine = [r for r in new if r["model"] == names[a]]
            if docs and not any(r["status"] == "ok" for r in mine):
                why = failure_digest(mine)  # this round's lines: every one failed
                raise BackendError(
                    f"variant {names[a]}: every one of its {len(docs)} requests of this round "
                    f"failed ({why}); nothing is ranked — fix the cause and rerun the same "
                    "command (the failed items are asked again)"
                )

    # resume: every item any variant was asked is asked of all (in record order); an item
    # that failed before this run is asked again (a failure never spends the budget of a
    # later run, as in run --adaptive)
    lines = records.read()
    since = len(lines)
    state = recorded_states(lines, names, pools, since)
    started: list[list[int]] = []
    for p in pools:
        seen: list[int] = []
        where = p.index()
        for r in lines:
            k = where.get(str(r.get("item_id"))) if r.get("benchmark") == p.benchmark else None
            if k is not None and r.get("model") in names.values() and k not in seen:
                seen.append(k)
        started.append(seen)
    send(
        {
            a: [
                p.docs[k]
                for p, ks in zip(pools, started, strict=True)
                for k in ks
                if not state[(a, p.benchmark)][1][k]
            ]
            for a in variants
        }
    )
    state = recorded_states(records.read(), names, pools, since)
    start_scores = [
        np.array([state[(a, p.benchmark)][0][ks] for a in variants]).reshape(len(variants), len(ks))
        for p, ks in zip(pools, started, strict=True)
    ]
    rounds = [0]

    def ask(picks: Mapping[int, np.ndarray]) -> dict[int, np.ndarray]:
        rounds[0] += 1
        say(f"round {rounds[0]}: {sum(map(len, picks.values()))} items × {len(variants)} variants")
        send({a: [pools[b].docs[k] for b, ks in picks.items() for k in ks] for a in variants})
        st = recorded_states(records.read(), names, pools, since)
        return {
            b: np.array([st[(a, pools[b].benchmark)][0][ks] for a in variants])
            for b, ks in picks.items()
        }

    result = race_variants(
        [p.bench for p in pools],
        [p.category for p in pools],
        [names[a] for a in variants],
        ask,
        max_items=settings.max_items,
        batch=settings.round_size,
        n_boot=n_boot,
        seed=seed,
        start=(started, start_scores),
    )
    doc = VariantRanking(
        race="adaptive",
        suite=req.suite["version"],
        suite_name=req.suite["name"],
        n_boot=n_boot,
        seed=seed,
        verdict=Verdict.from_json(result.verdict),
        ranking=ranking_rows(result.table),
        pairwise=pairwise_table(result.pairwise),
        settings=asdict(settings),
        stopped_because=result.reason,
        items={p.benchmark: len(a) for p, a in zip(pools, result.asked, strict=True)},
    )
    doc.write(req.out / "adaptive_variants.json")
    items = ", ".join(f"{b}: {n}" for b, n in (doc.items or {}).items())
    md = (
        f"# Variants of {req.model_name} on {req.suite['name']}: sequential comparison\n\n"
        f"**Verdict**: {result.verdict['text']}.\n\nStopped because: {result.reason}; items "
        f"asked of every variant: {items}.\n\nGroups that cannot be told apart, best first: "
        + "; ".join(" ≈ ".join(g) for g in result.verdict["indistinguishable_groups"])
        + ".\n\n"
        + markdown_table(result.table.reset_index())
        + "\nP(row beats column):\n\n"
        + markdown_table(result.pairwise.reset_index())
    )
    atomic_write_text(req.out / "adaptive_variants.md", md)
    # one placement (#80): every variant placed on the suite from the race's draws (report.json,
    # .md, .png — suite score, categories, ranks, leaderboard), as a static run's
    from harness_adapters.run.report import write_placement_files

    placed = race_placement(req, pools, result, panels, n_boot=N_BOOT, seed=seed)
    write_placement_files(placed, panels, req.out, spec.conditions)
    return doc


def race_placement(
    req: RunRequest,
    pools: Sequence[ItemPool],
    result: RaceResult,
    panels: Mapping[str, Panel],
    *,
    n_boot: int,
    seed: int,
) -> Placement:
    """Each variant of the race placed on the suite (:func:`~harness_adapters.run.adaptive_loop.
    place_variants`): per benchmark its draws' Hansen–Hurwitz estimate
    (:func:`~primebench_tasks.adaptive.placement.race_benchmark`)."""
    from primebench_tasks.adaptive.placement import race_benchmark

    def place_one(v: int, a: str | None, b: int, p: ItemPool, seeded: list[int]) -> Any:
        items = result.asked[b]
        return race_benchmark(
            result.draws[b],
            source=panels[p.benchmark].name,
            answers={i: float(result.scores[b][v, j]) for j, i in enumerate(items)},
            reference_on_items=p.bench.Y_ref[:, items],
            reference_full=p.bench.reference_full,
            n_reference=len(panels[p.benchmark].model_names),
            n_boot=n_boot,
            seed=seeded,
        )

    return place_variants(req, pools, panels, "race", place_one, n_boot, seed)
