"""The adaptive test's round loop, whatever answers it (docs/architecture.md, "The adapters"):
each model (and each adapter) is asked, in rounds, the items of the suite's benchmarks that tell
the most about it, and its test of a benchmark stops when the predicted full-benchmark score is
known to ``--target-width`` (90 % interval) or after ``--max-items``
(:class:`~primebench_tasks.adaptive.benchmark.AdaptiveBenchmark` under the default
:class:`~primebench_tasks.adaptive.policy.AdaptivePolicy`). A round is sent to a
:data:`RoundExecutor` — an engine's backend (:func:`run_adaptive`, :func:`engine_executor`: the vLLM
engine or server, any installed engine), lmms-eval's or VLMEvalKit's own code (their ``adaptive``
drivers) — which appends the records.

The item pool is every item of each suite benchmark in its reference panel, not only the static
suite's items: asked from the panel's content (question, answer, image), or — the flagship's
MathVista, MMMU and BLINK, whose panels hold ids or text without images — from the upstream
lmms-eval dataset (``--dataset TASK=DIR``, else the hub) by the upstream task's own prompt and
scorer, as the static run asks them. Records are the static runner's (``records.jsonl``, one
line per (variant, benchmark, item)), so a killed run resumes item by item: the next items
depend only on the answers recorded so far, so the resumed run asks exactly what an
uninterrupted one would.

Output beside the records: ``calibration/`` (each benchmark's interval calibration, replayed
once per run and read back on a resume), ``adaptive.json`` (the typed
:class:`~primebench_tasks.adaptive.result.AdaptiveRun`, schema ``primebench.adaptive/2``) and
``adaptive.md``: per variant and benchmark the items asked, why the test stopped, the score on
the items asked, the predicted full score with its 90 % interval, the placement regime, the
predicted rank among the reference models and the misfit check; per variant the mean over
benchmarks.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness_adapters.run.errors import BackendError
from harness_adapters.run.records import RecordFile, RecordRow, failure_digest, variant_name
from harness_adapters.run.request import RunRequest, RunSpec, freeze_spec, run_lock
from harness_adapters.suites.documents import SuiteDoc, documents_digest, pool_documents
from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark, AdaptiveEstimate
from primebench_tasks.adaptive.design import Draw, StaticRound, answered_before
from primebench_tasks.adaptive.ledger import DrawLedger, draw_seed
from primebench_tasks.adaptive.markdown import adaptive_markdown
from primebench_tasks.adaptive.result import (
    AdaptiveModel,
    AdaptiveRun,
    AdaptiveSettings,
    AdaptiveTest,
    FailedItems,
    GuardSettings,
    TestDesign,
)
from primebench_tasks.data.io import atomic_write_text
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import manifest_items
from primebench_tasks.place.defaults import N_BOOT
from primebench_tasks.place.misfit import ItemFacts, person_fit
from primebench_tasks.place.result import Placement
from primebench_tasks.progress import progress_bar
from primebench_tasks.suite.manifest import Design, SuiteManifest

DRAWS_FILE = "draws.json"
"""The run's draws (:class:`~primebench_tasks.adaptive.ledger.DrawLedger`), beside the records."""


def guard_settings(bench: AdaptiveBenchmark) -> GuardSettings:
    """The guarded test's draw and guard settings, as run documents keep them."""
    return GuardSettings(bench.uniform_share, bench.guard_k, bench.preference)


@dataclass
class ItemPool:
    """One benchmark's item pool: documents in the panel's item order, the adaptive test."""

    benchmark: str
    category: str
    docs: list[SuiteDoc]
    bench: AdaptiveBenchmark
    facts: ItemFacts
    """What the misfit check's directed residual reads of every pool item (panel order)."""
    design: Design | None = None
    """The static suite's design of the benchmark, where it draws from this very pool (its
    Σ N_h is the pool's size): a static run's answers that the test continues are its draw."""

    def index(self) -> dict[str, int]:
        return {d.item_id: k for k, d in enumerate(self.docs)}

    def estimate(
        self, answers: np.ndarray, asked: np.ndarray, draws: Sequence[Draw]
    ) -> AdaptiveEstimate:
        """The test's guarded estimate from its answers and draws, a continued static run's
        answers read as their design's draw (:meth:`static_round`): what the stopping rule
        reads and the report shows."""
        static = self.static_round(answers, asked, draws)
        return self.bench.estimate(answers, asked, draws, static=static)

    def static_round(
        self, answers: np.ndarray, asked: np.ndarray, draws: Sequence[Draw]
    ) -> StaticRound | None:
        """The answered items that are not draws — a static run's suite items that this test
        continues — as the static design's draw, or None (none, or no design of this pool; then
        they count as known items only)."""
        if self.design is None:
            return None
        before = answered_before(answers, asked, draws)
        ids = [self.docs[k].item_id for k in np.flatnonzero(before)]
        if not ids or any(i not in self.design.stratum for i in ids):
            return None  # not the suite's draw
        with warnings.catch_warnings():  # an item no reference model answered: ½
            warnings.simplefilter("ignore", RuntimeWarning)
            m0 = np.nanmean(self.bench.Y_ref, axis=0)
        return StaticRound(
            np.flatnonzero(before),
            np.array([self.design.stratum[i] for i in ids]),
            np.array([h.N for h in self.design.strata]),
            np.where(np.isfinite(m0), m0, 0.5),
        )


PoolDocuments = Callable[[Panel, str, str], list[SuiteDoc]]
"""(panel, benchmark, category) → every pool item's document, in the panel's item order."""


def item_pools(
    manifest: SuiteManifest,
    panels: Mapping[str, Panel],
    settings: AdaptiveSettings,
    cache_dir: Path | None = None,
    data: Mapping[str, str | Path] | None = None,
    documents: PoolDocuments | None = None,
) -> list[ItemPool]:
    """Every suite benchmark's pool: every item of its reference panel, asked from the panel's
    content or — a benchmark whose items live in an upstream lmms-eval dataset (the flagship's
    MathVista, MMMU, BLINK) — from that dataset (``data``: upstream task → a local copy, else the
    hub), which must hold every pool item (:func:`~harness_adapters.suites.documents.pool_documents`);
    ``cache_dir``: where each test keeps its calibration (a resumed run reads it instead of
    replaying it); ``documents``: another harness's documents of a pool (the VLMEvalKit
    driver's, from the user's TSVs), given the panel, benchmark and category. Without
    ``documents``, a benchmark the manifest marks ``no_lmms_eval_task`` has no pool (not asked)."""
    pools = []
    for category, by_b in manifest_items(manifest).items():
        for b in by_b:
            if documents is None and manifest.entry(b).no_lmms_eval_task:
                continue  # asked through lmms-eval's task code, which has none for it
            panel = panels[b]
            docs = (
                documents(panel, b, category)
                if documents is not None
                else pool_documents(panel, b, category, manifest.entry(b).lmms_eval_task, data)
            )
            Y = panel.matrix(b).astype(float)
            if Y.shape[1] != len(docs):
                raise BackendError(
                    f"panel {panel.name}: {b} has {Y.shape[1]} score columns but {len(docs)} items"
                )
            Y = Y[np.isfinite(Y).any(axis=1)]
            if len(Y) < 8:
                raise BackendError(
                    f"benchmark {b}: its reference panel {panel.name} has {len(Y)} models with "
                    "answers; the adaptive test needs at least 8 to fit and calibrate its 2PL"
                )
            bench = AdaptiveBenchmark(
                Y,
                max_items=settings.max_items,
                batch=settings.round_size,
                level=settings.level,
                cache_dir=cache_dir,
            )
            facts = ItemFacts.of_items(panel.items_of(b))
            design = manifest.entry(b).design
            if design is not None and design.pool != len(docs):
                design = None  # drawn from another pool: its answers count as known items only
            pools.append(ItemPool(b, category, docs, bench, facts, design))
    return pools


def recorded_states(
    lines: Sequence[Mapping[str, Any]],
    names: Mapping[str | None, str],
    pools: list[ItemPool],
    since: int = 0,
) -> dict[tuple[str | None, str], tuple[np.ndarray, np.ndarray]]:
    """(answers, asked) of every (variant, benchmark) from the records: an item with an ``ok``
    line is asked, with its score; an item that failed in this run (a line at position
    ``since`` or later) is asked with a NaN answer — not asked again in this run, the test
    goes on without it. An item that failed before this run (``since``: the number of lines the
    file held when the run started) is not asked: a resumed run asks it again, as a static run
    does, and a failure never spends the item budget of a later run."""
    out = {
        (a, p.benchmark): (np.full(len(p.docs), np.nan), np.zeros(len(p.docs), bool))
        for a in names
        for p in pools
    }
    variant = {n: a for a, n in names.items()}
    where = {p.benchmark: p.index() for p in pools}
    for line, r in enumerate(lines):
        model, b = str(r.get("model")), str(r.get("benchmark"))
        k = where.get(b, {}).get(str(r.get("item_id")))
        if model not in variant or k is None:
            continue
        answers, asked = out[(variant[model], b)]
        if r.get("status") == "ok" and r.get("score") is not None:
            answers[k] = float(r["score"])
            asked[k] = True
        elif line >= since:
            asked[k] = True
    return out


RoundExecutor = Callable[[Mapping[str | None, list[SuiteDoc]], RecordFile], None]
"""Runs one round — variant → the documents to ask it — and appends their records."""


def next_round(req: RunRequest, docs: Sequence[SuiteDoc]) -> tuple[int, Path, SuiteManifest]:
    """The next round of a run that another harness executes: its number k (one past the
    folders under ``RUN/rounds``, so a resumed run never reuses a killed round's folder), its
    folder ``RUN/rounds/rNNN`` and the suite's manifest with just ``docs`` — items of each
    benchmark's pool, the static suite's or not — as its items, named
    ``<suite>_adaptive_rNNN`` (so it never shadows a released task)."""
    rounds = req.out / "rounds"
    k = len(list(rounds.glob("r*"))) + 1 if rounds.exists() else 1
    ids: dict[str, list[str]] = {}
    for d in docs:
        ids.setdefault(d.benchmark, []).append(d.item_id)
    return (
        k,
        rounds / f"r{k:03d}",
        req.suite.asking(ids, name=f"{req.suite.name}_adaptive_r{k:03d}"),
    )


def harness_round_records(
    req: RunRequest,
    docs: Sequence[SuiteDoc],
    scored: Mapping[tuple[str, str], tuple[float | None, str | None]],
    seconds_per_item: float,
    harness: str,
) -> list[RecordRow]:
    """The record lines of one round that another harness ran for the base model: per document,
    ``ok`` with its (score, response) from ``scored`` ((benchmark, item id) → ...), or ``failed``
    (missing, never 0) where ``harness`` gave it no score."""
    name = variant_name(req.model_name, None)
    rows = []
    for d in docs:
        score, text = scored.get((d.benchmark, d.item_id), (None, None))
        ok = score is not None
        rows.append(
            RecordRow(
                model=name,
                adapter=None,
                benchmark=d.benchmark,
                category=d.category,
                item_id=d.item_id,
                answer=d.answer(),
                condition="vl",
                suite=req.suite["version"],
                status="ok" if ok else "failed",
                response=text,
                score=score,
                error=None if ok else f"{harness} gave this item no per-item score",
                seconds=round(seconds_per_item, 4) if ok else None,
            )
        )
    return rows


def engine_executor(
    req: RunRequest, start: Callable[[], Any], backend: Any = None
) -> RoundExecutor:
    """The round executor of an engine: ``backend``, else the one ``start()`` builds on the
    first round that asks something; one batch per variant per round, through the run's loop."""
    from harness_adapters.run.static_loop import run_variants

    engine: list[Any] = [backend]

    def execute(asks: Mapping[str | None, list[SuiteDoc]], records: RecordFile) -> None:
        for a, docs in asks.items():
            if not docs:
                continue
            if engine[0] is None:
                engine[0] = start()
            run_variants(
                engine[0],
                docs,
                req.model_name,
                [a],
                records,
                req.suite["version"],
                batch_size=len(docs),
                progress=None,
                bar=False,  # the adaptive run's own bar counts its answers
            )

    return execute


def run_adaptive(
    req: RunRequest,
    panels: Mapping[str, Panel],
    settings: AdaptiveSettings,
    progress: Callable[[str], None] | None = None,
    backend: Any = None,
    engine: Any = None,
) -> AdaptiveRun:
    """``primebench run --adaptive``: every variant of ``req`` tested adaptively, the rounds sent
    to ``engine`` (an :class:`~harness_adapters.run.engine.Engine`; default the installed
    default engine, vLLM) — to ``backend`` when given, else to the engine's backend, built on
    the first round that asks something; see :func:`run_adaptive_rounds`."""
    from harness_adapters.run.engine import checked_run, engine_named

    checked = checked_run(engine or engine_named(), req)
    return run_adaptive_rounds(
        req,
        panels,
        settings,
        executor=engine_executor(req, checked.start, backend),
        spec=checked.spec,
        progress=progress,
    )


def run_adaptive_rounds(
    req: RunRequest,
    panels: Mapping[str, Panel],
    settings: AdaptiveSettings,
    *,
    executor: RoundExecutor,
    spec: RunSpec | Mapping[str, Any],
    progress: Callable[[str], None] | None = None,
    documents: PoolDocuments | None = None,
) -> AdaptiveRun:
    """Run every variant of ``req`` adaptively on the suite's benchmarks, each round through
    ``executor``, under the run's frozen ``spec``; writes the records and
    ``adaptive.json``/``adaptive.md``; returns the run's document (see the module docstring).
    ``documents``: the harness's pool documents (:func:`item_pools`)."""
    with run_lock(req.out):
        return _run_adaptive(req, panels, settings, progress, executor, spec, documents)


def _run_adaptive(
    req: RunRequest,
    panels: Mapping[str, Panel],
    settings: AdaptiveSettings,
    progress: Callable[[str], None] | None,
    executor: RoundExecutor,
    spec: RunSpec | Mapping[str, Any],
    documents: PoolDocuments | None,
) -> AdaptiveRun:
    say = progress or (lambda _m: None)
    # the calibration beside the records: a resumed run reads it instead of replaying it
    pools = item_pools(req.suite, panels, settings, req.out / "calibration", req.data, documents)
    req.out.mkdir(parents=True, exist_ok=True)
    policy = asdict(pools[0].bench.policy)  # one policy for every pool (item_pools' default)
    digest = documents_digest([d for p in pools for d in p.docs])
    guarding = guard_settings(pools[0].bench)
    spec = freeze_spec(
        req.out,
        RunSpec.of(spec).with_(
            adaptive={
                **asdict(settings),
                "policy": policy,
                "guard": guarding.to_json(),
                "documents": digest,
            }
        ),
    )

    records = RecordFile(req.out / "records.jsonl")
    lines = records.read()
    since = len(lines)  # failures before this run are asked again
    variants = req.variants()
    names = {a: variant_name(req.model_name, a) for a in variants}
    state = recorded_states(lines, names, pools, since)
    ledger_file = req.out / DRAWS_FILE
    ledger = DrawLedger.read(ledger_file)
    check_ledger(ledger, ledger_file, pools, names, lines, state, req.suite)
    stopped: dict[tuple[str | None, str], str] = {}
    rounds = 0
    # answers toward every test's budget: a test that stops early leaves its part unfilled
    answered = sum(int(asked.sum()) for _, asked in state.values())
    bar = progress_bar(
        len(variants) * len(pools) * settings.max_items, "adaptive", unit="answer", initial=answered
    )
    while True:
        asks: dict[str | None, list[SuiteDoc]] = {}
        for a in variants:
            for p in pools:
                key = (a, p.benchmark)
                if key in stopped:
                    continue
                pick = _next_draws(req, p, names[a], state[key], ledger, settings)
                if isinstance(pick, str):
                    stopped[key] = pick
                    continue
                asks.setdefault(a, []).extend(p.docs[k] for k in pick)
        if not asks:
            break
        ledger.write(ledger_file)  # before asking: a resumed run asks what was drawn
        rounds += 1
        open_tests = sum(len({d.benchmark for d in docs}) for docs in asks.values())
        n_asked = sum(map(len, asks.values()))
        say(
            f"round {rounds}: {n_asked} item{'s' * (n_asked != 1)}, {open_tests} "
            f"test{'s' * (open_tests != 1)} open"
        )
        before = len(lines)
        executor(asks, records)
        lines = records.read()  # once per round: the state and the round's new lines
        state = recorded_states(lines, names, pools, since)
        new = lines[before:]
        bar.update(len(new))
        if not new:
            bar.close()
            raise BackendError(f"round {rounds} recorded no answer (ok or failed): stopping")
        # a test whose every item of this round failed stops: asking it more items would only
        # fail again (a dead server, a wrong key, a panel without its images)
        for a, docs in asks.items():
            for b in dict.fromkeys(d.benchmark for d in docs):
                mine = [r for r in new if r["model"] == names[a] and r["benchmark"] == b]
                if mine and all(r["status"] != "ok" for r in mine):
                    stopped[(a, b)] = f"every item of round {rounds} failed"
    bar.close()
    failed = records.unscored(names.values(), since)
    doc = adaptive_report(req, pools, state, stopped, settings, failed, panels, records, ledger)
    doc.conditions = dict(spec.conditions or {})
    doc.write(req.out / "adaptive.json")
    atomic_write_text(req.out / "adaptive.md", adaptive_markdown(doc))
    # one placement: the tests placed like the static suite (report.json, .md, .png)
    from harness_adapters.run.report import write_placement_files

    placed = adaptive_placement(req, pools, state, doc, panels)
    write_placement_files(placed, panels, req.out, doc.conditions)
    return doc


ADAPTIVE_UNDRAWN = (
    "design-only: an adaptive test asks the benchmarks its reference panels hold; run the "
    "suite without --adaptive to draw it from its dataset"
)
"""Why a design-only benchmark is missing from an adaptive run's or a race's placement."""

PlaceOne = Callable[[int, str | None, int, ItemPool, list[int]], Any]
"""How one variant's test of one benchmark becomes its placement: (variant's position, adapter,
pool's position, pool, seed) → :class:`~primebench_tasks.place.suite.GivenBenchmark`."""


def place_variants(
    req: RunRequest,
    pools: Sequence[ItemPool],
    panels: Mapping[str, Panel],
    estimator: str,
    place_one: PlaceOne,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> Placement:
    """Every variant of ``req`` placed as one suite from tests that asked items per benchmark
    (an adaptive run's, a race's): each benchmark with a pool by ``place_one`` (seeded by the
    variant and the benchmark), one without a pool (not asked here) with no score; then the
    categories, the suite, the ranks and the leaderboard as a static run's
    (:func:`~primebench_tasks.place.suite.place_given`). The suite's design-only benchmarks
    (which such a test never asks) are listed missing with why — never silently absent."""
    from harness_adapters.run.report import undrawn_design_only
    from primebench_tasks.adaptive.placement import unasked_benchmark
    from primebench_tasks.place.suite import place_given

    by_b = {p.benchmark: (b, p) for b, p in enumerate(pools)}
    given: dict[str, dict[str, Any]] = {}
    for v, a in enumerate(req.variants()):
        name = variant_name(req.model_name, a)
        given[name] = {}
        for e in req.suite.benchmarks:
            if e.name in by_b:
                b, p = by_b[e.name]
                given[name][e.name] = place_one(v, a, b, p, [seed, v, sum(map(ord, e.name))])
            else:
                panel = panels[e.name]
                given[name][e.name] = unasked_benchmark(panel.name, len(panel.model_names), n_boot)
    placed = place_given(req.suite, panels, given, estimator, n_boot, seed)
    if req.suite.design_only:
        placed.missing = dict(placed.missing or {})
        undrawn_design_only(req.suite, list(placed.models), {}, placed.missing, ADAPTIVE_UNDRAWN)
    return placed


def adaptive_placement(
    req: RunRequest,
    pools: Sequence[ItemPool],
    state: Mapping[tuple[str | None, str], tuple[np.ndarray, np.ndarray]],
    doc: AdaptiveRun,
    panels: Mapping[str, Panel],
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> Placement:
    """The run's tests placed as one suite (#80, :func:`place_variants`): each test's estimate
    the benchmark's placement (:func:`~primebench_tasks.adaptive.placement.given_benchmark`: its
    answers, the reference models' answers to the same items and full scores)."""
    from primebench_tasks.adaptive.placement import given_benchmark

    def place_one(v: int, a: str | None, b: int, p: ItemPool, seeded: list[int]) -> Any:
        answers, asked = state[(a, p.benchmark)]
        k = np.flatnonzero(asked)
        return given_benchmark(
            doc.models[variant_name(req.model_name, a)].benchmarks[p.benchmark],
            source=panels[p.benchmark].name,
            answers=answers[k],
            reference_on_items=p.bench.Y_ref[:, k],
            reference_full=p.bench.reference_full,
            level=doc.settings.level,
            n_boot=n_boot,
            seed=seeded,
        )

    return place_variants(req, pools, panels, "adaptive", place_one, n_boot, seed)


def check_ledger(
    ledger: DrawLedger,
    path: Path,
    pools: Sequence[ItemPool],
    names: Mapping[str | None, str],
    lines: Sequence[Mapping[str, Any]],
    state: Mapping[tuple[str | None, str], tuple[np.ndarray, np.ndarray]],
    suite: SuiteManifest | None = None,
) -> None:
    """Refuse answers that no draw accounts for: every answered item that ``draws.json`` does
    not list as a draw must be one of the static ``suite``'s items (a static run this test
    continues); a removed or emptied ledger, or one of another model, would otherwise pass the
    test's drawn answers off as a static run's and drop the guard. Then refuse a ``draws.json``
    whose draws do not follow from the run's answers
    (:meth:`~primebench_tasks.adaptive.benchmark.AdaptiveBenchmark.check_draws`: each round's
    ability, and each draw's probability, prediction and remaining sum): an edited probability
    would weigh an answer as the design never did, and move the design estimate that guards the
    score. An item that failed and was asked again is not known to have been known when later
    rounds were drawn: their abilities are not checked."""
    failed: dict[tuple[str, str], set[str]] = {}
    for r in lines:
        if r.get("status") != "ok":
            key = (str(r.get("model")), str(r.get("benchmark")))
            failed.setdefault(key, set()).add(str(r.get("item_id")))
    for a, model in names.items():
        for p in pools:
            if suite is not None:
                _refuse_undrawn(ledger, path, p, model, state[(a, p.benchmark)], suite)
            if not ledger.of(model, p.benchmark):
                continue
            index = p.index()
            rounds, thetas = ledger.rounds(model, p.benchmark, index)
            answers, asked = state[(a, p.benchmark)]
            before = answered_before(answers, asked, [d for r in rounds for d in r])
            unsure = np.zeros(len(p.docs), bool)
            for i in failed.get((model, p.benchmark), ()):
                if i in index:
                    unsure[index[i]] = True
            why = p.bench.check_draws(answers, before, rounds, thetas, unsure=unsure)
            if why is not None:
                raise InputError(
                    f"the draws of {model} on {p.benchmark} do not follow from the run's "
                    f"answers ({why}): the file was edited or belongs to another run; restore "
                    "it or start a new run",
                    file=str(path),
                    row=f"{model} / {p.benchmark}",
                    field="draws",
                )


def _refuse_undrawn(
    ledger: DrawLedger,
    path: Path,
    p: ItemPool,
    model: str,
    state: tuple[np.ndarray, np.ndarray],
    suite: SuiteManifest,
) -> None:
    """Refuse ``model``'s answers on ``p`` that are neither draws of ``ledger`` nor items of the
    static suite (see :func:`check_ledger`)."""
    answers, asked = state
    draws = ledger.draws(model, p.benchmark, p.index()) if ledger.of(model, p.benchmark) else []
    before = answered_before(answers, asked, draws)
    static = set(suite.entry(p.benchmark).item_ids)
    undrawn = [p.docs[k].item_id for k in np.flatnonzero(before) if p.docs[k].item_id not in static]
    if undrawn:
        where = "lists no draw of this test" if not draws else "lists none of them"
        raise InputError(
            f"{model} answered {len(undrawn)} items of {p.benchmark} (e.g. {undrawn[0]}) that "
            f"are not the static suite's and that the run's draws {where}: an adaptive test's "
            "answers without their draws cannot be weighed (the file was removed, emptied or "
            "edited, or belongs to another run); restore it or start a new run (another --out)",
            file=str(path),
            row=f"{model} / {p.benchmark}",
            field="draws",
        )


def _next_draws(
    req: RunRequest,
    p: ItemPool,
    model: str,
    state: tuple[np.ndarray, np.ndarray],
    ledger: DrawLedger,
    settings: AdaptiveSettings,
) -> list[int] | str:
    """The pool positions to ask one test next, or why it stops. Items drawn but not answered
    (a killed round; an item that failed before this run) are asked first; else the library's
    step (:class:`~primebench_tasks.adaptive.session.AdaptiveSession`, the replay's own: the
    guarded estimate, the stopping rule — ``--max-items`` counts the items the test draws — and
    the next round, seeded by :func:`~primebench_tasks.adaptive.ledger.draw_seed`), its draws
    added to ``ledger``."""
    from primebench_tasks.adaptive.session import AdaptiveSession

    answers, asked = state
    index = p.index()
    draws = ledger.draws(model, p.benchmark, index)
    pending = [d.item for d in draws if not asked[d.item]]
    if pending:
        return pending
    session = AdaptiveSession(
        p.bench,
        lambda drawn: draw_seed(req.suite["version"], model, p.benchmark, drawn),
        settings.round_size,
        settings.target_width,
        static=p.static_round(answers, asked, draws),
    )
    theta = p.bench.ability(answers, asked)
    step = session.step(answers, asked, draws)
    if step.stop is not None:
        return step.stop
    ledger.add(model, p.benchmark, [p.docs[d.item].item_id for d in step.draws], step.draws, theta)
    return [d.item for d in step.draws]


def adaptive_report(
    req: RunRequest,
    pools: list[ItemPool],
    state: Mapping[tuple[str | None, str], tuple[np.ndarray, np.ndarray]],
    stopped: Mapping[tuple[str | None, str], str],
    settings: AdaptiveSettings,
    failed: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]] | None = None,
    panels: Mapping[str, Panel] | None = None,
    records: RecordFile | None = None,
    ledger: DrawLedger | None = None,
) -> AdaptiveRun:
    """``adaptive.json``'s document (``ledger``: the run's draws, which guard each estimate);
    ``failed``: (variant name, benchmark) → the failed record
    lines of this run's unscored items (:meth:`RecordFile.unscored`); ``panels`` and
    ``records``: the reference panels and the run's records, for the response check of the
    answers asked (:mod:`primebench_tasks.place.responses`)."""
    models: dict[str, AdaptiveModel] = {}
    checks: Mapping[str, Mapping[str, Any]] = {}
    if panels is not None and records is not None:
        from harness_adapters.run.session import recorded_responses
        from primebench_tasks.place.responses import check_responses

        names = [variant_name(req.model_name, a) for a in req.variants()]
        asked = recorded_responses(records.finished(), names)
        checks = check_responses(asked, {p.benchmark: panels[p.benchmark] for p in pools}, True)
    for a in req.variants():
        name = variant_name(req.model_name, a)
        by_b: dict[str, AdaptiveTest] = {}
        misfit: list[str] = []
        answer_flags: list[str] = []
        for p in pools:
            answers, asked = state[(a, p.benchmark)]
            draws = (ledger or DrawLedger()).draws(name, p.benchmark, p.index())
            static = p.static_round(answers, asked, draws)
            est = p.bench.estimate(answers, asked, draws, static=static)  # as p.estimate
            continued = int(answered_before(answers, asked, draws).sum())
            lost = list((failed or {}).get((name, p.benchmark), []))
            # person fit on the items it was asked, against the reference models' answers to
            # the same items (no item added)
            scored = np.flatnonzero(asked & np.isfinite(answers))
            (fit,) = person_fit(
                p.bench.Y_ref[:, scored], answers[None, scored], facts=p.facts.take(scored)
            )
            if (line := fit.line(p.benchmark)) is not None:
                misfit.append(line)
            check = checks.get(name, {}).get(p.benchmark)
            if check is not None:
                answer_flags += [f"{p.benchmark}: {flag}" for flag in check.flags]
            by_b[p.benchmark] = AdaptiveTest.of(
                est,
                category=p.category,
                pool=len(p.docs),
                stopped_because=stopped.get((a, p.benchmark), "not finished"),
                design=TestDesign.of(est, len(draws), continued, static is not None),
                failed=FailedItems(len(lost), failure_digest(lost) if lost else None),
                misfit=fit,
                responses=check,
            )
        models[name] = AdaptiveModel.of(by_b, misfit, answer_flags)
    return AdaptiveRun(
        suite=req.suite["version"],
        suite_name=req.suite["name"],
        settings=settings,
        policy=pools[0].bench.policy,
        models=models,
        guard=guard_settings(pools[0].bench),
    )
