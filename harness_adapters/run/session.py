"""One run session, whatever engine answers it: run every variant over the suite's documents,
then write the reports (``primebench run`` / ``primebench rank-variants``). The engine
(an :class:`~harness_adapters.run.engine.Engine`: vLLM's, found by entry point) checks its inputs,
gives the spec this module freezes, and says how to start it; the loop and the reports are the
run's.

Output directory::

    run_spec.json     what the records were made with (suite, model, prompts, decoding, engine)
    records.jsonl     one line per finished (variant, item): see records.py
    report.json/.md   the placement every harness writes (schema primebench.placement/1: suite,
                      category and benchmark scores, predicted full scores and ranks, + CIs)
    placement.png     the new models placed on the reference panel's ranking
    variants.json/.md/.png   (rank-variants) ranking, pairwise P(A beats B), bootstrap ceiling

A second run into the same directory resumes: it must have the same suite, model, prompts and
decoding (adapters may be added).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pandas as pd

from harness_adapters.run.engine import Backend, Engine
from harness_adapters.run.records import RecordFile, failure_digest, variant_name
from harness_adapters.run.report import RESPONSE_COLUMNS
from harness_adapters.run.request import RunRequest, RunSpec, freeze_spec, read_run_spec
from harness_adapters.run.static_loop import RunSummary, run_variants
from harness_adapters.suites.documents import SuiteDoc, documents_digest
from primebench_tasks.data.io import atomic_write_text, json_scalar
from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import manifest_items
from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR, N_BOOT, N_BOOT_VARIANTS
from primebench_tasks.place.result import Placement
from primebench_tasks.place.variant_ranking import (
    VariantRanking,
    Verdict,
    pairwise_table,
    ranking_rows,
)
from primebench_tasks.place.variants import CEILING_BAR, rank_variants, variant_verdict
from primebench_tasks.report.plots import variants_plot
from primebench_tasks.report.tables import markdown_table
from primebench_tasks.suite.manifest import SuiteManifest

Finished = Mapping[tuple[str, ...], Mapping[str, Any]]
"""A run's finished records by (variant, benchmark, item id): :meth:`RecordFile.finished`."""


def execute(
    req: RunRequest,
    panel: Panel | None,
    progress: Callable[[str], None] | None = None,
    backend: Backend | None = None,
    engine: Engine | None = None,
) -> RunSummary:
    """``primebench run`` (static): ``engine`` (default: the installed default engine, vLLM)
    checks the model and adapters and gives the spec; then :func:`run_static` on the suite's
    documents, under the run folder's lock — on ``backend`` when given, else on the engine's
    (or the engine's whole run: Ray's replicas). ``panel``: the reference panel the user gave,
    None for the suite's own (every source panel of a multi-source suite)."""
    from harness_adapters.run.engine import checked_run, engine_named
    from harness_adapters.run.report import reference_panels
    from harness_adapters.run.request import run_lock
    from harness_adapters.suites.documents import design_docs, suite_docs

    engine = engine or engine_named()
    docs = suite_docs(req.suite, reference_panels(req.suite, panel), req.data)
    # the design-only benchmarks drawn from the user's datasets, as lmms-eval draws them (#81)
    drawn, unread = design_docs(req.suite, req.data)
    docs += drawn
    for b, why in unread.items():
        (progress or (lambda _m: None))(f"warning: {b} is not asked: {why}")
    checked = checked_run(engine, req)
    whole = checked.whole_run

    def on_whole(records: RecordFile) -> RunSummary:
        assert whole is not None
        return whole(docs, records, progress)

    with run_lock(req.out):
        return run_static(
            req,
            docs,
            checked.spec,
            checked.start,
            progress,
            backend,
            None if whole is None else on_whole,
        )


def run_static(
    req: RunRequest,
    docs: list[SuiteDoc],
    spec: RunSpec | Mapping[str, Any],
    start: Callable[[], Backend],
    progress: Callable[[str], None] | None = None,
    backend: Backend | None = None,
    whole_run: Callable[[RecordFile], RunSummary] | None = None,
) -> RunSummary:
    """Freeze ``spec`` (with the documents' digest) next to the records, then run every variant
    of ``req`` over ``docs`` by the static loop (:func:`~harness_adapters.run.static_loop.run_variants`)
    on ``backend``, else on the engine ``start()`` builds — not built when every item of every
    variant is already recorded. ``whole_run(records)``: an engine that runs the whole request
    itself (Ray replicas) instead of the loop. Called under the run folder's lock."""
    spec_path = req.out / "run_spec.json"
    fresh = not spec_path.exists()
    freeze_spec(req.out, RunSpec.of(spec).with_(documents=documents_digest(docs)))
    records = RecordFile(req.out / "records.jsonl")
    done = records.finished()
    names = [variant_name(req.model_name, a) for a in req.variants()]
    if backend is None and all((n, d.benchmark, d.item_id) in done for n in names for d in docs):
        backend = _NothingToRun()  # every item of every variant is recorded: no engine start
    if backend is None and whole_run is not None:
        try:
            return whole_run(records)
        except BaseException:
            if fresh and not records.path.exists():  # nothing was run: no half-begun run left
                spec_path.unlink(missing_ok=True)
            raise
    if backend is None:
        try:
            backend = start()
        except BaseException:
            # the engine did not start and nothing was run: leave no half-begun run behind
            # (its spec would refuse the corrected command's other settings as a resume)
            if fresh and not records.path.exists():
                spec_path.unlink(missing_ok=True)
            raise
    return run_variants(
        backend,
        docs,
        req.model_name,
        req.variants(),
        records,
        req.suite["version"],
        req.batch_size,
        progress,
    )


class _NothingToRun:
    """Stands where an engine would be when a resumed run has nothing left to compute."""

    kind = "none"

    def generate(self, *args: Any, **kwargs: Any) -> list[Any]:
        raise AssertionError("nothing was left to run")


def recorded_scores(
    done: Finished, names: Sequence[str], suite: SuiteManifest
) -> tuple[pd.DataFrame, pd.Series]:
    """(variants × (benchmark, item_id)) ok scores (NaN = missing or failed) in suite order,
    and each column's category; ``done``: the run's finished records
    (:meth:`RecordFile.finished`, read once by the caller for every table it makes)."""
    cols, cats = [], []
    for cat, by_b in manifest_items(suite).items():
        for b, ids in by_b.items():
            cols += [(b, str(i)) for i in ids]
            cats += [cat] * len(ids)
    index = pd.MultiIndex.from_tuples(cols, names=["benchmark", "item_id"])
    data = [
        [(done.get((n, b, i)) or {}).get("score", float("nan")) for b, i in cols] for n in names
    ]
    frame = pd.DataFrame(
        data, index=pd.Index(list(names), name="model"), columns=index, dtype=float
    )
    return frame, pd.Series(cats, index=index)


def write_run_report(
    req: RunRequest,
    panel: Panel | None,
    estimator: str = DEFAULT_ESTIMATOR,
    n_boot: int = N_BOOT,
    seed: int = 0,
    conditions: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """report.json / report.md / placement.png for every variant of ``req``, by the placement
    path every harness shares (:func:`harness_adapters.run.report.write_report`: the suite's own
    reference panels, multi-source suites included; schema ``primebench.placement/1``). Returns
    one row per variant (:func:`primebench_tasks.place.report.suite_summary`). ``conditions``: the
    run's conditions where its spec holds none."""
    from harness_adapters.run.report import missing_items, undrawn_design_only, write_report
    from primebench_tasks.place.design_only import design_answers
    from primebench_tasks.place.report import suite_summary

    names = [variant_name(req.model_name, a) for a in req.variants()]
    done = RecordFile(req.out / "records.jsonl").finished()
    scores, _ = recorded_scores(done, names, req.suite)
    spec = req.out / "run_spec.json"
    frozen = read_run_spec(spec).conditions if spec.exists() else None
    missing = missing_items(scores)
    design = design_answers(design_records(done, req.suite), req.suite)
    undrawn_design_only(req.suite, names, design, missing, RUNNER_UNDRAWN)
    doc = write_report(
        req.suite,
        scores,
        missing,
        req.out,
        panel,
        estimator,
        n_boot,
        seed,
        notes=spec_notes(req.out, req.model_name),
        conditions=frozen or conditions,
        responses=recorded_responses(done, names),
        guessing=True,  # the runner scores upstream benchmarks with lmms-eval's task code
        design=design,
    )
    return suite_summary(doc)


RUNNER_UNDRAWN = (
    "design-only: not asked in this run — its dataset could not be read (the run said why; "
    "give a local copy with --dataset TASK=DIR)"
)
"""Why a design-only benchmark is missing from a runner's placement."""


def design_records(done: Finished, manifest: SuiteManifest) -> pd.DataFrame:
    """The run's finished answers to ``manifest``'s design-only benchmarks (model, benchmark,
    item_id, score, stratum, pool), what
    :func:`~primebench_tasks.place.design_only.design_answers` reads."""
    names = {e.name for e in manifest.design_only}
    rows = [
        {k: r.get(k) for k in ("model", "benchmark", "item_id", "score", "stratum", "pool")}
        for r in done.values()
        if r["benchmark"] in names
    ]
    return pd.DataFrame(rows, columns=["model", "benchmark", "item_id", "score", "stratum", "pool"])


def recorded_responses(done: Finished, names: Sequence[str]) -> pd.DataFrame:
    """The finished answers of the variants ``names`` (model, benchmark, item_id, score and the
    :data:`~harness_adapters.run.report.RESPONSE_COLUMNS`; None where an older record did not
    keep one): what the response check reads."""
    rows = [
        {
            "model": n,
            "benchmark": b,
            "item_id": i,
            "score": rec.get("score"),
            **{c: rec.get(c) for c in RESPONSE_COLUMNS},
        }
        for (n, b, i), rec in done.items()
        if n in set(names)
    ]
    cols = ["model", "benchmark", "item_id", "score", *RESPONSE_COLUMNS]
    return pd.DataFrame(rows, columns=cols)


def run_failures(req: RunRequest, placed: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(variants with failed items, variants with no scored item) of a static run, one line
    each — "<variant>: N items failed: k× '<error>' ..." — from its records and its placement
    summary (:func:`write_run_report`). The CLI says the first on stderr and fails on the
    second: a variant with nothing scored has no score and no rank."""
    names = [variant_name(req.model_name, a) for a in req.variants()]
    lost = RecordFile(req.out / "records.jsonl").unscored(names)
    some, none = [], []
    for n in names:
        rows = [r for (m, _b), rs in lost.items() if m == n for r in rs]
        why = failure_digest(rows) if rows else "no item was run"
        if rows:
            some.append(f"{n}: {why}")
        if n in placed.index and int(placed.loc[n, "n_scored"]) == 0:
            none.append(f"{n}: {why}")
    return some, none


def spec_notes(out: Path, model_name: str) -> dict[str, list[str]]:
    """variant → the notes run_spec.json holds for its adapter (what of it was applied)."""
    path = out / "run_spec.json"
    if not path.exists():
        return {}
    spec = read_run_spec(path)
    return {
        variant_name(model_name, name): [a["note"]]
        for name, a in sorted(spec.adapters.items())
        if a.get("note")
    }


def write_variant_report(
    req: RunRequest, n_boot: int = N_BOOT_VARIANTS, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """variants.json (a typed :class:`~primebench_tasks.place.variant_ranking.VariantRanking`,
    race ``static``) / variants.md / variants.png: the variants' ranking, pairwise P(A beats B)
    and the bootstrap ceiling (App. I.4: trust the ranking only if ≥ 0.90)."""
    names = [variant_name(req.model_name, a) for a in req.variants()]
    scores, cats = recorded_scores(
        RecordFile(req.out / "records.jsonl").finished(), names, req.suite
    )
    table, pairwise, ceiling = rank_variants(scores, cats, n_boot, seed)
    verdict = variant_verdict(table, pairwise)
    trust = verdict["winner"] is not None
    misfit, answers = variant_flags(req.out, names)
    doc = VariantRanking(
        race="static",
        suite=req.suite["version"],
        suite_name=req.suite["name"],
        n_boot=n_boot,
        seed=seed,
        verdict=Verdict.from_json(verdict),
        ranking=ranking_rows(table),
        pairwise=pairwise_table(pairwise),
        ceiling=json_scalar(ceiling),
        supports_conclusion=trust,
        misfit=misfit,
        answers=answers,
    )
    doc.write(req.out / "variants.json")
    indistinguishable = cast("list[list[str]]", verdict["indistinguishable_groups"])
    threshold = float(cast(float, verdict["threshold"]))
    groups = "; ".join(_group_text(g, pairwise, threshold) for g in indistinguishable)
    md = (
        f"# Variants of {req.model_name} on {req.suite['name']}\n\n"
        f"**Verdict** (paired bootstrap over the same items, {n_boot} resamples): "
        f"{verdict['text']}.\n\nRuns of neighbours in the ranking that the suite cannot tell "
        f"apart (each next one not separated at P ≥ {threshold:.3f}), best first: {groups}.\n\n"
        f"Bootstrap ceiling ρ = {ceiling:.3f} (the PRIMEBench paper's App. I.4, bar {CEILING_BAR}; the "
        "verdict above is what decides).\n\n"
        f"`lo`/`hi`: each suite score's 95 % interval from the same paired resamples of the items "
        f"({n_boot}, shared by every variant) that P(row beats column) uses; report.md's interval "
        "of the same score comes from its own per-benchmark bootstrap and may differ at the "
        "second decimal.\n\n"
        + "".join(
            f"**Misfit**: {v}'s right/wrong pattern on {', '.join(bs)} does not fit the "
            "reference runs' — among variants of one base model, a broken checkpoint or chat "
            "template more likely than a worse model; its rank is not a comparison.\n\n"
            for v, bs in misfit.items()
            if bs
        )
        + "".join(
            f"**Answers of {v}**: " + "; ".join(lines) + ".\n\n"
            for v, lines in answers.items()
            if lines
        )
        + markdown_table(_with_answer_marks(table, req.out))
        + "\nP(row beats column):\n\n"
        + markdown_table(pairwise.reset_index())
    )
    atomic_write_text(req.out / "variants.md", md)
    variants_plot(table, pairwise, ceiling, req.out / "variants.png", str(verdict["text"]))
    return table, pairwise, ceiling


def _group_text(group: Sequence[str], pairwise: pd.DataFrame, threshold: float) -> str:
    """One run of unseparated neighbours, ``A ≈ B ≈ C``; where its ends are separated after all
    (each step within the noise, the whole run not), that is said, so a run never reads as a
    tie of all its members."""
    text = " ≈ ".join(group)
    if len(group) >= 3:
        p = float(pairwise.loc[group[0], group[-1]])
        if p >= threshold:
            text += f" (but {group[0]} is above {group[-1]}: P = {p:.3f})"
    return text


def _with_answer_marks(table: pd.DataFrame, out: Path) -> pd.DataFrame:
    """The ranking table with a column saying, per variant, where its placement is not
    comparable (its answers measure the parser, or are nearly all one answer): its rank there is
    no comparison (#79: such ranks were unmarked)."""
    path = out / "report.json"
    models = Placement.read(path).models if path.exists() else {}
    shown = table.reset_index()
    first = shown.columns[0]
    shown["answers"] = [
        f"not comparable on {', '.join(models[v].suite.not_comparable)}"
        if v in models and models[v].suite.not_comparable
        else "comparable"
        for v in shown[first]
    ]
    return shown


def variant_flags(
    out: Path, names: Sequence[str]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """From the placement of the variants ``names`` (``out/report.json``, written first, read
    once): variant → the benchmarks whose right/wrong pattern the misfit check flagged (among
    variants of one base model, a variant flagged where the others are not is a broken
    checkpoint or template; a misfit check that could not be run flags nothing),
    and variant → its response check's lines ("MMMU_DEV_VAL: 31 % of the answers held no answer
    the parser could read (…)")."""

    path = out / "report.json"
    models = Placement.read(path).models if path.exists() else {}
    flagged = {n: models[n].misfit_benchmarks() if n in models else [] for n in names}
    answers = {n: list(models[n].suite.answers) if n in models else [] for n in names}
    return flagged, answers


def place_variant(
    backend: Backend,
    suite: SuiteManifest,
    panel: Panel | None,
    out: Path,
    model_name: str,
    adapter: str,
    batch_size: int = 32,
    datasets: Mapping[str, str | Path] | None = None,
    notes: Sequence[str] | None = None,
    conditions: Mapping[str, Any] | None = None,
) -> tuple[Placement, str]:
    """Ask one variant (``adapter`` of ``model_name``) the suite's items on ``backend``
    (records appended to ``out/records.jsonl``, resumable) and place it through the one
    placement path (:func:`~harness_adapters.run.report.write_report`; its report in
    ``out/checkpoints/<adapter>/``). Returns (the :class:`~primebench_tasks.place.result.Placement`,
    the variant's name) — what a training callback logs from."""
    from harness_adapters.run.report import missing_items, reference_panels, write_report
    from harness_adapters.suites.documents import suite_docs

    records = RecordFile(Path(out) / "records.jsonl")
    docs = suite_docs(suite, reference_panels(suite, panel), datasets)
    run_variants(
        backend, docs, model_name, [adapter], records, suite["version"], batch_size, progress=None
    )
    variant = variant_name(model_name, adapter)
    done = records.finished()
    scores, _ = recorded_scores(done, [variant], suite)
    placement = write_report(
        suite,
        scores,
        missing_items(scores),
        Path(out) / "checkpoints" / adapter,
        panel,
        notes={variant: list(notes)} if notes else None,
        conditions=conditions,
        responses=recorded_responses(done, [variant]),
        guessing=True,  # scored as the runner scores (upstream benchmarks: lmms-eval's code)
    )
    return placement, variant
