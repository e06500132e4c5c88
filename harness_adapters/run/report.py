"""Placement of a harness run on a PRIMEBench suite, whatever the harness: the suite manifest of
a version, the reference panels, the (model × item) score frame with what is missing, and the
report (``report.json`` schema ``primebench.placement/1``, ``report.md``, ``placement.png``).

The harness adapters read their own output into records (``model, benchmark, item_id, score``)
and a suite version; :func:`write_placement` does the rest. ``primebench place`` (lmms-eval
``--log_samples`` output, or ``--vlmeval`` a VLMEvalKit work dir) is
:mod:`harness_adapters.run.place_command`.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_adapters.suites.released import find_manifest
from primebench_tasks.data.io import atomic_write_text
from primebench_tasks.errors import InputError
from primebench_tasks.place.defaults import (
    DEFAULT_ESTIMATOR,
    MIN_SCORED_ITEMS,
    N_BOOT,
    min_scored_items,
)
from primebench_tasks.place.figure import placement_figure
from primebench_tasks.place.report import (
    beyond_panel_warnings,
    conditions_markdown,
    misfit_warnings,
    report_markdown,
)
from primebench_tasks.place.result import Placement
from primebench_tasks.suite.manifest import SuiteManifest

if TYPE_CHECKING:
    import pandas as pd

    from primebench_tasks.data.panel import Panel


_LOADED: dict[tuple[str, str | None], dict[str, Panel]] = {}
"""The reference panels loaded in this process, by (suite version, the given panel's content
hash or None): a command checks them, asks from them and places on them, and loads them once."""


def reference_panels(manifest: SuiteManifest, panel: Panel | None = None) -> dict[str, Panel]:
    """benchmark → reference panel: the manifest's source panels (multi-source), ``panel``, or
    the embedded panel the suite was built from — loaded once per process and suite
    (:data:`_LOADED`; panels are read, never changed)."""
    key = (str(manifest["version"]), None if panel is None else panel.content_hash)
    if key not in _LOADED:
        _LOADED[key] = _load_reference_panels(manifest, panel)
    return dict(_LOADED[key])


def _load_reference_panels(manifest: SuiteManifest, panel: Panel | None) -> dict[str, Panel]:
    from primebench_tasks.data.defaults import default_names
    from primebench_tasks.data.panel import Panel

    if manifest["params"].get("multi_source"):
        from primebench_tasks.pipeline.multi_source import source_panels

        return source_panels(manifest)
    if panel is None:
        name = manifest.built_from.panel
        if name not in default_names():
            raise InputError(
                f"the suite was built from panel {name!r}, which is not embedded; "
                "pass it with --panel"
            )
        panel = Panel.load_default(name)
    if panel.content_hash != manifest.built_from.panel_hash:
        raise InputError(
            f"panel {panel.name} (hash {panel.content_hash}) is not the one the "
            f"suite was built from ({manifest.built_from.panel_hash})"
        )
    return {e.name: panel for e in manifest.benchmarks}


def missing_items(wide: pd.DataFrame) -> dict[str, Any]:
    """model → benchmark → ``{"missing": n, "of": items}`` for every (model, benchmark) of the
    (models × (benchmark, item_id)) score frame ``wide`` with a missing score."""
    missing: dict[str, Any] = {}
    for m in wide.index:
        for b in dict.fromkeys(wide.columns.get_level_values(0)):
            row = wide.loc[m, b]
            n = int(row.isna().sum())
            if n:
                missing.setdefault(str(m), {})[str(b)] = {"missing": n, "of": int(len(row))}
    return missing


def lmms_eval_excused(manifest: SuiteManifest) -> dict[str, str]:
    """Benchmark → why the suite's lmms-eval tasks (and the runner, which asks items through the
    same task code) do not run it."""

    return {
        b: why
        for by_b in manifest.item_ids().values()
        for b in by_b
        if (why := manifest.entry(b).no_lmms_eval_task)
    }


def score_frame(
    records: pd.DataFrame,
    manifest: SuiteManifest,
    allow_partial: bool = False,
    excused: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(models × (benchmark, item_id)) scores in suite order, and what is missing. A benchmark
    with no logged item is an error unless ``allow_partial``, or ``excused`` (benchmark → why the
    harness does not run it: the missing entry keeps the reason)."""
    import pandas as pd

    from primebench_tasks.pipeline.manifest import manifest_items

    # a design-only benchmark's answers are placed by its design (design_answers), not here
    every_model = records["model"]
    records = records[~records["benchmark"].isin([e.name for e in manifest.design_only])]
    cols = [
        (b, str(i))
        for by_b in manifest_items(manifest).values()
        for b, ids in by_b.items()
        for i in ids
    ]
    index = pd.MultiIndex.from_tuples(cols, names=["benchmark", "item_id"])
    score = pd.to_numeric(records["score"], errors="coerce")
    bad = records[score.notna() & ~score.between(0.0, 1.0)]
    bad = pd.concat([bad, records[score.isna() & records["score"].notna()]])
    if len(bad):  # out of range, infinite or not a number: never placed as if it were a score
        r = bad.iloc[0]
        raise InputError(
            f"model {r.model}, {r.benchmark} item {r.item_id}: score {r.score!r} is not a number "
            f"in [0, 1] ({len(bad)} such record(s))",
            field="score",
        )
    keys = ["model", "benchmark", "item_id"]
    clash = records.assign(_s=score).groupby(keys, sort=False)["_s"].nunique(dropna=False)
    if (clash > 1).any():  # two results for one item that disagree: refuse, never pick one
        m, b, i = clash[clash > 1].index[0]
        raise InputError(
            f"model {m}, {b} item {i}: the run holds conflicting scores for the same item "
            "(two runs in one folder?); place one run at a time",
            field="score",
        )
    extra = records[~records.set_index(["benchmark", "item_id"]).index.isin(index)]
    if len(extra):
        r = extra.iloc[0]
        raise InputError(
            f"the run logged item {r.item_id} of {r.benchmark}, which is not in the "
            "suite (tasks of another suite version in the same folder?)"
        )
    # every model of the run, also one whose every score is missing (pivot_table drops it)
    models = pd.Index(sorted(set(every_model.astype(str))), name="model")
    if models.empty:
        raise InputError("the run holds no record of any model: nothing to place")
    wide = (
        records.assign(model=records["model"].astype(str), score=score)
        .pivot_table(
            index="model", columns=["benchmark", "item_id"], values="score", aggfunc="first"
        )
        .reindex(index=models, columns=index)
    )
    missing = missing_items(wide)
    excused = excused or {}
    for m in wide.index:
        absent, few = [], []
        for b, v in missing.get(str(m), {}).items():
            scored = v["of"] - v["missing"]
            if scored:
                need = min_scored_items(v["of"])
                if scored < need:
                    v["why"] = f"{scored} scored, fewer than the {need} placed"
                    few.append(f"{b} ({scored} of {v['of']})")
                continue
            if b in excused:
                v["why"] = excused[b]
            else:
                absent.append(b)
        if absent and not allow_partial:
            raise InputError(
                f"model {m}: the run has no result for {', '.join(absent)} (its "
                "task failed or was not run; check the harness log, or pass "
                "--allow-partial)"
            )
        if few and not allow_partial:
            raise InputError(
                f"model {m}: too few items scored on {', '.join(few)} — a benchmark is placed "
                f"on at least {MIN_SCORED_ITEMS} scored items (or half of a smaller one's): "
                "fewer give an interval of no width and a rank of noise; finish the run, or "
                "pass --allow-partial to place the other benchmarks"
            )
    return wide, missing


def write_placement(
    records: pd.DataFrame,
    version: str,
    dest: str | Path,
    suite: str | Path | None = None,
    panel: Panel | None = None,
    estimator: str = DEFAULT_ESTIMATOR,
    n_boot: int = N_BOOT,
    seed: int = 0,
    allow_partial: bool = False,
    conditions: Mapping[str, Any] | None = None,
    lmms_eval_code: bool = False,
    leaderboard: Any = None,
) -> Placement:
    """Place every model of ``records`` (made with suite ``version``, under ``conditions``) and
    write the reports into ``dest``; returns the placement report.json was written from (with
    ``missing``).
    ``lmms_eval_code``: the run asked its items through lmms-eval's task code (lmms-eval, the
    vLLM runner), so the suite's benchmarks that it has no lmms-eval task for are not asked of
    it (``no_lmms_eval_task``: missing with the reason, not an error)."""
    from primebench_tasks.place.design_only import design_answers

    manifest = find_manifest(version, suite)
    design = design_answers(records, manifest)
    new, missing = score_frame(
        records, manifest, allow_partial, lmms_eval_excused(manifest) if lmms_eval_code else None
    )
    undrawn_design_only(manifest, list(new.index), design, missing)
    return write_report(
        manifest,
        new,
        missing,
        dest,
        panel,
        estimator,
        n_boot,
        seed,
        conditions=conditions,
        responses=run_responses(records),
        guessing=lmms_eval_code,
        leaderboard=leaderboard,
        design=design,
    )


def undrawn_design_only(
    manifest: SuiteManifest,
    models: Sequence[Any],
    design: Mapping[str, Any],
    missing: dict[str, Any],
    why: str | None = None,
) -> None:
    """Add to ``missing`` every design-only benchmark of ``manifest`` a model of the run did not
    draw (``design``: the run's :func:`~primebench_tasks.place.design_only.design_answers`),
    with ``why`` (default: another harness's run, which did not ask them) — said in the report,
    not an error."""
    from primebench_tasks.place.design_only import NOT_DRAWN_BY_THE_RUN

    for model in models:
        for e in manifest.design_only:
            if str(model) not in (design[e.name].scores if e.name in design else {}):
                missing.setdefault(str(model), {})[e.name] = {
                    "of": e.design.n,
                    "missing": e.design.n,
                    "why": why or NOT_DRAWN_BY_THE_RUN,
                }


RESPONSE_COLUMNS = ("response", "parsed", "parse_fallback", "finish_reason", "output_tokens")
"""The answer columns a run's records may carry beside the score (what the response check
reads; a run without them is placed on its scores alone)."""


def run_responses(records: pd.DataFrame) -> pd.DataFrame | None:
    """The rows of ``records`` with a response (model, benchmark, item_id, score and the
    :data:`RESPONSE_COLUMNS` it has), or None where the run kept no response."""
    if "response" not in records.columns:
        return None
    cols = ["model", "benchmark", "item_id", "score"]
    cols += [c for c in RESPONSE_COLUMNS if c in records.columns]
    return records.loc[records["response"].notna(), cols].reset_index(drop=True)


REPORT_FILES = ("report.json", "report.md", "placement.png")
"""What a placement writes into its folder, as a whole (:func:`write_report`)."""


def write_report(
    manifest: SuiteManifest,
    new: pd.DataFrame,
    missing: dict[str, Any],
    dest: str | Path,
    panel: Panel | None = None,
    estimator: str = DEFAULT_ESTIMATOR,
    n_boot: int = N_BOOT,
    seed: int = 0,
    notes: dict[str, list[str]] | None = None,
    conditions: Mapping[str, Any] | None = None,
    responses: pd.DataFrame | None = None,
    guessing: bool = False,
    leaderboard: Any = None,
    design: Mapping[str, Any] | None = None,
) -> Placement:
    """The one placement path of every harness (lmms-eval, VLMEvalKit, the vLLM runner, Ray, the
    training callback's runs): ``new`` (models × (benchmark, item_id)) placed on ``manifest``'s
    reference panels (:func:`reference_panels`) by
    :func:`~primebench_tasks.place.suite.place_on_suite`; writes ``report.json``
    (schema ``primebench.placement/1``), ``report.md`` and ``placement.png`` into ``dest``.
    ``notes``: model → lines the report shows under that model (e.g. an adapter applied in
    part); ``conditions``: what the run was made under (harness, backend, decoding, ...), kept
    as ``conditions`` beside each benchmark's reference runs (``reference``: panel, models,
    newest release date) so that a mismatch shows. ``design``: the run's answers to the suite's
    design-only benchmarks (:func:`~primebench_tasks.place.design_only.design_answers`)."""
    from primebench_tasks.place.suite import place_on_suite

    panels = reference_panels(manifest, panel)
    doc = place_on_suite(
        manifest, panels, new, estimator, n_boot, seed, responses, guessing, leaderboard, design
    )
    for model, lines in (notes or {}).items():
        if model in doc.models:
            doc.models[model].notes = list(lines)
    doc.missing = missing
    return write_placement_files(doc, panels, dest, conditions)


def write_placement_files(
    doc: Placement,
    panels: Mapping[str, Panel],
    dest: str | Path,
    conditions: Mapping[str, Any] | None = None,
) -> Placement:
    """``report.json``, ``report.md`` and ``placement.png`` of the placement ``doc`` (its
    benchmarks on ``panels``) into ``dest``, as a whole; ``conditions``: what the run was made
    under, kept beside each benchmark's reference runs. Every placement — a static run's
    (:func:`write_report`) or an adaptive run's — is written here."""
    doc.conditions = dict(conditions or {})
    for b, ref in doc.reference.items():
        ref.update(reference_conditions(panels[b]))
    out = Path(dest)
    out.mkdir(parents=True, exist_ok=True)
    beyond = beyond_panel_warnings(doc)
    # the three files are written as a whole: staged beside their places, then each renamed
    # in (a full disk or a failing figure leaves the folder as it was, never a report.json
    # without its report.md)
    stage = Path(tempfile.mkdtemp(prefix=".report.", dir=out))
    try:
        doc.write(stage / "report.json")
        atomic_write_text(
            stage / "report.md",
            report_markdown(doc)
            + "\n".join(conditions_markdown(doc))
            + "".join(f"\n- warning: {line}" for line in beyond)
            + ("\n" if beyond else ""),
        )
        placement_figure(doc, panels, stage / "placement.png")
        for name in REPORT_FILES:
            os.replace(stage / name, out / name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    for line in misfit_warnings(doc) + beyond:
        print(f"[primebench] warning: {line}", file=sys.stderr, flush=True)
    return doc


def reference_conditions(panel: Panel) -> dict[str, Any]:
    """What is known of the reference panel's runs: its models, what it is (the embedded data
    set's description, '' for a user's panel), and the newest release date among its dated
    models (the panel's own dates, else the shipped table:
    :mod:`primebench_tasks.data.model_dates`; None where none is dated)."""
    from primebench_tasks.data.defaults import embedded_description
    from primebench_tasks.data.model_dates import newest_release

    newest, dated = newest_release(panel)
    return {
        "models": len(panel.model_names),
        "source": embedded_description(panel.name),
        "newest_release": newest,
        "dated_models": dated,
    }
