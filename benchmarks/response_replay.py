"""The response check (#66), measured by replay: held-out reference models' real answers —
VLMEvalKit's published predictions of BLINK, OCRBench and RealWorldQA — stand in for a run,
healthy or with a fault injected of a kind users meet, and the check
(:func:`~primebench_tasks.place.responses.check_profile`) is run as a placement runs it: on 100
items (the product's level), against limits from the other models' profiles built as an import
builds them (every item of theirs; :func:`~harness_adapters.harnesses.vlmeval.records.records_profiles`).

    python benchmarks/response_replay.py [--folds 5] [--draws 2]   # needs ../shared/data
    python benchmarks/response_replay.py --render                   # the table from the CSV

Faults, each on a share r of the 100 items (r = 5, 10, 25 %) of every held-out model:

- ``reasoning``: reasoning text with no final answer (scored 0, as exact matching scores it;
  lmms-eval's MMMU scorer would guess instead — the check reads the text, not the score);
- ``truncated``: the answer cut at the token budget (finish reason ``length``; the other items
  ``stop``);
- ``empty``: an empty answer;
- ``first option``: always option A (multiple choice);
- ``other format``: the model's own answer as "Answer: (B)", "the answer is b" or the bare option
  text, scored 0 by a parser that wants a bare letter (multiple choice);
- whole-run guessers (battery 7), on every item: ``random letters`` (a letter A–E drawn at
  random, scored right where it is the gold answer) and ``constant`` (``A`` to every item),
  caught where the check flags them (letters to open questions, letters beyond an item's
  options, one letter throughout) or says their score is at chance level; ``healthy at chance``
  counts the held-out real runs whose score the check says is at chance (said in the report, no
  standing there, not a flag);
- score-level faults, beside: ``shuffled`` and ``off-by-one`` keys change no answer's text, so
  the response check cannot see them (they are the score-level check's:
  ``benchmarks/misfit_replay.py``); their rows measure that it does not cry wolf on them.

Writes ``benchmarks/results/response_replay.csv`` (one row per dataset, fault and r: runs and
the share flagged) and ``response_replay.md`` (the table in docs/results.md, checked by a test).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from primebench_tasks.place.responses import (  # noqa: E402
    REFERENCE_QUANTILE,
    check_profile,
    reference_limits,
    response_profiles,
)
from primebench_tasks.progress import progress_bar  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
DATASETS = ("BLINK", "OCRBench", "RealWorldQA")
SHARES = (0.05, 0.10, 0.25)
FAULTS = ("reasoning", "truncated", "empty", "first option", "other format")
SCORE_FAULTS = ("shuffled", "off-by-one")
GUESSERS = ("random letters", "constant")
"""Faults on every item (share 1): a run that guesses instead of answering."""
ITEMS = 100
QUANTILES = (0.95, 0.99)
"""The reference quantiles compared (the library keeps the chosen one, ``REFERENCE_QUANTILE``)."""
GOALS = {0.05: 0.80, 0.10: 0.95, 0.25: 0.95}
"""The issue's goals: a fault flagged in ≥ 95 % of runs at r ≥ 10 %, ≥ 80 % at 5 %; healthy
held-out runs ≤ 2 %."""
HEALTHY_GOAL = 0.02
REASONING = (
    "Let me think about this step by step. First I look at the image carefully and compare "
    "what each part shows with the question; then I weigh the possibilities one by one"
)


def inject(g: pd.DataFrame, fault: str, r: float, rng: np.random.Generator, facts) -> pd.DataFrame:
    """``g`` (one model's 100 answers) with ``fault`` on a share ``r`` of them."""
    g = g.copy()
    g["finish_reason"] = None
    n = len(g)
    hit = np.zeros(n, bool)
    hit[rng.choice(n, max(1, round(r * n)), replace=False)] = True
    resp = g["response"].astype(str).to_numpy(object).copy()
    score = g["score"].to_numpy(float).copy()
    if fault == "reasoning":
        resp[hit], score[hit] = REASONING, 0.0
    elif fault == "truncated":
        resp[hit], score[hit] = REASONING[:60], 0.0
        g["finish_reason"] = np.where(hit, "length", "stop")
    elif fault == "empty":
        resp[hit], score[hit] = "", 0.0
    elif fault == "first option":
        gold = [facts.gold.get(i) for i in g["item_id"]]
        resp[hit] = "A"
        score[hit] = [1.0 if x == "A" else 0.0 for x, h in zip(gold, hit, strict=True) if h]
    elif fault == "other format":
        from primebench_tasks.place.responses import read_answer

        forms = ("Answer: ({})", "the answer is {}", "{text}")
        for k in np.flatnonzero(hit):
            i = str(g["item_id"].iloc[k])
            letter = read_answer(resp[k], "mcq", facts.options.get(i))
            if letter is None:
                continue
            form = forms[k % 3]
            text = (facts.options.get(i) or {}).get(letter, letter)
            resp[k] = form.format(letter.lower() if "answer is" in form else letter, text=text)
            score[k] = 0.0
    elif fault in GUESSERS:
        gold = [facts.gold.get(i) for i in g["item_id"]]
        resp = np.array(
            [str(rng.choice(list("ABCDE"))) if fault == "random letters" else "A" for _ in gold],
            dtype=object,
        )
        score = np.array([1.0 if x == a else 0.0 for a, x in zip(resp, gold, strict=True)])
    elif fault == "shuffled":
        score = rng.permutation(score)
    elif fault == "off-by-one":
        score = np.roll(score, 1)
    g["response"], g["score"] = resp, score
    return g


def replay(folds: int, draws: int, quantile: float, seed: int = 0) -> pd.DataFrame:
    from harness_adapters.harnesses.vlmeval.records import read_records, records_facts

    root = ROOT.parent / "shared" / "data" / "openvlm_records" / "EvalRecords"
    _, items, report = read_records(root, list(DATASETS), rule="builtin")
    facts = records_facts(items, list(DATASETS))
    answers = pd.DataFrame(report.responses)
    profiles = response_profiles(answers, facts)  # every item of every model, as shipped
    rows = []
    bar = progress_bar(total=len(DATASETS) * folds, desc="response replay")
    for ds in DATASETS:
        mine = answers[answers["benchmark"] == ds]
        models = sorted(mine["model"].unique())
        f = facts[ds]
        choice = f.kind in ("mcq", "yorn")
        faults = [*FAULTS, *SCORE_FAULTS] if choice else ["reasoning", "truncated", "empty"]
        rng = np.random.default_rng([seed, len(ds)])
        order = rng.permutation(len(models))
        tally: dict[tuple[str, float], list[bool]] = {}
        for k in range(folds):
            held = {models[j] for j in order[k::folds]}
            ref = profiles[(profiles["benchmark"] == ds) & ~profiles["model"].isin(held)]
            lim = reference_limits(ref, ds, quantile)
            for m in sorted(held):
                g_all = mine[mine["model"] == m]
                for d in range(draws):
                    rr = np.random.default_rng([seed, k, d, sum(map(ord, m))])
                    g = g_all.iloc[rr.choice(len(g_all), min(ITEMS, len(g_all)), replace=False)]
                    cases = [("healthy", 0.0)] + [(fa, r) for fa in faults for r in SHARES]
                    cases += [(fa, 1.0) for fa in GUESSERS]
                    for fault, r in cases:
                        run = inject(g, fault, r, rr, f) if fault != "healthy" else g
                        (p,) = response_profiles(run, {ds: f}).to_dict("records")
                        check = check_profile(p, lim)
                        # a guesser is caught by a flag or by its score at chance (no standing)
                        hit = bool(check.flags) or (fault in GUESSERS and check.at_chance)
                        tally.setdefault((fault, r), []).append(hit)
                        if fault == "healthy":
                            tally.setdefault(("healthy at chance", r), []).append(check.at_chance)
            bar.update(1)
        for (fault, r), got in tally.items():
            rows.append(
                {
                    "dataset": ds,
                    "fault": fault,
                    "share": r,
                    "quantile": quantile,
                    "runs": len(got),
                    "flagged": round(float(np.mean(got)), 4),
                }
            )
    bar.close()
    return pd.DataFrame(rows)


def table(df: pd.DataFrame) -> str:
    """The markdown table: per fault and share, the share of runs flagged on each dataset, and
    the goal."""
    lines = [
        "| fault | share of items | " + " | ".join(DATASETS) + " | goal |",
        "|---|---|" + "---|" * (len(DATASETS) + 1),
    ]
    for (fault, r), g in df.groupby(["fault", "share"], sort=False):
        cells = []
        for ds in DATASETS:
            row = g[g["dataset"] == ds]
            cells.append(
                "—"
                if row.empty
                else f"{100 * row['flagged'].iloc[0]:.0f} % ({row['runs'].iloc[0]})"
            )
        if fault == "healthy":
            goal = f"≤ {100 * HEALTHY_GOAL:.0f} %"
        elif fault == "healthy at chance":
            goal = "— (said, not flagged)"
        elif fault in SCORE_FAULTS:
            goal = "— (score-level)"
        elif fault in GUESSERS:
            goal = "≥ 95 %"
        else:
            goal = f"≥ {100 * GOALS[r]:.0f} %"
        share = "—" if fault.startswith("healthy") else f"{100 * r:.0f} %"
        lines.append(f"| {fault} | {share} | " + " | ".join(cells) + f" | {goal} |")
    return "\n".join(lines) + "\n"


def choice_table(df: pd.DataFrame) -> str:
    """Per quantile: the healthy runs flagged and the mean detection of the text-level faults at
    10 % of the items, over the datasets — what chose the library's quantile."""
    lines = [
        "",
        "| reference quantile | healthy flagged | faults at 10 % flagged (mean) |",
        "|---|---|---|",
    ]
    for q, g in df.groupby("quantile"):
        healthy = g[g["fault"] == "healthy"]
        faults = g[g["fault"].isin(FAULTS) & (g["share"] == 0.10)]
        lines.append(
            f"| {q:g} | {100 * np.average(healthy.flagged, weights=healthy.runs):.1f} % | "
            f"{100 * np.average(faults.flagged, weights=faults.runs):.1f} % |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--draws", type=int, default=2, help="100-item draws per held-out model")
    ap.add_argument("--render", action="store_true", help="the table from the committed CSV")
    args = ap.parse_args()
    csv = RESULTS / "response_replay.csv"
    if args.render:
        df = pd.read_csv(csv)
    else:
        df = pd.concat([replay(args.folds, args.draws, q) for q in QUANTILES], ignore_index=True)
        df.to_csv(csv, index=False, lineterminator="\n")
    text = table(df[df["quantile"] == REFERENCE_QUANTILE]) + choice_table(df)
    (RESULTS / "response_replay.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
