"""Placement of a harness run on a PRIMEBench suite, whatever the harness: the suite manifest of
a version, the reference panels, the (model × item) score frame with what is missing, and the
report (``report.json`` schema ``primebench.placement/1``, ``report.md``, ``placement.png``).

The harness adapters read their own output into records (``model, benchmark, item_id, score``)
and a suite version; :func:`write_placement` does the rest. ``primebench place`` (lmms-eval
``--log_samples`` output, or ``--vlmeval`` a VLMEvalKit work dir) is
:mod:`harness_adapters.place_command`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_adapters.released import find_manifest
from primebench_tasks.data.io import atomic_write_text, canonical_json
from primebench_tasks.errors import InputError
from primebench_tasks.evaluate.defaults import (
    DEFAULT_ESTIMATOR,
    MIN_SCORED_ITEMS,
    N_BOOT,
    min_scored_items,
)
from primebench_tasks.suite.manifest import as_suite

if TYPE_CHECKING:
    import pandas as pd

    from primebench_tasks.data.panel import Panel


def reference_panels(manifest: Mapping[str, Any], panel: Panel | None = None) -> dict[str, Panel]:
    """benchmark → reference panel: the manifest's source panels (multi-source), ``panel``, or
    the embedded panel the suite was built from."""
    from primebench_tasks.data.defaults import default_names
    from primebench_tasks.data.panel import Panel

    suite = as_suite(manifest)
    if suite["params"].get("multi_source"):
        from primebench_tasks.pipeline.multi_source import source_panels

        return source_panels(suite)
    if panel is None:
        name = suite.built_from.panel
        if name not in default_names():
            raise InputError(
                f"the suite was built from panel {name!r}, which is not embedded; "
                "pass it with --panel"
            )
        panel = Panel.load_default(name)
    if panel.content_hash != suite.built_from.panel_hash:
        raise InputError(
            f"panel {panel.name} (hash {panel.content_hash}) is not the one the "
            f"suite was built from ({suite.built_from.panel_hash})"
        )
    return {e.name: panel for e in suite.benchmarks}


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


def lmms_eval_excused(manifest: Mapping[str, Any]) -> dict[str, str]:
    """Benchmark → why the suite's lmms-eval tasks (and the runner, which asks items through the
    same task code) do not run it."""
    from primebench_tasks.suite.manifest import as_suite

    suite = as_suite(manifest)
    return {
        b: why
        for by_b in suite.item_ids().values()
        for b in by_b
        if (why := suite.entry(b).no_lmms_eval_task)
    }


def score_frame(
    records: pd.DataFrame,
    manifest: Mapping[str, Any],
    allow_partial: bool = False,
    excused: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(models × (benchmark, item_id)) scores in suite order, and what is missing. A benchmark
    with no logged item is an error unless ``allow_partial``, or ``excused`` (benchmark → why the
    harness does not run it: the missing entry keeps the reason)."""
    import pandas as pd

    from primebench_tasks.pipeline.manifest import manifest_items

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
    models = pd.Index(sorted(set(records["model"].astype(str))), name="model")
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


def _fmt(v: dict[str, Any] | None, digits: int = 3) -> str:
    if v is None or v.get("value") is None:
        return "—"
    if "out_of" in v:
        return f"{v['value']:.0f} [{v['lo']:.0f}, {v['hi']:.0f}] of {v['out_of']}"
    return f"{v['value']:.{digits}f} [{v['lo']:.{digits}f}, {v['hi']:.{digits}f}]"


def suite_rank_text(suite: dict[str, Any]) -> str:
    """The report's words for a suite rank: the rank, and where it was ranked on imputed
    reference scores, on which benchmarks, among how many models, with how much imputed."""
    rank = suite.get("predicted_rank")
    if not rank:
        return str(suite["no_rank_because"])
    basis = suite.get("rank_basis") or {}
    if not basis.get("imputed_cells"):
        return _fmt(rank)
    errors = [v["mae"] for v in basis["imputation"].values()]
    text = (
        f"{_fmt(rank)} on {', '.join(basis['benchmarks'])} (predicted "
        f"{_fmt(basis['predicted_full'])} on them) among {basis['n_reference']} reference "
        f"models: {basis['n_complete']} have all of them; {basis['imputed_cells']} of "
        f"{basis['cells']} scores imputed from the models' other scores and "
        f"{basis['covariates']}, cross-validated error {min(errors):.3f}–{max(errors):.3f}, "
        "carried into the interval"
    )
    left = [f"{b} — {why}" for b, why in basis.get("left_out", {}).items()]
    left += [f"{b} — not scored in this run" for b in basis.get("not_scored", [])]
    return text + (f". Not in the rank: {'; '.join(left)}" if left else "")


def fit_cell(fit: dict[str, Any] | None) -> str:
    """A report cell for a person fit (``PersonFit.as_dict``): "p = 0.42", "**misfit** (p =
    0.008)", or "—" with why it was not judged."""
    if not fit:
        return "—"
    if fit.get("p_value") is None:
        return f"— ({fit.get('why_not')})"
    p = f"p = {fit['p_value']:.3f}"
    if not fit.get("flagged"):
        return p
    sig = fit.get("signature")
    return f"**misfit** ({sig}, {p})" if sig and sig != "pattern" else f"**misfit** ({p})"


def misfit_warnings(doc: dict[str, Any]) -> list[str]:
    """ "<model>: <line>" for every flagged benchmark of a placement report — what every
    harness's placement says on stderr."""
    return [
        f"{m}: {line}" for m, r in doc["models"].items() for line in r["suite"].get("misfit", [])
    ]


def beyond_panel_warnings(doc: dict[str, Any]) -> list[str]:
    """ "<model>: <benchmark>: predicted above every one of its N reference models ..." for each
    benchmark whose predicted rank is 1: the placement extrapolates beyond the panel (its
    newest model named, so that a reader sees how old the reference is)."""
    out = []
    for m, r in doc["models"].items():
        for b, e in r.get("benchmarks", {}).items():
            rank = (e.get("predicted_rank") or {}).get("value")
            top = e.get("regime") == "top"
            if rank != 1 and not top:
                continue
            ref = doc.get("reference", {}).get(b, {})
            newest = ref.get("newest_release")
            where = (
                f"predicted above every one of its {e.get('n_reference', '?')} reference models"
                if rank == 1
                else f"predicted at the top of its {e.get('n_reference', '?')} reference models"
            ) + (f" (newest released {newest})" if newest else "")
            if e.get("interval_from") == "design":
                out.append(
                    f"{m}: {b}: {where}: the estimate rests on the drawn items (a probability "
                    "design: unbiased however unlike the reference models the model is), its "
                    "interval is the design's"
                )
            elif rank == 1:
                out.append(f"{m}: {b}: {where}: the placement extrapolates beyond the panel")
            else:
                out.append(
                    f"{m}: {b}: {where}: the item model's prediction there is least sure; the "
                    "interval is the top's held-out errors"
                )
    return out


def report_markdown(doc: dict[str, Any], missing: dict[str, Any]) -> str:
    lines = [
        f"# {doc['suite_name']} ({doc['suite']}): placement",
        "",
        "Values with 95 % intervals (scores on the suite items: a bootstrap over the items, "
        f"{doc['n_boot']} resamples; predicted full scores, estimator `{doc['estimator']}`: "
        "the design interval where the suite's items were drawn with known probabilities, "
        "else the reference models' held-out errors). Ranks: 1 = best, among the "
        "reference models of each benchmark's source panel plus this model."
        " Fit: how well the answers fit the reference models' item model (person fit lz* and, "
        "where the items have text, a residual along the questions' length; its p-value among "
        "held-out reference models; **misfit** at or below the level, with the signature that "
        "flagged it) — a flagged placement keeps its numbers but was not made like the "
        "reference runs.",
        "",
    ]
    for model, r in doc["models"].items():
        s = r["suite"]
        lines += [
            f"## {model}",
            "",
            f"- suite score: {_fmt(s['score'])} ({s['n_scored']} of {s['n_items']} items scored)",
            f"- predicted full-suite score: {_fmt(s['predicted_full'])}",
            f"- predicted rank on the full suite: {suite_rank_text(s)}",
            *[
                f"- beyond the reference panel: {line} (interval from placements that were "
                "beyond their panel)"
                for line in s.get("beyond_reference", [])
            ],
            *[f"- note: {line}" for line in r.get("notes", [])],
            *[f"- **misfit**: {line}" for line in s.get("misfit", [])],
            "",
            "| category | score | predicted full | predicted rank |",
            "|---|---|---|---|",
        ]
        for c, e in r["categories"].items():
            rank = _fmt(e["predicted_rank"]) if e["predicted_rank"] else e["no_rank_because"]
            lines.append(f"| {c} | {_fmt(e['score'])} | {_fmt(e['predicted_full'])} | {rank} |")
        lines += [
            "",
            "| benchmark | reference | items | score | predicted full | predicted rank | fit |",
            "|---|---|---|---|---|---|---|",
        ]
        for b, e in r["benchmarks"].items():
            lines.append(
                f"| {b} | {e['source']} ({e['n_reference']} models) | "
                f"{e['n_scored']}/{e['n_items']} | {_fmt(e['score'])} | "
                f"{_fmt(e['predicted_full'])} | {_fmt(e['predicted_rank'])} | "
                f"{fit_cell(e.get('misfit'))} |"
            )
        standing = [
            f"{b} {_fmt(e['leaderboard']['rank'])}"
            for b, e in r["benchmarks"].items()
            if e.get("leaderboard")
        ]
        if standing:
            lb = next(e["leaderboard"] for e in r["benchmarks"].values() if e.get("leaderboard"))
            lines += [
                "",
                f"Where the predicted full score would stand on the OpenVLM leaderboard "
                f"(`{lb['source']}`, {lb['models']} VLMs; its figures let a judge read answers "
                "the rules cannot, so this is approximate): " + "; ".join(standing) + ".",
            ]
        if missing.get(model):
            lines += [
                "",
                "Missing items: "
                + "; ".join(f"{b}: {v['missing']} of {v['of']}" for b, v in missing[model].items()),
            ]
        lines.append("")
    return "\n".join(lines)


def placement_figure(doc: dict[str, Any], panels: dict[str, Panel], path: Path) -> Path:
    """One panel per benchmark: the reference models' full benchmark scores by rank, and each
    placed model at its predicted rank and predicted full score with 95 % intervals."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from primebench_tasks.metrics import nanmean_rows

    benches = list(next(iter(doc["models"].values()))["benchmarks"])
    fig, axes = plt.subplots(1, len(benches), figsize=(3.2 * len(benches), 3.4), squeeze=False)
    for ax, b in zip(axes[0], benches, strict=True):
        ref = np.sort(nanmean_rows(panels[b].matrix(b)))[::-1]
        ref = ref[np.isfinite(ref)]
        ax.scatter(
            np.arange(1, len(ref) + 1),
            ref,
            s=10,
            color="#999999",
            label=f"reference ({panels[b].name})",
        )
        for k, (model, r) in enumerate(doc["models"].items()):
            e = r["benchmarks"][b]
            t, rk = e["predicted_full"], e["predicted_rank"]
            if t["value"] is None:
                continue
            ax.errorbar(
                rk["value"],
                t["value"],
                xerr=[[rk["value"] - rk["lo"]], [rk["hi"] - rk["value"]]],
                yerr=[[t["value"] - t["lo"]], [t["hi"] - t["value"]]],
                fmt="o",
                color=f"C{k % 10}",
                capsize=3,
                label=model,
            )
        ax.set_title(b, fontsize=9)
        ax.set_xlabel("rank (1 = best)")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("full benchmark score (predicted for the run)")
    fig.suptitle(f"{doc['suite_name']}: predicted full scores and ranks per benchmark", fontsize=10)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    try:
        fig.savefig(tmp, dpi=120)
        tmp.replace(path)
    finally:  # a full disk leaves no half-written figure behind
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    return path


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
) -> dict[str, Any]:
    """Place every model of ``records`` (made with suite ``version``, under ``conditions``) and
    write the reports into ``dest``; returns report.json's content (with ``missing``).
    ``lmms_eval_code``: the run asked its items through lmms-eval's task code (lmms-eval, the
    vLLM runner), so the suite's benchmarks that it has no lmms-eval task for are not asked of
    it (``no_lmms_eval_task``: missing with the reason, not an error)."""
    manifest = find_manifest(version, suite)
    new, missing = score_frame(
        records, manifest, allow_partial, lmms_eval_excused(manifest) if lmms_eval_code else None
    )
    return write_report(
        manifest, new, missing, dest, panel, estimator, n_boot, seed, conditions=conditions
    )


def write_report(
    manifest: Mapping[str, Any],
    new: pd.DataFrame,
    missing: dict[str, Any],
    dest: str | Path,
    panel: Panel | None = None,
    estimator: str = DEFAULT_ESTIMATOR,
    n_boot: int = N_BOOT,
    seed: int = 0,
    notes: dict[str, list[str]] | None = None,
    conditions: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The one placement path of every harness (lmms-eval, VLMEvalKit, the vLLM runner, Ray, the
    training callback's runs): ``new`` (models × (benchmark, item_id)) placed on ``manifest``'s
    reference panels (:func:`reference_panels`) by
    :func:`~primebench_tasks.evaluate.suite_placement.place_on_suite`; writes ``report.json``
    (schema ``primebench.placement/1``), ``report.md`` and ``placement.png`` into ``dest``.
    ``notes``: model → lines the report shows under that model (e.g. an adapter applied in
    part); ``conditions``: what the run was made under (harness, backend, decoding, ...), kept
    as ``conditions`` beside each benchmark's reference runs (``reference``: panel, models,
    newest release date) so that a mismatch shows."""
    from primebench_tasks.evaluate.suite_placement import place_on_suite

    panels = reference_panels(manifest, panel)
    doc = place_on_suite(manifest, panels, new, estimator, n_boot, seed)
    for model, lines in (notes or {}).items():
        if model in doc["models"]:
            doc["models"][model]["notes"] = list(lines)
    doc["missing"] = missing
    doc["conditions"] = dict(conditions or {})
    for b, ref in doc["reference"].items():
        ref.update(reference_conditions(panels[b]))
    out = Path(dest)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "report.json", canonical_json(json.loads(json.dumps(doc))))
    beyond = beyond_panel_warnings(doc)
    atomic_write_text(
        out / "report.md",
        report_markdown(doc, missing)
        + "\n".join(conditions_markdown(doc))
        + "".join(f"\n- warning: {line}" for line in beyond)
        + ("\n" if beyond else ""),
    )
    placement_figure(doc, panels, out / "placement.png")
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


def provenance_line(b: str, ref: Mapping[str, Any]) -> str:
    """ "OCRBench: placed among 188 models of panel `openvlm_ocrbench` (...), newest released
    2025-01 (118 dated)"."""
    src = f" ({ref['source']})" if ref.get("source") else ""
    when = (
        f", newest released {ref['newest_release']} ({ref.get('dated_models', '?')} dated)"
        if ref.get("newest_release")
        else ", no release date known"
    )
    return f"{b}: placed among {ref.get('models', '?')} models of panel `{ref['panel']}`{src}{when}"


def conditions_markdown(doc: Mapping[str, Any]) -> list[str]:
    """The report's "Run conditions" lines: this run's, then each benchmark's reference runs."""
    cond = doc.get("conditions") or {}
    lines = ["## Run conditions", ""]
    if cond:
        for k, v in cond.items():
            shown = (
                json.dumps(v, ensure_ascii=False, sort_keys=True) if not isinstance(v, str) else v
            )
            lines.append(f"- {k}: {shown}")
    else:
        lines.append("- not recorded by the harness")
    lines += ["", "Reference runs (placed among):", ""]
    for b, ref in doc.get("reference", {}).items():
        lines.append(f"- {provenance_line(b, ref)}")
    return [*lines, ""]


def suite_summary(doc: dict[str, Any]) -> pd.DataFrame:
    """One row per placed model from a placement report: items, suite score, predicted full-suite
    score and rank with their 95 % intervals (NaN where the suite has no rank)."""
    import pandas as pd

    rows = {}
    for model, r in doc["models"].items():
        s = r["suite"]
        row: dict[str, Any] = {"n_items": s["n_items"], "n_scored": s["n_scored"]}
        for key, name in (
            ("score", "suite_score"),
            ("predicted_full", "predicted_full"),
            ("predicted_rank", "predicted_rank"),
        ):
            v = s.get(key) or {}
            for part, suffix in (("value", ""), ("lo", "_lo"), ("hi", "_hi")):
                x = v.get(part)
                row[name + suffix] = float("nan") if x is None else float(x)
        rows[model] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "model"
    return out
