"""The placement report for people: ``report.md``'s text (per model the suite, its categories
and benchmarks with 95 % intervals, fit, leaderboard standing, missing items; the run's and the
reference runs' conditions), the warnings every harness prints on stderr, and a one-row-per-model
summary table — all read from the typed :class:`~primebench_tasks.place.result.Placement`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from primebench_tasks.place.result import (
    BenchmarkPlacement,
    Estimate,
    ModelPlacement,
    Placement,
    Rank,
    SuitePlacement,
)

if TYPE_CHECKING:
    import pandas as pd

    from primebench_tasks.place.misfit import PersonFit


def _fmt(v: Estimate | Mapping[str, Any] | None, digits: int = 3) -> str:
    if isinstance(v, Mapping):  # an open record's estimate (rank_basis, leaderboard)
        v = Rank.from_json(v) if "out_of" in v else Estimate.from_json(v)
    if v is None or v.value is None:
        return "—"
    if isinstance(v, Rank):
        return f"{v.value:.0f} [{v.lo:.0f}, {v.hi:.0f}] of {v.out_of}"
    return f"{v.value:.{digits}f} [{v.lo:.{digits}f}, {v.hi:.{digits}f}]"


def suite_rank_text(suite: SuitePlacement) -> str:
    """The report's words for a suite rank: the rank, and where it was ranked on imputed
    reference scores, on which benchmarks, among how many models, with how much imputed."""
    rank = suite.predicted_rank
    if rank is None:
        return str(suite.no_rank_because)
    basis = suite.rank_basis or {}
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


def suite_standing_text(suite: SuitePlacement) -> str:
    """The suite rank as the report heads it: :func:`suite_rank_text`, or — where the answers
    together are at chance level, or not comparable on a benchmark — **no standing**, why,
    and the rank the numbers give."""
    why = suite.chance or (
        f"not comparable on {', '.join(suite.not_comparable)}" if suite.not_comparable else None
    )
    if why is None or suite.predicted_rank is None:
        return suite_rank_text(suite)
    return f"**no standing**: {why} (the numbers give {suite_rank_text(suite)})"


def fit_cell(fit: PersonFit | None) -> str:
    """A report cell for a person fit: "p = 0.42", "**misfit** (p = 0.008)", or "—" with why
    it was not judged."""
    if fit is None:
        return "—"
    if fit.p_value is None:
        return f"— ({fit.why_not})"
    p = f"p = {fit.p_value:.3f}"
    if not fit.flagged:
        return p
    sig = fit.signature
    return f"**misfit** ({sig}, {p})" if sig and sig != "pattern" else f"**misfit** ({p})"


def misfit_warnings(doc: Placement) -> list[str]:
    """ "<model>: <line>" for every flagged benchmark of a placement report — what every
    harness's placement says on stderr."""
    return [
        f"{m}: {line}"
        for m, r in doc.models.items()
        for line in (*r.suite.misfit, *r.suite.answers)
    ]


def beyond_panel_warnings(doc: Placement) -> list[str]:
    """ "<model>: <benchmark>: predicted above every one of its N reference models ..." for each
    benchmark whose predicted rank is 1: the placement extrapolates beyond the panel (its
    newest model named, so that a reader sees how old the reference is)."""
    out = []
    for m, r in doc.models.items():
        for b, e in r.benchmarks.items():
            rank = e.predicted_rank.value
            top = e.regime == "top"
            if rank != 1 and not top:
                continue
            ref = doc.reference.get(b, {})
            newest = ref.get("newest_release")
            where = (
                f"predicted above every one of its {e.n_reference} reference models"
                if rank == 1
                else f"predicted at the top of its {e.n_reference} reference models"
            ) + (f" (newest released {newest})" if newest else "")
            if e.interval_from == "design":
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


def _ranks(lb: Mapping[str, Any]) -> str:
    """ "rank 57 of 285 [40, 80]; of its year: 30 of 92 [21, 44]"."""
    r = lb["rank"]
    text = f"rank {r['value']:.0f} of {r['out_of']} [{r['lo']:.0f}, {r['hi']:.0f}]"
    y = lb.get("recent_rank")
    if y is not None:
        text += (
            f"; among its year's {y['out_of'] - 1}: {y['value']:.0f} [{y['lo']:.0f}, {y['hi']:.0f}]"
        )
    return text


def leaderboard_lines(r: ModelPlacement) -> list[str]:
    """The report's leaderboard lines for one model (near the top: the snapshot, how new, whose
    figures; the suite's rank, then each benchmark's, among all its models and those of its own
    year; another harness's benchmark with its caveat)."""
    boards = {b: e.leaderboard for b, e in r.benchmarks.items() if e.leaderboard}
    boards.update({b: e.leaderboard for b, e in r.design_only.items() if e.leaderboard})
    if not boards:
        return []
    lb = next(iter(boards.values()))
    out = [
        f"- **leaderboard** `{lb['source']}` (VLMEvalKit's figures; newest model released "
        f'{lb.get("newest_release") or "unknown"}, "its year" = those released in the '
        f"{lb['recent_days']} days before; approximate: its figures let a judge read answers "
        "the rules cannot; a newer snapshot: `panel import-leaderboard`, `place --leaderboard`):"
    ]
    if r.suite.leaderboard:
        s = r.suite.leaderboard
        out.append(
            f"  - suite, on its {len(s['benchmarks'])} benchmarks the leaderboard has "
            f"({', '.join(s['benchmarks'])}; mean of their predicted full scores, "
            f"{s['models']} models report all): {_ranks(s)}"
        )
    for b, e in boards.items():
        caveat = f" — scored by {e['harness']}: {e['caveat']}" if e.get("harness") else ""
        out.append(f"  - {b} (`{e['column']}`, {e['models']} models): {_ranks(e)}{caveat}")
    return out


def design_only_lines(r: ModelPlacement) -> list[str]:
    """The report's table of the model's design-only benchmarks (#72): each full score as its
    design estimates it from the drawn items, with its 95 % and 90 % intervals (the random
    floor: no item panel assists it), its strata and the pool it was drawn from."""
    if not r.design_only:
        return []
    out = [
        "",
        "Design-only benchmarks (no item-level reference runs: each full score is the stratified "
        "estimate of its drawn items, its interval the design's — about ±0.07 at 100 items; "
        "outside the suite score and its reference ranks; their leaderboard rank, where the "
        "leaderboard has them, is above):",
        "",
        "| benchmark | items | predicted full (95 %) | 90 % interval | strata (N_h/n_h) | pool |",
        "|---|---|---|---|---|---|",
    ]
    for b, e in r.design_only.items():
        full = _fmt(e.predicted_full) if e.no_estimate_because is None else e.no_estimate_because
        i90 = e.interval_90
        band = "—" if i90.lo is None or i90.hi is None else f"[{i90.lo:.3f}, {i90.hi:.3f}]"
        strata = ", ".join(f"{h} {N}/{n}" for h, (N, n) in e.strata.items())
        sizes = {"pin": " (pinned)", "log": " (sizes as logged)"}.get(e.pool_sizes_from or "", "")
        out.append(
            f"| {b} | {e.n_scored}/{e.n_items} | {full} | {band} | {strata} | `{e.pool}`{sizes} |"
        )
    if any(e.pool_sizes_from == "log" for e in r.design_only.values()):
        out += [
            "",
            'A pool "as logged": the suite pins no pool for it, so its interval rests on the '
            "pool sizes N_h the run's log gives (pin the suite to your dataset: `primebench pin "
            "lmms-eval`, and an edited log is refused).",
        ]
    return out


def few_reference_lines(r: ModelPlacement) -> list[str]:
    """A note where a benchmark's reference panel holds fewer than
    :data:`~primebench_tasks.place.defaults.MIN_RANK_MODELS` models: its rank (and the misfit
    check, which needs such a panel) rests on few models."""
    from primebench_tasks.place.defaults import MIN_RANK_MODELS

    few = {b: e for b, e in r.benchmarks.items() if e.n_reference < MIN_RANK_MODELS}
    if not few:
        return []

    def spread(e: BenchmarkPlacement) -> str:
        lo_hi = e.reference_range
        return f", scoring {lo_hi[0]:.2f}–{lo_hi[1]:.2f}" if lo_hi else ""

    where = ", ".join(f"{b} ({e.n_reference} models{spread(e)})" for b, e in few.items())
    return [
        f"- **few reference models** on {where}, fewer than {MIN_RANK_MODELS}: a rank among so "
        "few says little, whatever its interval; add reference runs (primebench ingest, panel "
        "import) for ranks to trust"
    ]


def rank_cell(rank: Rank | None, at_chance: bool, otherwise: str | None = None) -> str:
    """A rank as the report shows it: marked where the score is at chance level (no
    standing)."""
    if rank is None:
        return str(otherwise)
    return f"{_fmt(rank)} (at chance: no standing)" if at_chance else _fmt(rank)


def report_markdown(doc: Placement) -> str:
    """``report.md``'s placement part: per model the suite, its categories and benchmarks, with
    their intervals, fit, leaderboard standing and missing items."""
    missing = doc.missing or {}
    lines = [
        f"# {doc.suite_name} ({doc.suite}): placement",
        "",
        "Values with 95 % intervals (scores on the suite items: a bootstrap over the items, "
        f"{doc.n_boot} resamples; predicted full scores, estimator `{doc.estimator}`: "
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
    for model, r in doc.models.items():
        s = r.suite
        lines += [
            f"## {model}",
            "",
            f"- suite score: {_fmt(s.score)} ({s.n_scored} of {s.n_items} items scored)",
            f"- predicted full-suite score: {_fmt(s.predicted_full)}",
            f"- predicted rank on the full suite: {suite_standing_text(s)}",
            *leaderboard_lines(r),
            *[f"- beyond the reference panel: {line}" for line in s.beyond_reference],
            *[f"- note: {line}" for line in r.notes or []],
            *[f"- **misfit**: {line}" for line in s.misfit],
            *[f"- **answers**: {line}" for line in s.answers],
            *(
                [
                    f"- **not comparable** on {', '.join(s.not_comparable)}: its scores there "
                    "do not measure the model (the answers line says why); its ranks there are "
                    "no comparison"
                ]
                if s.not_comparable
                else []
            ),
            *[
                f"- **at chance level** on {b}: {chance}"
                for b in s.at_chance
                if (check := r.benchmarks[b].responses) is not None and (chance := check.chance)
            ],
            *few_reference_lines(r),
            "",
            "| category | score | predicted full | predicted rank |",
            "|---|---|---|---|",
        ]
        for c, ce in r.categories.items():
            at_chance = any(r.benchmarks[b].at_chance for b in ce.benchmarks if b in r.benchmarks)
            rank = rank_cell(ce.predicted_rank, at_chance, ce.no_rank_because)
            lines.append(f"| {c} | {_fmt(ce.score)} | {_fmt(ce.predicted_full)} | {rank} |")
        lines += [
            "",
            "| benchmark | reference | items | score | predicted full | predicted rank | fit |",
            "|---|---|---|---|---|---|---|",
        ]
        for b, e in r.benchmarks.items():
            lines.append(
                f"| {b} | {e.source} ({e.n_reference} models) | "
                f"{e.n_scored}/{e.n_items} | {_fmt(e.score)} | "
                f"{_fmt(e.predicted_full)} | {rank_cell(e.predicted_rank, e.at_chance)} | "
                f"{fit_cell(e.misfit)} |"
            )
        lines += design_only_lines(r)
        if missing.get(model):
            lines += [
                "",
                "Missing items: "
                + "; ".join(
                    f"{b}: {v['missing']} of {v['of']}" + (f" ({v['why']})" if v.get("why") else "")
                    for b, v in missing[model].items()
                ),
            ]
        lines.append("")
    return "\n".join(lines)


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


def conditions_markdown(doc: Placement) -> list[str]:
    """The report's "Run conditions" lines: this run's, then each benchmark's reference runs."""
    cond = doc.conditions or {}
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
    for b, ref in doc.reference.items():
        lines.append(f"- {provenance_line(b, ref)}")
    return [*lines, ""]


_NONE = Estimate(None, None, None)
"""An estimate that does not exist (a suite with no rank), for the summary's NaN cells."""


def suite_summary(doc: Placement) -> pd.DataFrame:
    """One row per placed model from a placement report: items, suite score, predicted full-suite
    score and rank with their 95 % intervals (NaN where the suite has no rank)."""
    import pandas as pd

    rows = {}
    for model, r in doc.models.items():
        s = r.suite
        row: dict[str, Any] = {"n_items": s.n_items, "n_scored": s.n_scored}
        for v, name in (
            (s.score, "suite_score"),
            (s.predicted_full, "predicted_full"),
            (s.predicted_rank or _NONE, "predicted_rank"),
        ):
            for x, suffix in ((v.value, ""), (v.lo, "_lo"), (v.hi, "_hi")):
                row[name + suffix] = float("nan") if x is None else float(x)
        rows[model] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "model"
    return out
