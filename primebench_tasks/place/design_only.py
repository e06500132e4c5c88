"""Placing a run's answers on a suite's design-only benchmarks (#72): read the draw each
benchmark's answers came from, hold it to the suite's design, and estimate each model's full
score by the design alone (:mod:`primebench_tasks.suite.content_design`).

A run's records of a design-only benchmark carry, per item, its ``stratum`` and the ``pool``
it was drawn from (``{"strata": {value: [N_h, n_h]}, "fingerprint"}``, as the generated task
logs it). :func:`design_answers` refuses — naming the benchmark, the row and the field — a
record without them, two pools in one benchmark (two datasets in one run folder), a pool other
than the one the suite pins, a draw whose n_h are not the suite's allocation of its n over those
N_h (another design), an item of a stratum the draw does not have, and more items of a stratum
than were drawn from it. :func:`place_design_only` then gives every model its
:class:`~primebench_tasks.place.result.DesignOnlyPlacement`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from primebench_tasks.errors import InputError
from primebench_tasks.place.result import DesignOnlyPlacement, Estimate
from primebench_tasks.suite.content_design import allocate, stratified_estimate
from primebench_tasks.suite.manifest import SuiteManifest

NOT_DRAWN_BY_THE_RUN = (
    "design-only: its items are drawn from the dataset by the generated lmms-eval task "
    "(lmms-eval --tasks <suite>), the vLLM runner (primebench run --suite <suite>) or the "
    "VLMEvalKit export (primebench tasks vlmeval, from its TSV); this run did not ask them"
)
"""Why a design-only benchmark is missing from a run of another harness (not an error)."""


@dataclass(frozen=True)
class DesignAnswers:
    """One design-only benchmark's answers in a run: its draw (``strata``: stratum → (N_h,
    n_h); ``pool``: the fingerprint of the dataset it was drawn from) and, per model, item →
    (stratum, score in [0, 1] or None)."""

    benchmark: str
    strata: Mapping[str, tuple[int, int]]
    pool: str
    scores: Mapping[str, Mapping[str, tuple[str, float | None]]]
    pinned: bool = False
    """Whether the pool sizes N_h are the suite's pinned pool's (held to it), else the run
    log's own (what the interval then rests on)."""


def _pool(v: Any, where: str, row: str) -> tuple[dict[str, tuple[int, int]], str]:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            v = None
    strata = v.get("strata") if isinstance(v, dict) else None
    fp = v.get("fingerprint") if isinstance(v, dict) else None
    ok = isinstance(strata, dict) and strata and isinstance(fp, str)
    pairs: dict[str, tuple[int, int]] = {}
    for h, x in (strata or {}).items() if ok else ():
        if (
            not isinstance(x, list)
            or len(x) != 2
            or not all(isinstance(k, int) and not isinstance(k, bool) for k in x)
            or not 1 <= x[1] <= x[0]
        ):
            ok = False
            break
        pairs[str(h)] = (int(x[0]), int(x[1]))
    if not ok:
        raise InputError(
            f"{where}: the record's draw is not {{strata: {{value: [N_h, n_h]}}, fingerprint}}",
            row=row,
            field="pool",
        )
    return pairs, str(fp)


def design_answers(records: pd.DataFrame, manifest: SuiteManifest) -> dict[str, DesignAnswers]:
    """The answers of ``records`` (columns model, benchmark, item_id, score, stratum, pool) to
    ``manifest``'s design-only benchmarks, checked (see the module docstring); benchmark →
    :class:`DesignAnswers` for those the run answered."""
    out: dict[str, DesignAnswers] = {}
    for e in manifest.design_only:
        rows = records[records["benchmark"].astype(str) == e.name]
        if rows.empty:
            continue
        where = f"{e.name} (design-only)"
        for col in ("stratum", "pool"):
            if col not in rows.columns or rows[col].isna().any():
                bad = rows.index[0] if col not in rows.columns else rows.index[rows[col].isna()][0]
                raise InputError(
                    f"{where}: a record has no {col} (the run was not made with the suite's "
                    "generated design-only task)",
                    row=str(bad),
                    field=col,
                )
        seen: dict[str, tuple[dict[str, tuple[int, int]], str]] = {}
        for idx, raw in rows["pool"].items():
            key = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True)
            if key not in seen:
                seen[key] = _pool(raw, where, str(idx))
        draws = {(tuple(sorted(s.items())), fp) for s, fp in seen.values()}
        if len(draws) != 1:
            raise InputError(
                f"{where}: the run's answers come from {len(draws)} different datasets (pool "
                f"fingerprints {sorted(fp for _, fp in draws)}); place one run at a time",
                field="pool",
            )
        strata, fp = next(iter(seen.values()))
        pinned = e.design.pool
        if pinned is not None and fp != pinned.fingerprint:
            raise InputError(
                f"{where}: the run drew from a dataset (fingerprint {fp}) that is not the pool "
                f"the suite pins ({pinned.fingerprint})",
                field="pool",
            )
        logged = {h: N for h, (N, _) in strata.items()}
        if pinned is not None and logged != dict(pinned.strata):
            diff = sorted(
                h for h in set(logged) | set(pinned.strata) if logged.get(h) != pinned.strata.get(h)
            )
            raise InputError(
                f"{where}: the run's log gives stratum {diff[0]!r} N_h = {logged.get(diff[0])} "
                f"where the pool the suite pins has {pinned.strata.get(diff[0])} (the log was "
                "edited, or the run is of another suite version): the pool sizes are the "
                "design's weights; restore the run's log",
                field="pool",
            )
        census = all(n == N for N, n in strata.values())
        if pinned is None and census and sum(logged.values()) >= e.design.n:
            raise InputError(
                f"{where}: the run's log says every stratum was drawn whole (N_h = n_h, "
                f"{sum(logged.values())} items) and the pool is exactly the suite's "
                f"{e.design.n} items: only a suite pinned to its pool can confirm a census, "
                "and an edited N_h would give a zero-width interval; pin the suite to the "
                "dataset (primebench pin lmms-eval) and run it again",
                field="pool",
            )
        want = allocate({h: N for h, (N, _) in strata.items()}, e.design.n)
        got = {h: n for h, (_, n) in strata.items()}
        if want != got:
            raise InputError(
                f"{where}: the run's draw took {got} items per stratum where the suite's design "
                f"of {e.design.n} items takes {want} (another design or suite version)",
                field="pool",
            )
        scores: dict[str, dict[str, tuple[str, float | None]]] = {}
        for r in rows.itertuples():
            h = str(r.stratum)
            if h not in strata:
                raise InputError(
                    f"{where}: item {r.item_id} is of stratum {h!r}, which the draw does not "
                    f"have ({sorted(strata)})",
                    row=str(r.Index),
                    field="stratum",
                )
            s = None if pd.isna(r.score) else float(r.score)
            scores.setdefault(str(r.model), {})[str(r.item_id)] = (h, s)
        for m, items in scores.items():
            count: dict[str, int] = {}
            for h, _ in items.values():
                count[h] = count.get(h, 0) + 1
            over = [h for h, k in count.items() if k > strata[h][1]]
            if over:
                raise InputError(
                    f"{where}: model {m} has {count[over[0]]} items of stratum {over[0]!r}, of "
                    f"which the draw took {strata[over[0]][1]}",
                    field="item_id",
                )
        out[e.name] = DesignAnswers(e.name, strata, fp, scores, pinned is not None)
    return out


def place_design_only(answers: DesignAnswers, model: str) -> DesignOnlyPlacement:
    """``model``'s placement on one design-only benchmark from its answers (none scored: no
    estimate, said why)."""
    items = answers.scores.get(model, {})
    by_h: dict[str, list[float]] = {}
    for h, s in items.values():
        if s is not None:
            by_h.setdefault(h, []).append(s)
    est = stratified_estimate(answers.strata, by_h)
    n = sum(k for _, k in answers.strata.values())
    strata = {h: [N, k] for h, (N, k) in sorted(answers.strata.items())}
    if est is None:
        empty = sorted(h for h in answers.strata if not by_h.get(h))
        return DesignOnlyPlacement(
            n_items=n,
            n_scored=sum(map(len, by_h.values())),
            predicted_full=Estimate(None, None, None),
            interval_90=Estimate(None, None, None),
            se=None,
            strata=strata,
            pool=answers.pool,
            pool_sizes_from="pin" if answers.pinned else "log",
            no_estimate_because=f"no scored item in stratum {', '.join(map(repr, empty))}",
        )
    return DesignOnlyPlacement(
        n_items=n,
        n_scored=est.n_scored,
        predicted_full=Estimate(est.value, est.lo95, est.hi95),
        interval_90=Estimate(est.value, est.lo90, est.hi90),
        se=est.se,
        strata=strata,
        pool=answers.pool,
        pool_sizes_from="pin" if answers.pinned else "log",
    )
