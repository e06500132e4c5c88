"""``adaptive.md``: an adaptive run's own record (:class:`~.result.AdaptiveRun`: the tests'
draws, guard, why each stopped) as a page. The run's placement — suite score, categories, ranks —
is ``report.md``, written by the placement every run shares."""

from __future__ import annotations

import json

import pandas as pd

from primebench_tasks.adaptive.result import AdaptiveRun
from primebench_tasks.place.report import fit_cell
from primebench_tasks.report.tables import markdown_table


def shown_score(v: float | None) -> str:
    """A score as a report shows it: clipped to [0, 1] (a design estimate's raw value can fall
    outside — a Horvitz–Thompson sum is unbiased, not bounded —; adaptive.json keeps it raw)."""
    return "—" if v is None else f"{min(1.0, max(0.0, v)):.3f}"


def adaptive_markdown(doc: AdaptiveRun) -> str:
    """``adaptive.md``: the run's settings, then per variant a table of its tests and the
    lines of its guard, misfit, answer checks and failed items."""
    s = doc.settings
    target = "none" if s.target_width is None else f"{s.target_width:g}"
    level = round(100 * s.level)
    lines = [
        f"# {doc.suite_name} ({doc.suite}): adaptive evaluation",
        "",
        f"Items asked per model in rounds of {s.round_size} per benchmark, drawn at random "
        "with known probabilities that favour the items that tell the most about it (policy "
        f"`{doc.policy.label}`"
        + (
            f"; share {g.uniform_share:g} uniform, guard k = {g.k:g}"
            if (g := doc.guard) is not None
            else ""
        )
        + "). The item model's prediction is guarded by the draws' design-unbiased estimate: "
        "never further from it than k design standard errors, so a model unlike the reference "
        f"panel is not placed by the item model alone. A test stops when its "
        f"{level} % interval is narrower than {target} or after "
        f"{s.max_items} items. Predicted full scores and ranks with {level} %"
        " intervals (the item model's, calibrated on the reference panel, holding the design "
        "estimate).",
        "",
    ]
    cond = doc.conditions
    if cond:
        lines += [
            "Run conditions: "
            + "; ".join(
                f"{k}: {v if isinstance(v, str) else json.dumps(v, sort_keys=True)}"
                for k, v in cond.items()
            ),
            "",
        ]
    fmt = lambda x: "—" if x is None else f"{x:.3f}"  # noqa: E731
    for model, r in doc.models.items():
        rows = []
        for b, e in r.benchmarks.items():
            pf, rk = e.predicted_full, e.predicted_rank
            lost = e.failed.items
            rows.append(
                {
                    "benchmark": b,
                    "items": f"{e.items} of {e.pool}" + (f" ({lost} failed)" if lost else ""),
                    "stopped because": e.stopped_because,
                    "score on items": fmt(e.score_on_items_asked),
                    "predicted full": "— (no item scored)"
                    if pf.value is None
                    else f"{fmt(pf.value)} [{fmt(pf.lo)}, {fmt(pf.hi)}]",
                    "predicted rank": "— (no item scored)"
                    if rk is None
                    else f"{rk.value} [{rk.lo}, {rk.hi}] of {rk.out_of}"
                    + (" (above all reference models)" if e.above_all_reference else ""),
                    "fit": fit_cell(e.misfit),
                }
            )
        mean = r.mean_predicted_full
        failures = [f"- {b}: {e.failed.why}" for b, e in r.benchmarks.items() if e.failed.items]
        lines += [
            f"## {model}",
            "",
            f"{r.items} items scored; mean predicted full score over the benchmarks: "
            + ("—" if mean is None else f"{mean:.3f}"),
            "",
            markdown_table(pd.DataFrame(rows)),
            *[
                f"- **guard**: on {b} the item model ({fmt(d.model_predicted)}) and "
                f"the design estimate ({shown_score(d.estimate)} ± {fmt(d.se)}) "
                "disagree beyond the design's noise: the model is unlike the reference panel, "
                "and its score is the design's, moved toward the item model by at most k SE"
                for b, e in r.benchmarks.items()
                if (d := e.design) is not None and d.guard_moved
            ],
            *[f"- **misfit**: {line}" for line in r.misfit],
            *[f"- **answers**: {line}" for line in r.answers],
            *(
                ["Items that failed (not scored; a rerun of the same command asks them again):"]
                + failures
                + [""]
                if failures
                else []
            ),
        ]
    return "\n".join(lines)
