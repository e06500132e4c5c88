"""The misfit check (#56), measured by replay: held-out reference models' recorded answers stand
in for a run, healthy or with a fault injected of a kind users meet, and the check
(:func:`~primebench_tasks.place.misfit.person_fit`) is run as a placement runs it — on
the static suite's items (the default selector's ``k`` on the build models), against the build
models as the reference panel.

    python benchmarks/misfit_replay.py [--splits 5]
    python benchmarks/misfit_replay.py --render   # the tables from the committed CSV
    python benchmarks/misfit_replay.py --lz-only  # the comparison: lz* alone (prints only)

Panels with ≥ 80 models: AutoJudger's AI2D and MMMU (no item text: the faults that need the
options or the question are left out there, said in the table), VLMEvalKit's published records
of BLINK, OCRBench and RealWorldQA. Hold-outs: ``random`` (20 %, ``--splits`` seeds) and
``frontier`` (the strongest 15 %: a strong new model must not look like a fault).

Faults (each on every held-out model):

- ``shuffled``: its answers permuted across the suite's items (a key mix-up);
- ``position``: on half of the multiple-choice items it answers the first option (scored right
  only where the gold answer is A) — the records panels with options;
- ``truncated``: free-form answers lost on the longest third of the items (by question length:
  scored 0) — the records panels with text;
- ``template``: a broken template on the whole benchmark: answers at chance (1 / options, else
  1/4) on every item;
- ``chance r``: answers at chance on a random share r of the items (r = 10, 20, 30, 50 %) —
  the fault that looks like a weaker model; its detection curve is also measured at 25, 50,
  100 and 200 items.

Writes ``benchmarks/results/misfit_replay.csv`` (one row per panel, hold-out, fault, items and
level: the share flagged) and ``misfit_replay.md`` (the tables in docs/results.md, checked by a
test).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.evaluate.adaptive_validation import hold_out
from primebench_tasks.place.misfit import ItemFacts, person_fit
from primebench_tasks.progress import progress_bar
from primebench_tasks.select.default import DEFAULT_SELECTOR
from primebench_tasks.select.registry import SELECTORS, SelectorContext

RESULTS = Path(__file__).resolve().parent / "results"
SUITE_ITEMS = 100
"""The static suite's items per benchmark (the released suites hold 100–110 per benchmark)."""
CURVE_ITEMS = (25, 50, 100, 200)
CHANCE_SHARES = (0.1, 0.2, 0.3, 0.5)
LEVELS = (0.02, 0.05)
STRUCTURED = ("shuffled", "position", "truncated", "template")


def panels() -> list[tuple[str, Panel, str]]:
    out = []
    aj = Panel.load_default("autojudger")
    for b in aj.benchmark_names:
        out.append((f"autojudger {b}", aj, b))
    for name in ("openvlm_blink", "openvlm_ocrbench", "openvlm_realworldqa"):
        p = Panel.load_default(name)
        out.append((f"records {p.benchmark_names[0]}", p, p.benchmark_names[0]))
    return out


def _options(raw: object) -> list[str]:
    if not isinstance(raw, str) or not raw.strip():
        return []
    try:
        got = json.loads(raw)
    except ValueError:
        return []
    return [str(o) for o in got] if isinstance(got, list) else []


def item_facts(panel: Panel, b: str) -> pd.DataFrame:
    """Per item: ``chance`` (1 / options, else 1/4), ``first_right`` (the gold answer is A;
    NaN: not multiple choice or no answer known), ``length`` (question characters; NaN: no
    text)."""
    items = panel.items_of(b)
    opts = [_options(o) for o in items["options"]]
    chance = np.array([1 / len(o) if len(o) >= 2 else 0.25 for o in opts])
    ans = items["answer"].astype("string")
    first = np.array(
        [
            float(str(a).strip().upper() == "A") if len(o) >= 2 and a is not pd.NA else np.nan
            for a, o in zip(ans, opts, strict=True)
        ]
    )
    length = ItemFacts.of_items(items).length  # the check's own definition
    return pd.DataFrame({"chance": chance, "first_right": first, "length": length})


def faulty(
    X: np.ndarray, facts: pd.DataFrame, fault: str, rng: np.random.Generator
) -> np.ndarray | None:
    """The held-out answers ``X`` (V, k) on the suite's items with ``fault`` injected; None where
    the panel lacks what the fault needs."""
    V, k = X.shape
    Y = X.copy()
    chance = facts["chance"].to_numpy()
    if fault == "shuffled":
        for v in range(V):
            Y[v] = X[v, rng.permutation(k)]
    elif fault == "position":
        first = facts["first_right"].to_numpy()
        mc = np.flatnonzero(np.isfinite(first))
        if len(mc) < k / 2:
            return None
        for v in range(V):
            pick = rng.choice(mc, len(mc) // 2, replace=False)
            Y[v, pick] = first[pick]
    elif fault == "truncated":
        length = facts["length"].to_numpy()
        if not np.isfinite(length).all():
            return None
        Y[:, np.argsort(-length, kind="stable")[: k // 3]] = 0.0
    elif fault == "template":
        Y = (rng.random((V, k)) < chance[None, :]).astype(float)
    elif fault.startswith("chance"):
        share = float(fault.split()[1])
        for v in range(V):
            pick = rng.choice(k, round(share * k), replace=False)
            Y[v, pick] = (rng.random(len(pick)) < chance[pick]).astype(float)
    else:
        raise ValueError(fault)
    Y[~np.isfinite(X)] = np.nan  # a missing answer stays missing
    return Y


def replay(n_splits: int, lz_only: bool = False) -> pd.DataFrame:
    rows = []
    cells = [
        (name, panel, b, proto, seed)
        for name, panel, b in panels()
        for proto in ("random", "frontier")
        for seed in (range(n_splits) if proto == "random" else [0])
    ]
    bar = progress_bar(len(cells), "misfit replay", unit="hold-out")
    for name, panel, b, proto, seed in cells:
        X = panel.matrix(b).astype(float)
        facts_all = item_facts(panel, b)
        checked = ItemFacts(facts_all["length"].to_numpy())
        held, build = hold_out(X, proto, seed)
        for k in CURVE_ITEMS:
            if k > X.shape[1]:
                continue
            sel = SELECTORS[DEFAULT_SELECTOR](k, seed, SelectorContext()).fit(X[build])
            items = np.asarray(sel.indices_)
            facts = facts_all.iloc[items].reset_index(drop=True)
            faults = ["healthy", *[f"chance {r}" for r in CHANCE_SHARES]]
            if k == SUITE_ITEMS:
                faults += list(STRUCTURED)
            for fault in faults:
                rng = np.random.default_rng([seed, k, sum(map(ord, fault))])
                base = X[held][:, items]
                Y = base if fault == "healthy" else faulty(base, facts, fault, rng)
                if Y is None:
                    continue
                for level in LEVELS:
                    fits = person_fit(
                        X[build][:, items],
                        Y,
                        level=level,
                        seed=seed,
                        facts=None if lz_only else checked.take(items),
                    )
                    judged = [f for f in fits if f.p_value is not None]
                    rows.append(
                        {
                            "panel": name,
                            "holdout": proto,
                            "split": seed,
                            "items": k,
                            "fault": fault,
                            "level": level,
                            "runs": len(judged),
                            "flagged": sum(f.flagged for f in judged),
                        }
                    )
        bar.update(1)
    bar.close()
    return pd.DataFrame(rows)


def render(df: pd.DataFrame) -> str:
    """Two tables: at the suite's size, the share flagged per panel, hold-out and fault (levels
    2 % and 5 %); the chance-fault detection curve over item counts (random hold-outs, 2 %)."""
    g = df.groupby(["panel", "holdout", "items", "fault", "level"])[["runs", "flagged"]].sum()
    g["share"] = g["flagged"] / g["runs"]
    share = g["share"].unstack("fault")
    order = ["healthy", *STRUCTURED, *[f"chance {r}" for r in CHANCE_SHARES]]
    lines = [
        f"### Share of runs flagged at the static suite's size ({SUITE_ITEMS} items per benchmark)",
        "",
        "Healthy held-out runs (the control: goal ≤ 5 %), the structured faults (goal ≥ 90 %) and "
        "answers at chance on a share of the items (looks like a weaker model). — : the panel "
        "lacks what the fault needs (AutoJudger has no options or question text).",
        "",
    ]
    for level in LEVELS:
        t = share.xs((SUITE_ITEMS, level), level=("items", "level")).reindex(columns=order)
        lines += [
            f"Level {100 * level:g} %:",
            "",
            "| panel | hold-out | runs | " + " | ".join(order) + " |",
            "|---|---|---|" + "---|" * len(order),
        ]
        runs = g["runs"].xs((SUITE_ITEMS, level, "healthy"), level=("items", "level", "fault"))
        for (panel, proto), r in t.iterrows():
            cells = ["—" if pd.isna(x) else f"{100 * x:.0f} %" for x in r]
            lines.append(
                f"| {panel} | {proto} | {int(runs.loc[(panel, proto)])} | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")
    curve = share.xs(("random", LEVELS[0]), level=("holdout", "level"))
    lines += [
        f"### Detection curve: answers at chance on a share of the items (random hold-outs, level "
        f"{100 * LEVELS[0]:g} %)",
        "",
        "| panel | items | healthy | " + " | ".join(f"chance {r:g}" for r in CHANCE_SHARES) + " |",
        "|---|---|---|" + "---|" * len(CHANCE_SHARES),
    ]
    for (panel, k), r in curve.iterrows():
        cells = [
            f"{100 * r[c]:.0f} %" for c in ["healthy", *[f"chance {x}" for x in CHANCE_SHARES]]
        ]
        lines.append(f"| {panel} | {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--render", action="store_true", help="tables from the committed CSV")
    ap.add_argument(
        "--lz-only",
        action="store_true",
        help="the check without its directed residual (the comparison that chose it); prints only",
    )
    args = ap.parse_args()
    csv = RESULTS / "misfit_replay.csv"
    if args.lz_only:
        print(render(replay(args.splits, lz_only=True)))
        return
    if args.render:
        df = pd.read_csv(csv)
    else:
        df = replay(args.splits)
        df.to_csv(csv, index=False)
    (RESULTS / "misfit_replay.md").write_text(render(df), encoding="utf-8")
    print(render(df))


if __name__ == "__main__":
    main()
