"""Reading the answers, not only the scores: a run's response profile per benchmark, compared
with the reference runs' own, so that a run whose answers the parser could not read is flagged
with its cause rather than placed as a weaker model.

**The profile** of one model on one benchmark (:func:`response_profiles`), from its raw
responses (``response``; ``finish_reason`` and ``score`` where the run recorded them), each a
share of the model's answered items in [0, 1] unless said otherwise:

- ``empty`` — responses that are empty or blank;
- ``unreadable`` — non-empty responses from which no answer can be read: no option letter
  (multiple choice; :func:`read_answer`: VLMEvalKit's exact-matching rule, then an answer stated
  as such — one rule for a new run and the reference runs' published predictions) or no yes/no
  (:func:`~primebench_tasks.data.answers.builtin_yorn`); NaN on an open-answer benchmark;
- ``truncated`` — responses that stopped at the token budget (finish reason ``length``); NaN
  where no finish reason was recorded;
- ``misread`` — responses whose answer this rule reads as the gold one while the harness
  scored them 0 (the harness's parser read something else, or guessed); NaN without scores;
- ``top_option`` — the largest share any one option letter takes among the readable answers,
  and ``top_letter`` that letter (multiple choice); ``top_excess`` — that share minus the share
  of the same letter among the gold answers of the same items (a model that always answers A
  where A is right a quarter of the time: 0.75);
- ``yes`` — the share of "yes" among the readable yes/no answers;
- ``length`` — the median response length in characters (not a share);
- ``mismatched`` — answers of another type than the question asks: a lone option letter to an
  open question (MATH-Vision's "How many bricks are missing?" → "E"), a number and no option
  letter to an option question;
- ``chance`` — the score a guesser expects on the answered items: per item 1/k for k options
  (:data:`DEFAULT_LETTERS` where the options are not known), 1/2 for yes/no, 0 for an open
  answer; ``chance_sd`` the standard deviation of a guesser's mean score over those items
  (independent guesses); ``score`` the run's mean score on them (NaN without scores).

**The check** (:func:`check_profile`): each share above its limit flags the benchmark, naming the
cause and the reference range. The limit is the reference runs' :data:`REFERENCE_QUANTILE`
quantile q where the benchmark's reference panel holds their profiles (VLMEvalKit's published
records do: built at import, :func:`~harness_adapters.harnesses.vlmeval.records.records_panel`),
else the fixed :data:`FIXED_LIMITS`, plus the sampling noise of a share over the run's n items
(:func:`noise_margin`). ``misread`` always has its fixed limit: the reference runs were scored by
the very rule that reads them, so theirs is 0 by construction. A run whose parse failures (empty, unreadable, truncated or misread
answers) exceed the limit is **not comparable**: its scores measure the parser, not the model;
so is a run whose answers are of another type than the questions ask past their limit.

**Chance level**: a score no higher than :data:`CHANCE_Z` standard deviations above a guesser's
(``chance`` + ``CHANCE_Z`` · ``chance_sd``) cannot be told from guessing on these items: the
check says so (``chance``, ``at_chance``; not a flag) and the report presents no rank there as
a standing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.answers import builtin_can_infer, builtin_yorn
from primebench_tasks.data.codec import Document, encoded, optional

PROFILE_COLUMNS = (
    "model",
    "benchmark",
    "n",
    "empty",
    "unreadable",
    "truncated",
    "misread",
    "top_option",
    "top_letter",
    "top_excess",
    "yes",
    "length",
    "mismatched",
    "chance",
    "chance_sd",
    "score",
)
"""The columns of a profile table (one row per model and benchmark); the file
``response_profiles.csv`` beside a panel holds the reference runs' rows."""

PARSE_FAILURES = ("empty", "unreadable", "truncated", "misread")
"""The shares that measure the parser, not the model: above the limit, not comparable."""

REFERENCE_QUANTILE = 0.99
"""The reference runs' quantile of a share that a new run may reach unflagged (chosen by
``benchmarks/response_replay.py`` between 0.95 and 0.99: docs/results.md, "Reading the
answers")."""

NOISE_Z = 2.33
"""The one-sided normal quantile (99 %) of a share's sampling noise over a run's items."""

FIXED_LIMITS: dict[str, float] = {
    "empty": 0.02,
    "unreadable": 0.03,
    "truncated": 0.02,
    "misread": 0.08,
    "top_excess": 0.30,
    "yes": 0.85,
    "mismatched": 0.05,
}
"""The limits where no reference run's profile is known (a panel without predictions): a share
above the limit is flagged. The option and yes limits are loose on purpose (a benchmark's gold
answers can lean one way)."""

CHANCE_Z = 1.96
"""A score at most this many standard deviations above a guesser's expected score on the same
items (the top of the guessers' central 95 %) is at chance level."""

COLLAPSED_SHARE = 0.9
"""A run whose readable answers are this share or more one option (or "yes"), past the option
(yes) limit besides, answers without reading the item: not comparable — its score measures where
the right answers sit, not the model (a model answering "A" to everything was placed
"comparable", rank 14 of 17, on 97d5833)."""

MIN_PROFILE_ITEMS = 10
"""Fewer answered items on a benchmark: no response check there (too few to tell)."""

DEFAULT_LETTERS = "ABCDE"
"""The option letters an item is read against when its options are not known (the panel holds
no option text): a letter beyond them is never read as an answer."""

_CAUSE = {
    "empty": "of the answers were empty",
    "unreadable": "of the answers to option or yes/no questions held no answer the parser "
    "could read",
    "truncated": "of the answers stopped at the token budget",
    "misread": "of the answers the parser read as wrong hold the gold answer",
    "top_excess": "more of the readable answers are one option than of the gold answers",
    "yes": "of the yes/no answers are yes",
    "mismatched": "of the answers are of another type than the question asks (an option letter "
    "to an open question, or a number to an option question)",
}


@dataclass(frozen=True)
class AnswerKey:
    """What reading one benchmark's answers needs: ``kind`` (``mcq``, ``yorn`` or ``open``),
    per item its options (letter → text; {} where unknown) and gold answer (a letter, Yes/No,
    or text; None where unknown)."""

    kind: str
    options: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    gold: Mapping[str, str | None] = field(default_factory=dict)


_STATED = re.compile(r"(?i)\banswer\b(?:\s+is)?\s*[:：]?\s*\**\(?([A-J])\)?\**(?![A-Za-z])")
"""An answer stated as such, anywhere in the text: "Answer: (B)", "the answer is B.",
"answer is **C**" — what a verbose model that answers writes after its reasoning."""

_LONE_PAREN = re.compile(r"\(([A-J])\)")

_LONE_LETTER = re.compile(r"^\W*\(?([A-J])\)?[.:)]?\W*$")
"""A response that is one option letter and nothing else ("E", "(B)", "C.")."""

_NUMBER = re.compile(r"^\W*[-+]?\d+(?:[.,]\d+)?\W*$")
"""A response that is one number and nothing else ("12", "3.5", "-2")."""


def answer_type_mismatch(response: str, kind: str) -> bool:
    """True where ``response`` is of another type than an item of ``kind`` asks: a lone option
    letter to an open question, a lone number to an option question."""
    text = str(response)
    if kind == "open":
        return bool(_LONE_LETTER.match(text))
    if kind == "mcq":
        return bool(_NUMBER.match(text))
    return False


def guess_chance(kind: str, options: Mapping[str, str] | None) -> float:
    """The chance that a guess is right on one item: 1/k for ``k`` options (the
    :data:`DEFAULT_LETTERS` where unknown), 1/2 for yes/no, 0 for an open answer."""
    if kind == "mcq":
        return 1.0 / len(options or DEFAULT_LETTERS)
    return 0.5 if kind == "yorn" else 0.0


def read_answer(response: str, kind: str, options: Mapping[str, str] | None) -> str | None:
    """The answer read from ``response``: an option letter (``mcq``), ``Yes``/``No``
    (``yorn``), the stripped text (``open``); None when none can be read (a refusal included).

    An option letter is read by VLMEvalKit's exact-matching rule, else — so that a verbose but
    answering model is not counted unreadable — from the last answer stated as such ("…, so the
    answer is (B)"), else from a parenthesised letter that is the only one in the text; a
    letter that is no option of the item is never read."""
    text = str(response)
    if not text.strip():
        return None
    if kind == "mcq":
        choices = dict(options) if options else {c: "" for c in DEFAULT_LETTERS}
        got = builtin_can_infer(text, choices)
        if isinstance(got, str):
            return got if got != "Z" else None
        stated = [m.group(1).upper() for m in _STATED.finditer(text)]
        if stated and stated[-1] in choices:
            return stated[-1]
        lone = {m.group(1) for m in _LONE_PAREN.finditer(text)}
        if len(lone) == 1 and (letter := lone.pop()) in choices:
            return letter
        return None
    if kind == "yorn":
        said = builtin_yorn(text)
        return None if said == "Unknown" else said
    return text.strip()


def response_profiles(responses: pd.DataFrame, facts: Mapping[str, AnswerKey]) -> pd.DataFrame:
    """One profile row per (model, benchmark) of ``responses`` (columns ``model``,
    ``benchmark``, ``item_id``, ``response``; optional ``finish_reason``, ``score``); rows whose
    response is None (failed, not answered) are not counted. ``facts``: benchmark → its
    :class:`AnswerKey` (a benchmark without facts is read as open-answer)."""
    rows: list[dict[str, Any]] = []
    if responses.empty:
        return pd.DataFrame(columns=list(PROFILE_COLUMNS))
    has_finish = "finish_reason" in responses.columns
    has_score = "score" in responses.columns
    for (model, bench), g in responses.groupby(["model", "benchmark"], sort=True):
        g = g[g["response"].notna()]
        f = facts.get(str(bench), AnswerKey("open"))
        n = len(g)
        if n == 0:
            continue
        texts = [str(r) for r in g["response"]]
        ids = [str(i) for i in g["item_id"]]
        lettered = any(f.options.values())  # any item of the benchmark has options
        kinds = [_item_kind(f, i, lettered) for i in ids]
        read = [
            read_answer(t, k, f.options.get(i)) for t, k, i in zip(texts, kinds, ids, strict=True)
        ]
        chances = np.array(
            [guess_chance(k, f.options.get(i)) for k, i in zip(kinds, ids, strict=True)]
        )
        empty = np.array([not t.strip() for t in texts])
        readable = np.array([a is not None for a in read])
        choice = np.array([k in ("mcq", "yorn") for k in kinds])
        row: dict[str, Any] = {
            "model": str(model),
            "benchmark": str(bench),
            "n": n,
            "empty": float(empty.mean()),
            "unreadable": (
                float((~readable & ~empty & choice).sum() / choice.sum())
                if choice.any()
                else np.nan
            ),
            "truncated": np.nan,
            "misread": np.nan,
            "top_option": np.nan,
            "top_letter": None,
            "top_excess": np.nan,
            "yes": np.nan,
            "length": float(np.median([len(t) for t in texts])),
            "mismatched": float(
                np.mean([answer_type_mismatch(t, k) for t, k in zip(texts, kinds, strict=True)])
            ),
            "chance": float(chances.mean()),
            "chance_sd": float(np.sqrt(np.sum(chances * (1.0 - chances))) / n),
            "score": np.nan,
        }
        if has_finish:
            fin = g["finish_reason"]
            if fin.notna().any():
                reason = fin.astype(str).str.strip().str.lower()
                row["truncated"] = float(reason.isin(TRUNCATED_REASONS).mean())
        scores = (
            pd.to_numeric(g["score"], errors="coerce").to_numpy(dtype=float) if has_score else None
        )
        if scores is not None and np.isfinite(scores).all():
            row["score"] = float(scores.mean())
        if scores is not None and choice.any():
            gold = [f.gold.get(i) for i in ids]
            known = np.array([x is not None for x in gold]) & np.isfinite(scores) & choice
            if known.any():
                hit = np.array(
                    [a is not None and a == str(x).strip() for a, x in zip(read, gold, strict=True)]
                )
                row["misread"] = float((hit & (scores < 0.5) & known).sum() / known.sum())
        # the readable answers to choice items, each with its item's gold answer (None: unknown)
        pairs = [
            (a, f.gold.get(i))
            for a, k, i in zip(read, kinds, ids, strict=True)
            if a is not None and k != "open"
        ]
        answers = [a for a, _ in pairs]
        if f.kind == "mcq" and answers:
            letters, counts = np.unique(answers, return_counts=True)
            k = int(np.argmax(counts))
            row["top_option"] = float(counts[k] / len(answers))
            row["top_letter"] = str(letters[k])
            known_gold = [x for _, x in pairs if x is not None]
            if known_gold:
                share = float(np.mean([x == row["top_letter"] for x in known_gold]))
                row["top_excess"] = row["top_option"] - share
        if f.kind == "yorn" and answers:
            row["yes"] = float(np.mean([a == "Yes" for a in answers]))
        rows.append(row)
    return pd.DataFrame(rows, columns=list(PROFILE_COLUMNS))


def _item_kind(facts: AnswerKey, item_id: str, lettered: bool) -> str:
    """One item's answer kind: a multiple-choice benchmark's item without options is open where
    other items have options (``lettered``: MATH-Vision mixes both), else read against
    :data:`DEFAULT_LETTERS` (a panel that holds no option text, as MMMU's)."""
    if facts.kind != "mcq" or facts.options.get(item_id):
        return facts.kind
    return "open" if lettered else "mcq"


def _json_values(m: Mapping[str, Any]) -> dict[str, Any]:
    """A profile's or limits' values as JSON keeps them (numpy scalars as Python, NaN → None)."""
    out = {}
    for k, v in m.items():
        v = v.item() if hasattr(v, "item") else v
        out[k] = None if isinstance(v, float) and not np.isfinite(v) else v
    return out


@dataclass(frozen=True)
class ResponseCheck(Document):
    """The response check of one model on one benchmark: ``flags`` (one line per share above its
    limit, naming the cause and the limit's source), ``comparable`` (False where parse failures
    exceed the limit), ``profile`` (the shares) and ``limits`` (the limits used, and ``basis``:
    ``reference`` or ``fixed``)."""

    flags: tuple[str, ...]
    comparable: bool
    profile: Mapping[str, Any] = field(metadata=encoded(_json_values))
    limits: Mapping[str, Any] = field(metadata=encoded(_json_values))
    chance: str | None = optional()
    """Where the score cannot be told from a guesser's on the same items (:data:`CHANCE_Z`):
    the line saying so. Not a flag — a weak model at chance answers the items as asked —, but
    its ranks there are no standing."""

    @property
    def at_chance(self) -> bool:
        """The score cannot be told from a guesser's on the same items."""
        return self.chance is not None


def reference_limits(
    reference: pd.DataFrame | None, benchmark: str, quantile: float = REFERENCE_QUANTILE
) -> dict[str, Any]:
    """The base limit of each share on ``benchmark`` (the run's noise is added by
    :func:`check_profile`): the reference runs' ``quantile`` (with their median, for the message)
    where ``reference`` (a profile table) holds at least :data:`MIN_REFERENCE_RUNS` runs of it,
    else :data:`FIXED_LIMITS`; ``misread`` keeps its fixed limit (see the module docstring)."""
    rows = (
        reference[(reference["benchmark"] == benchmark) & (reference["n"] >= MIN_PROFILE_ITEMS)]
        if reference is not None and not reference.empty
        else None
    )
    out: dict[str, Any] = {"basis": "fixed", **FIXED_LIMITS}
    if rows is None or len(rows) < MIN_REFERENCE_RUNS:
        return out
    out = {"basis": "reference", "reference_runs": len(rows), "quantile": quantile}
    for s in FIXED_LIMITS:
        v = pd.to_numeric(rows[s], errors="coerce").dropna().to_numpy(float) if s in rows else []
        if s != "misread" and len(v) >= MIN_REFERENCE_RUNS:
            out[s] = float(np.quantile(v, quantile))
            out[f"{s}_median"] = float(np.median(v))
        else:
            out[s] = FIXED_LIMITS[s]
    return out


def noise_margin(base: float, n: int) -> float:
    """What a share may exceed ``base`` by over ``n`` items by chance: :data:`NOISE_Z` standard
    errors of a share at max(base, 1/n) (so a base of 0 still allows a stray item or two), plus
    one item."""
    q = min(max(base, 1.0 / n), 1.0)
    return float(NOISE_Z * np.sqrt(q * (1.0 - q) / n) + 1.0 / n)


MIN_REFERENCE_RUNS = 10
"""Fewer reference runs with a profile of a benchmark: the fixed limits apply there."""


TRUNCATED_REASONS = frozenset({"length", "max_tokens", "max_length", "max_output_tokens"})
"""Finish reasons (case-insensitive) that mean the answer stopped at the token budget: OpenAI's
and vLLM's ``length`` and the other APIs' spellings of it."""

READABLE_SHARES = ("top_excess", "yes")
"""Shares taken over the readable answers only, not over every answered item."""


def _share_count(profile: Mapping[str, Any], share: str) -> int:
    """How many answers ``share`` of ``profile`` is a share of: every answered item, or for
    :data:`READABLE_SHARES` the readable ones (n less the empty and unreadable answers)."""
    n = int(profile["n"])
    if share not in READABLE_SHARES:
        return n
    lost = sum(
        float(v)
        for k in ("empty", "unreadable")
        if (v := profile.get(k)) is not None and np.isfinite(v)
    )
    return int(round(n * max(0.0, 1.0 - lost)))


def check_profile(
    profile: Mapping[str, Any], limits: Mapping[str, Any], guesses: bool = False
) -> ResponseCheck:
    """Flag each share of ``profile`` (a :func:`response_profiles` row) above its limit
    (:func:`reference_limits`), naming the cause: "31 % of the answers held no answer the parser
    could read (reference runs: median 0.4 %, limit 3.0 %)". ``guesses``: the harness's
    scorer guesses an option when it reads none (lmms-eval's MMMU), said in the flag. Fewer than
    :data:`MIN_PROFILE_ITEMS` answered items: no flag."""
    flags: list[str] = []
    comparable = parser = True  # parser: no parse failure past its limit
    off_type = False  # answers of another type than the questions ask, past their limit
    if int(profile.get("n", 0)) >= MIN_PROFILE_ITEMS:
        for s, cause in _CAUSE.items():
            v = profile.get(s)
            base = limits.get(s)
            if v is None or base is None or not np.isfinite(v):
                continue
            n = _share_count(profile, s)
            if n < MIN_PROFILE_ITEMS:
                continue  # a share of too few answers (one readable answer of 100: 100 % "A")
            lim = base + noise_margin(base, n)
            if v <= lim:
                continue
            med = limits.get(f"{s}_median")
            if limits.get("basis") == "reference" and med is not None:
                q = round(100 * float(limits.get("quantile", REFERENCE_QUANTILE)))
                where = (
                    f"reference runs: median {100 * med:.1f} %, {q}th percentile "
                    f"{100 * base:.1f} %; limit {100 * lim:.1f} % at {n} items"
                )
            else:
                where = (
                    "no reference run's answers known; "
                    if limits.get("basis") != "reference"
                    else ""
                ) + (
                    f"fixed limit {100 * base:.0f} %, plus the sampling noise of {n} items: "
                    f"{100 * lim:.1f} %"
                )
            what = f"{100 * v:.0f} % {cause}"
            if s == "top_excess" and profile.get("top_letter"):
                what = (
                    f"{100 * profile['top_option']:.0f} % of the readable answers are option "
                    f"{profile['top_letter']}, {100 * v:.0f} points above that option's share "
                    "of the gold answers"
                )
            if s == "unreadable" and guesses:
                what += " (the harness's scorer guessed them at random)"
            if s in PARSE_FAILURES:
                comparable = parser = False
            if s == "mismatched":
                comparable, off_type = False, True
            top = profile.get("top_option") if s == "top_excess" else v
            if s in ("top_excess", "yes") and top is not None and top >= COLLAPSED_SHARE:
                comparable = False
            flags.append(f"{what} ({where})")
    chance = chance_line(profile) if int(profile.get("n", 0)) >= MIN_PROFILE_ITEMS else None
    if not comparable:
        flags.append(
            "this placement is not comparable: "
            + (
                "its scores measure the parser, not the model"
                if not parser
                else "its answers do not answer the questions asked"
                if off_type
                else "its answers are nearly all one answer, so its scores measure where the "
                "right answers sit, not the model"
            )
        )
    return ResponseCheck(tuple(flags), comparable, dict(profile), dict(limits), chance)


def chance_interval(chance: float, sd: float) -> tuple[float, float]:
    """Where a guesser's mean score falls (two-sided :data:`CHANCE_Z`): ``chance`` ± z · ``sd``,
    clipped to [0, 1]."""
    return max(0.0, chance - CHANCE_Z * sd), min(1.0, chance + CHANCE_Z * sd)


def chance_line(profile: Mapping[str, Any]) -> str | None:
    """The line saying a score is at chance level — no higher than the top of a guesser's
    :func:`chance_interval` on the same items (a score below a guesser's, as a model answering
    letters beyond an item's options gets, is no better) —, or None (no score, an open-answer
    benchmark, or a score above)."""
    score, chance, sd = (profile.get(k) for k in ("score", "chance", "chance_sd"))
    if score is None or chance is None or sd is None:
        return None
    if not (np.isfinite(score) and np.isfinite(chance) and chance > 0):
        return None
    lo, hi = chance_interval(float(chance), float(sd))
    if score > hi:
        return None
    return (
        f"score {score:.3f} is no better than chance: a guesser scores {chance:.3f} on these "
        f"{int(profile['n'])} items, 95 % of guessers within [{lo:.3f}, {hi:.3f}]; its ranks "
        "here are no standing"
    )


RECORDS_KINDS = {"mcq": "mcq", "yorn": "yorn", "ocrbench": "open"}
"""A card's ``records_rule`` (VLMEvalKit's scoring rule) → the answer kind the check reads."""


def answer_key(items: pd.DataFrame, benchmark: str, kind: str | None = None) -> AnswerKey:
    """What reading ``benchmark``'s answers needs, from an item table (a panel's ``items``, or
    an import's: ``benchmark``, ``item_id``, ``options`` — JSON, as ``"A. text"`` or as bare texts
    lettered A, B, … —, ``answer``). ``kind`` (mcq, yorn or open) defaults to the benchmark's
    card's ``records_rule``; without one, multiple choice where any item has options, yes/no
    where every gold answer is Yes or No, else open."""
    import json

    rows = items[items["benchmark"] == benchmark] if not items.empty else items
    options: dict[str, dict[str, str]] = {}
    gold: dict[str, str | None] = {}
    for r in rows.itertuples(index=False):
        raw = r.options
        opts = json.loads(raw) if isinstance(raw, str) and raw.startswith("[") else []
        lettered: dict[str, str] = {}
        for k, o in enumerate(opts):
            o = str(o)
            head, _, rest = o.partition(". ")
            if len(head) == 1 and head.isupper() and rest:
                lettered[head] = rest
            else:
                lettered[chr(65 + k)] = o
        options[str(r.item_id)] = lettered
        ans = r.answer
        gold[str(r.item_id)] = None if ans is None or ans != ans else str(ans).strip()
    if kind is None:
        c = _card_of(benchmark)
        kind = RECORDS_KINDS.get((c.records_rule if c else None) or "")
    if kind is None:
        known = [g for g in gold.values() if g is not None]
        if any(options.values()):
            kind = "mcq"
        elif known and all(g in ("Yes", "No") for g in known):
            kind = "yorn"
        else:
            kind = "open"
    return AnswerKey(kind, options, gold)


def _card_of(benchmark: str) -> Any:
    """The card naming ``benchmark`` (by name, alias or VLMEvalKit dataset), else None."""
    from primebench_tasks.data.cards import benchmark_cards

    for c in benchmark_cards():
        if benchmark in c.names or benchmark == c.catalogue.vlmeval_dataset:
            return c
    return None


def harness_guesses(benchmark: str) -> bool:
    """The benchmark's card says its lmms-eval scorer guesses an option it cannot read."""
    c = _card_of(benchmark)
    return (
        c is not None and c.lmms_eval is not None and c.lmms_eval.on_unreadable == "random option"
    )


def check_responses(
    responses: pd.DataFrame, panels: Mapping[str, Any], guessing: bool = False
) -> dict[str, dict[str, ResponseCheck]]:
    """model → benchmark → the response check of that model's answers on that benchmark
    (``responses``: model, benchmark, item_id, response, optional finish_reason and score;
    ``panels``: benchmark → its reference panel, whose ``response_profiles`` give the limits).
    ``guessing``: the run was scored by lmms-eval's task code (its MMMU scorer guesses)."""
    out: dict[str, dict[str, ResponseCheck]] = {}
    for b, panel in panels.items():
        mine = responses[responses["benchmark"] == b]
        if mine.empty:
            continue
        profiles = response_profiles(mine, {b: answer_key(panel.items, b)})
        limits = reference_limits(getattr(panel, "response_profiles", None), b)
        guesses = guessing and harness_guesses(b)
        for row in profiles.to_dict("records"):
            out.setdefault(str(row["model"]), {})[b] = check_profile(row, limits, guesses)
    return out


def pooled_chance_line(profiles: Sequence[Mapping[str, Any]]) -> str | None:
    """:func:`chance_line` over several benchmarks' answers together (item-weighted: the mean
    score over every answered item against a guesser's on the same items), or None where no
    profile has a score or the pooled score is outside a guesser's interval."""
    usable = [
        p
        for p in profiles
        if all(np.isfinite(float(p.get(k, np.nan))) for k in ("score", "chance", "chance_sd"))
        and int(p.get("n", 0)) > 0
    ]
    n = sum(int(p["n"]) for p in usable)
    if n < MIN_PROFILE_ITEMS:
        return None
    pooled = {
        "n": n,
        "score": sum(int(p["n"]) * float(p["score"]) for p in usable) / n,
        "chance": sum(int(p["n"]) * float(p["chance"]) for p in usable) / n,
        "chance_sd": float(np.sqrt(sum((int(p["n"]) * float(p["chance_sd"])) ** 2 for p in usable)))
        / n,
    }
    return chance_line(pooled)
