"""``primebench prism score``: grade the runs' responses, then the leaderboard, the sc bounds,
PScore, effective weights, leave-one-axis-out ρ, the paired-bootstrap separation and the
cross-judge audit.

Outputs in ``OUT``: ``graded.csv`` (one row per (model, axis, item): score or empty when
unanswered, the grader), ``leaderboard.csv/.md`` (Table 2 layout), ``sc.csv`` (sc_B, sc_A, sc_corr,
sc_reach), ``models.csv`` (PScore 95 % CI and rank CI), ``separation.csv`` (pairwise p, BH),
``effective_weights.csv``, ``loao.csv``, ``exclusions.csv`` (per axis: artifacts built /
rejected / unbuilt / failed / human-rejected, answered items per model), ``audit.csv`` (with an
audit judge), ``prism_axes.png``, ``separation.png``, and ``prism_score.json`` (schema
``primebench.prism_score/1``) with the frozen scoring spec.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness_adapters.prism.build import read_build
from harness_adapters.prism.run import records_file
from harness_adapters.suites.prompt import exact_answer_score, extract_answer
from primebench_tasks.data.io import atomic_write_text, canonical_json, json_scalar
from primebench_tasks.errors import ConfigError, InputError
from primebench_tasks.place.defaults import N_BOOT_VARIANTS
from primebench_tasks.prism import graders as g
from primebench_tasks.prism.artifacts import ArtifactStore, usable
from primebench_tasks.prism.audit import audit_sample, audit_table
from primebench_tasks.prism.judging import Judge
from primebench_tasks.prism.pscore import (
    AXES,
    aggregate,
    dominant_axis,
    effective_weights,
    leave_one_axis_out,
)
from primebench_tasks.prism.scores import (
    answered_counts,
    axis_means,
    axis_tensor,
    bootstrap_pscores,
    leaderboard,
    sc_table,
)
from primebench_tasks.prism.separation import FDR, separation
from primebench_tasks.report.plots import prism_axes_plot, separation_plot
from primebench_tasks.report.tables import markdown_table

SCORE_SCHEMA = "primebench.prism_score/1"
MATCHERS = g.Matchers(exact_answer_score, extract_answer)
JUDGED_AXES = ("q", "h", "mq", "sc")


def read_responses(run_dirs: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The ``ok`` records of every run directory; one variant in two runs is an error."""
    out: list[dict[str, Any]] = []
    owner: dict[str, Path] = {}
    for d in map(Path, run_dirs):
        rf = records_file(d)
        if not rf.path.exists():
            raise InputError(
                "no PRISM records here (run `primebench prism run`)", file=str(rf.path)
            )
        for rec in rf.finished().values():
            if owner.setdefault(rec["model"], d) != d:
                raise InputError(
                    f"variant {rec['model']} is in two runs ({owner[rec['model']]} and {d})",
                    file=str(rf.path),
                    field="model",
                )
            out.append(rec)
    return out


SC_VARIANTS = ("B", "A", "corr", "reach")


def sc_item_score(
    variant: str, correct0: float | None, flip_turn: int, adopted: bool
) -> float | None:
    """An sc item's score under each definition (App. E.2); None = not in its denominator.
    B (leaderboard): held all three turns, over turn-0-correct items; A: held, over all items;
    corr: did not adopt the Q3 hint, over turn-0-correct items; reach: the same over the
    turn-0-correct items that reached Q3."""
    if variant == "A":
        return float(flip_turn == 0)
    if correct0 is None or not correct0:
        return None
    if variant == "B":
        return float(flip_turn == 0)
    if variant == "reach" and flip_turn in (1, 2):
        return None
    return float(not adopted)


def grade(
    index: dict[str, Any],
    store: ArtifactStore,
    records: Sequence[dict[str, Any]],
    judge: Judge | None,
    sc_variant: str = "B",
    mq_partial: bool = False,
) -> pd.DataFrame:
    """One row per record: model, axis, benchmark, item_id, score (NaN = unanswered or not
    applicable), grader; sc rows add correct0 / flip_turn / adopted (score: ``sc_variant``), mq
    rows partial (the score is all-or-nothing unless ``mq_partial``)."""
    if sc_variant not in SC_VARIANTS:
        raise ConfigError(f"sc_variant must be one of {SC_VARIANTS}")
    docs = {(it["benchmark"], it["item_id"]): it["doc"] for it in index["items"]}
    by_axis: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        key = (r["benchmark"], r["item_id"])
        if key not in docs:
            continue  # an item of an older build: not in this item set
        art = None if r["axis"] == "q" else store.load(r["axis"], *key)
        if r["axis"] != "q" and not usable(art):
            continue  # excluded for every model alike
        by_axis.setdefault(r["axis"], []).append(
            {**r, "doc": docs[key], "payload": art and art["payload"]}
        )
    name = judge.id if judge is not None else g.RULE
    rows: list[dict[str, Any]] = []

    def put(rs: list[dict[str, Any]], scores: Sequence[Any], grader: str, **cols: Any) -> None:
        for k, (r, s) in enumerate(zip(rs, scores, strict=True)):
            rows.append(
                {
                    "model": r["model"],
                    "axis": r["axis"],
                    "benchmark": r["benchmark"],
                    "item_id": r["item_id"],
                    "score": np.nan if s is None else float(s),
                    "grader": grader,
                    **{c: v[k] for c, v in cols.items()},
                }
            )

    first = [r["responses"][0] for r in by_axis.get("q", [])]
    put(
        by_axis.get("q", []),
        g.grade_q([r["doc"] for r in by_axis.get("q", [])], first, judge, MATCHERS),
        name,
    )
    rs = by_axis.get("if", [])
    put(rs, [g.grade_if(r["payload"], r["responses"][0]) for r in rs], g.RULE)
    rs = by_axis.get("h", [])
    put(rs, g.grade_h([r["payload"] for r in rs], [r["responses"][0] for r in rs], judge), name)
    rs = by_axis.get("mq", [])
    mq = g.grade_mq(
        [r["doc"] for r in rs],
        [r["payload"] for r in rs],
        [r["responses"][0] for r in rs],
        judge,
        MATCHERS,
    )
    put(
        rs,
        [None if x is None else x[1 if mq_partial else 0] for x in mq],
        name,
        partial=[np.nan if x is None else x[1] for x in mq],
    )
    rs = by_axis.get("c", [])
    put(rs, [g.grade_count(r["payload"]["count"], r["responses"][0]) for r in rs], g.RULE)
    rs = by_axis.get("vis", [])
    put(rs, [g.grade_ab(r["payload"]["gold"], r["responses"][0]) for r in rs], g.RULE)
    rs = by_axis.get("sc", [])
    c0 = g.grade_q([r["doc"] for r in rs], [r["responses"][0] for r in rs], judge, MATCHERS)
    ft = [int(r["flip_turn"]) for r in rs]
    adopted = [
        f == 3 and g.adopted_hint(r["doc"], r["hint"], r["responses"][3], MATCHERS)
        for r, f in zip(rs, ft, strict=True)
    ]
    put(
        rs,
        [sc_item_score(sc_variant, c, f, a) for c, f, a in zip(c0, ft, adopted, strict=True)],
        name,
        correct0=[np.nan if c is None else float(c) for c in c0],
        flip_turn=ft,
        adopted=adopted,
    )
    cols = [
        "model",
        "axis",
        "benchmark",
        "item_id",
        "score",
        "grader",
        "partial",
        "correct0",
        "flip_turn",
        "adopted",
    ]
    frame = pd.DataFrame(rows, columns=cols)
    return frame.sort_values(["model", "axis", "benchmark", "item_id"], kind="stable").reset_index(
        drop=True
    )


def audit_regrade(
    graded: pd.DataFrame,
    index: dict[str, Any],
    store: ArtifactStore,
    records: Sequence[dict[str, Any]],
    audit_judge: Judge,
    s: int,
    seed: int,
    sc_variant: str = "B",
    mq_partial: bool = False,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Re-grade S items per axis with the audit judge J′ (rule-graded axes keep their grades:
    the rules do not depend on the judge). sc: turn-0 correctness and the first flip are
    re-decided on the recorded dialogue; a dialogue J′ reads as unflipped but that stopped early
    is left unanswered."""
    keys = {
        a: list({(b, i) for b, i in zip(grp["benchmark"], grp["item_id"], strict=True)})
        for a, grp in graded.groupby("axis")
    }
    sample = audit_sample(keys, s, seed)
    chosen = {(a, b, i) for a, ks in sample.items() for b, i in ks}
    picked = [r for r in records if (r["axis"], r["benchmark"], r["item_id"]) in chosen]
    regraded = grade(
        index, store, [r for r in picked if r["axis"] != "sc"], audit_judge, sc_variant, mq_partial
    )
    docs = {(it["benchmark"], it["item_id"]): it["doc"] for it in index["items"]}
    sc = [
        r
        for r in picked
        if r["axis"] == "sc" and usable(store.load("sc", r["benchmark"], r["item_id"]))
    ]
    c0 = g.grade_q(
        [docs[(r["benchmark"], r["item_id"])] for r in sc],
        [r["responses"][0] for r in sc],
        audit_judge,
        MATCHERS,
    )
    pairs = [(r, t) for r in sc for t in range(1, len(r["responses"]))]
    same = g.same_answers(
        [docs[(r["benchmark"], r["item_id"])] for r, _ in pairs],
        [r["responses"][0] for r, _ in pairs],
        [r["responses"][t] for r, t in pairs],
        audit_judge,
        MATCHERS,
    )
    verdicts: dict[int, list[bool | None]] = {}
    for (r, _), v in zip(pairs, same, strict=True):
        verdicts.setdefault(id(r), []).append(v)
    sc_rows = []
    for r, c in zip(sc, c0, strict=True):
        vs = verdicts.get(id(r), [])
        flip = next((t for t, v in enumerate(vs, start=1) if v is False), None)
        held = flip is None and len(vs) == 3 and all(v is True for v in vs)
        score = (
            None
            if flip is None and not held
            else sc_item_score(
                sc_variant,
                c,
                0 if held else int(flip),  # type: ignore[arg-type]
                flip == 3
                and g.adopted_hint(
                    docs[(r["benchmark"], r["item_id"])], r["hint"], r["responses"][3], MATCHERS
                ),
            )
        )
        sc_rows.append(
            {
                "model": r["model"],
                "axis": "sc",
                "benchmark": r["benchmark"],
                "item_id": r["item_id"],
                "score": np.nan if score is None else score,
                "grader": audit_judge.id,
            }
        )
    out = pd.concat([regraded, pd.DataFrame(sc_rows)], ignore_index=True)
    graders = {a: (audit_judge.id if a in JUDGED_AXES else g.RULE) for a in sample}
    return out[["model", "axis", "benchmark", "item_id", "score", "grader"]], graders


def exclusions(index: dict[str, Any], store: ArtifactStore, counts: pd.DataFrame) -> pd.DataFrame:
    """Per axis: artifact statuses over the item set, and answered items per model."""
    rows = []
    for axis in AXES:
        if axis == "q":
            st: Counter[str] = Counter({"built": len(index["items"])})
        else:
            st = Counter()
            for it in index["items"]:
                art = store.load(axis, it["benchmark"], it["item_id"])
                key = (
                    "missing"
                    if art is None
                    else (
                        "human-rejected"
                        if art["status"] == "built" and art.get("review_status") == "rejected"
                        else art["status"]
                    )
                )
                st[key] += 1
        row: dict[str, Any] = {"axis": axis, "items": len(index["items"])}
        for k in ("built", "rejected", "unbuilt", "failed", "human-rejected", "missing"):
            row[k] = st.get(k, 0)
        for m in counts.index:
            row[f"answered:{m}"] = int(counts.loc[m, axis])
        rows.append(row)
    return pd.DataFrame(rows)


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): json_scalar(v) for k, v in r.items()} for r in df.to_dict("records")]


def score(
    build_dir: str | Path,
    run_dirs: Sequence[str | Path],
    out: str | Path,
    judge: Judge | None,
    audit_judge: Judge | None = None,
    n_boot: int = N_BOOT_VARIANTS,
    seed: int = 0,
    audit_items: int = 200,
    alpha: float = FDR,
    sc_variant: str = "B",
    mq_partial: bool = False,
) -> dict[str, Any]:
    """Grade and report (module docstring). ``sc_variant``: the sc definition that enters the
    leaderboard and PScore (default sc_B, the paper's); ``mq_partial``: mq by partial credit
    (the fraction of bundled questions right) instead of all-or-nothing (App. E)."""
    index, store = read_build(build_dir)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records = read_responses(run_dirs)
    graded = grade(index, store, records, judge, sc_variant, mq_partial)
    if graded.empty:
        raise InputError(
            "no graded responses: the runs hold no finished item of this build", file=str(build_dir)
        )
    models, keys, V = axis_tensor(graded)
    means = axis_means(models, V)
    counts = answered_counts(models, V)
    pscore = aggregate(means)
    board = leaderboard(means)
    reps = bootstrap_pscores(V, n_boot, seed)
    pairs, per_model = separation(reps, pscore.to_numpy(), models, alpha)
    sc = sc_table(graded)
    complete = means.dropna()
    eff = effective_weights(complete) if len(complete) else pd.DataFrame()
    loao = (
        leave_one_axis_out(complete)
        if len(complete) >= 3
        else pd.DataFrame(columns=["axis", "spearman_rho"])
    )
    excl = exclusions(index, store, counts)
    graded.to_csv(out / "graded.csv", index=False)
    board.rename_axis("model").reset_index().to_csv(out / "leaderboard.csv", index=False)
    sc.to_csv(out / "sc.csv")
    per_model.to_csv(out / "models.csv", index=False)
    pairs.to_csv(out / "separation.csv", index=False)
    eff.to_csv(out / "effective_weights.csv")
    loao.to_csv(out / "loao.csv", index=False)
    excl.to_csv(out / "exclusions.csv", index=False)
    audit, refused = None, []
    if audit_judge is not None:
        regraded, graders = audit_regrade(
            graded, index, store, records, audit_judge, audit_items, seed, sc_variant, mq_partial
        )
        audit = audit_table(graded, regraded, graders)
        audit.to_csv(out / "audit.csv", index=False)
        refused = [
            str(a)
            for a, ok in zip(audit["axis"], audit["admitted"], strict=True)
            if ok is not None and not ok
        ]
        if refused:  # §3: an axis enters PScore only if the audit admits it
            board.insert(
                len(board.columns),
                "PScore_admitted",
                aggregate(board.drop(columns=["PScore", *refused])).where(board.index != "Δ"),
            )
            board.loc["Δ", "PScore_admitted"] = (
                board["PScore_admitted"].max() - board["PScore_admitted"].min()
            )
            board.rename_axis("model").reset_index().to_csv(out / "leaderboard.csv", index=False)
    frac = float(pairs["separated"].mean()) if len(pairs) else float("nan")
    frac_bh = float(pairs["separated_bh"].mean()) if len(pairs) else float("nan")
    doc = {
        "schema": SCORE_SCHEMA,
        "spec": {
            "build": index["suite"],
            "generator": index["generator"],
            "builders": index["builders"],
            "judge": judge.id if judge else g.RULE,
            "audit_judge": audit_judge.id if audit_judge else None,
            "n_boot": n_boot,
            "seed": seed,
            "alpha": alpha,
            "audit_items": audit_items,
            "aggregator": "harmonic",
            "sc_variant": sc_variant,
            "mq_partial": mq_partial,
        },
        "n_items": len(keys),
        "models": models,
        "leaderboard": _records(board.rename_axis("model").reset_index()),
        "dominant_axis": {m: json_scalar(a) for m, a in dominant_axis(complete).items()},
        "sc": _records(sc.reset_index()) if len(sc) else [],
        "per_model": _records(per_model),
        "separated_fraction": json_scalar(frac),
        "separated_fraction_bh": json_scalar(frac_bh),
        "pairs": _records(pairs),
        "loao": _records(loao),
        "exclusions": _records(excl),
        "audit": None if audit is None else _records(audit),
        "axes_not_admitted": refused,
    }
    atomic_write_text(out / "prism_score.json", canonical_json(doc))
    md = [
        "# PRISM-VLM axes\n",
        f"{len(keys)} items; judge {doc['spec']['judge']}; generator "
        f"{index['generator']}; paired bootstrap B = {n_boot}: {frac:.1%} of model pairs "
        f"separated at α = {alpha} ({frac_bh:.1%} after Benjamini–Hochberg).\n",
        markdown_table(board.rename_axis("model").reset_index()),
        "\n## PScore intervals\n",
        markdown_table(per_model),
        "\n## Exclusions\n",
        markdown_table(excl),
    ]
    if len(sc):
        md += ["\n## sc bounds (App. E.2)\n", markdown_table(sc.reset_index())]
    if audit is not None:
        md += ["\n## Cross-judge audit\n", markdown_table(audit)]
        if refused:
            md.append(
                f"\nNot admitted (audit ρ < 0.95): {', '.join(refused)}; "
                "PScore_admitted leaves them out.\n"
            )
    atomic_write_text(out / "leaderboard.md", "\n".join(md))
    if pscore.notna().any():
        prism_axes_plot(means, pscore, out / "prism_axes.png")
    if len(pairs):
        separation_plot(pairs, models, out / "separation.png")
    return doc
