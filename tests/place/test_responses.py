"""The response check's formulas by hand: reading an answer, a profile's shares, the limits from
the reference runs' profiles, and the flag with its cause."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.place.responses import (
    FIXED_LIMITS,
    AnswerKey,
    check_profile,
    noise_margin,
    read_answer,
    reference_limits,
    response_profiles,
)

OPTIONS = {"A": "cat", "B": "dog"}


@pytest.mark.parametrize(
    "text, got",
    [
        ("(B)", "B"),
        ("Answer: (B)", "B"),
        ("The answer is b", "B"),
        ("dog", "B"),
        ("", None),
        ("I think so", None),
        ("Cannot determine the answer", None),  # a refusal is no answer
        # a verbose model that answers: the answer stated as such, or its one lettered choice
        ("The answer is (B), because the figure shows four legs and a tail, as dogs have", "B"),
        ("Looking at the figure and at option (B), which fits every detail we have seen", "B"),
        ("Reading the figure again, the answer is (Q) of the ones we were given here", None),
    ],
)
def test_an_option_is_read_as_vlmevalkit_reads_it(text, got):
    assert read_answer(text, "mcq", OPTIONS) == got


def test_yes_no_and_open_answers():
    assert read_answer("Yes, it is.", "yorn", None) == "Yes"
    assert read_answer("maybe", "yorn", None) is None
    assert read_answer("  42 ", "open", None) == "42"


def test_a_profile_by_hand():
    """4 answers to items with options A = cat, B = dog; gold A, A, B, B; responses "A", "",
    "I think so", "B", scored 1, 0, 0, 0 (the harness misread the last): empty 1/4, unreadable
    1/4 (the third), misread 1/4 (the fourth reads B = gold, scored 0), the readable letters
    A, B → the top option's share ½ (A, the first of a tie) and its excess over the gold
    answers of those items (A, B: ½ are A) 0, median length of 1, 0, 10, 1 = 1, truncated 1/4
    (one finish reason ``length``)."""
    responses = pd.DataFrame(
        {
            "model": "m",
            "benchmark": "X",
            "item_id": ["1", "2", "3", "4"],
            "response": ["A", "", "I think so", "B"],
            "score": [1.0, 0.0, 0.0, 0.0],
            "finish_reason": ["stop", "stop", "length", "stop"],
        }
    )
    facts = AnswerKey("mcq", {i: OPTIONS for i in "1234"}, {"1": "A", "2": "A", "3": "B", "4": "B"})
    (row,) = response_profiles(responses, {"X": facts}).to_dict("records")
    assert row["n"] == 4 and row["empty"] == row["unreadable"] == row["misread"] == 0.25
    assert row["truncated"] == 0.25 and row["top_option"] == 0.5 and row["top_letter"] == "A"
    assert row["top_excess"] == 0.0 and row["length"] == 1.0 and np.isnan(row["yes"])
    # the other APIs' spellings of "stopped at the token budget" count too (not silently 0)
    other = responses.assign(finish_reason=["stop", "MAX_TOKENS", "max_tokens", "stop"])
    (row,) = response_profiles(other, {"X": facts}).to_dict("records")
    assert row["truncated"] == 0.5


def test_an_item_without_options_in_a_mixed_benchmark_is_open():
    """MATH-Vision mixes lettered and numeric items: a number answer to an item without options
    is no unreadable answer; on a panel without any option text (MMMU's) a letter is read."""
    responses = pd.DataFrame(
        {"model": "m", "benchmark": "X", "item_id": ["1", "2"], "response": ["6", "C"]}
    )
    mixed = AnswerKey("mcq", {"1": {}, "2": {"A": "x", "B": "y", "C": "z"}}, {})
    (row,) = response_profiles(responses, {"X": mixed}).to_dict("records")
    assert row["unreadable"] == 0.0
    bare = AnswerKey("mcq", {}, {})
    (row,) = response_profiles(responses, {"X": bare}).to_dict("records")
    assert row["unreadable"] == 0.5  # "6" is no letter of A–E


def test_limits_from_the_reference_runs_by_hand():
    """10 reference runs, unreadable 0 × 9 and 0.1: the 99th percentile (linear) sits at
    position 0.99 · 9 = 8.91 between 0 and 0.1 → 0.091; a share without 10 values keeps its
    fixed limit; fewer than 10 runs: the fixed limits. The noise a run's share may add over
    100 items at a base of 0.091: 2.33 · √(0.091 · 0.909 / 100) + 1/100 = 0.0770; at a base of
    0, the share of one item stands in: 2.33 · √(0.01 · 0.99 / 100) + 0.01 = 0.0332."""
    ref = pd.DataFrame(
        {
            "model": [f"r{k}" for k in range(10)],
            "benchmark": "X",
            "n": 100,
            "empty": 0.0,
            "unreadable": [0.0] * 9 + [0.1],
            "truncated": np.nan,
        }
    )
    lim = reference_limits(ref, "X")
    assert lim["basis"] == "reference" and lim["reference_runs"] == 10
    assert lim["unreadable"] == pytest.approx(0.091)
    assert noise_margin(0.091, 100) == pytest.approx(0.0770, abs=1e-4)
    assert noise_margin(0.0, 100) == pytest.approx(0.0332, abs=1e-4)
    assert lim["unreadable_median"] == 0.0
    assert lim["truncated"] == FIXED_LIMITS["truncated"]
    assert reference_limits(ref.head(9), "X")["basis"] == "fixed"


def test_a_flag_names_its_cause_and_parse_failures_are_not_comparable():
    lim = {
        "basis": "reference",
        "quantile": 0.99,
        "unreadable": 0.0,
        "unreadable_median": 0.0,
        "top_excess": 0.2,
    }
    row = {"n": 100, "unreadable": 0.31, "top_option": 0.5, "top_excess": 0.1, "top_letter": "A"}
    check = check_profile(row, lim, guesses=True)
    assert not check.comparable
    assert check.flags[0] == (
        "31 % of the answers to option or yes/no questions held no answer the parser could "
        "read (the harness's scorer "
        "guessed them at random) (reference runs: median 0.0 %, 99th percentile 0.0 %; limit "
        "3.3 % at 100 items)"
    )
    assert "not comparable" in check.flags[-1]
    # an option bias flags but stays comparable (the scores still measure the model)
    biased = {"n": 100, "top_option": 0.8, "top_excess": 0.55, "top_letter": "A"}
    bias = check_profile(biased, lim)
    assert bias.comparable
    assert bias.flags[0].startswith(
        "80 % of the readable answers are option A, 55 points above that option's share of the "
        "gold answers"
    )
    # #79: nearly every answer one option — "A" to everything — is not comparable (it was,
    # rank 14 of 17): its score measures where the right answers sit
    always_a = check_profile(
        {"n": 100, "top_option": 1.0, "top_excess": 0.75, "top_letter": "A"}, lim
    )
    assert not always_a.comparable
    assert "nearly all one answer" in always_a.flags[-1]
    always_yes = check_profile({"n": 100, "yes": 0.97}, {"basis": "fixed", "yes": 0.85})
    assert not always_yes.comparable
    # too few answered items: no verdict
    assert check_profile({**row, "n": 5}, lim).flags == ()


def test_a_share_of_too_few_readable_answers_is_not_flagged():
    """On 4d9a95b one readable answer of 100 ("A") flagged "100 % of the readable answers are
    option A"; the top-option and yes shares are shares of the readable answers, so they are
    judged on that count: here 100 × (1 − 0.02 − 0.90) = 8 readable, fewer than 10 — only the
    unreadable share flags. With 40 readable the same bias flags, its noise taken at 40."""
    lim = {"basis": "fixed", "unreadable": 0.03, "empty": 0.02, "top_excess": 0.3}
    few = {"n": 100, "empty": 0.02, "unreadable": 0.9, "top_option": 1.0, "top_excess": 0.75,
           "top_letter": "A"}  # fmt: skip
    flags = check_profile(few, lim).flags
    assert not any("option A" in f for f in flags) and any("could read" in f for f in flags)
    many = {**few, "unreadable": 0.58}  # 40 readable
    assert any(
        "100 % of the readable answers are option A" in f for f in check_profile(many, lim).flags
    )


def test_an_answer_of_another_type_than_the_question_asks_is_read_as_such():
    """Battery 7: a letter to MATH-Vision's "How many bricks are missing?" went unnoticed."""
    from primebench_tasks.place.responses import answer_type_mismatch

    assert answer_type_mismatch("E", "open") and answer_type_mismatch("(B).", "open")
    assert not answer_type_mismatch("12", "open") and not answer_type_mismatch("Eight", "open")
    assert answer_type_mismatch("12", "mcq") and answer_type_mismatch(" 3.5 ", "mcq")
    assert not answer_type_mismatch("B", "mcq") and not answer_type_mismatch("12 (C)", "mcq")
    assert not answer_type_mismatch("Yes", "yorn")


def test_the_chance_level_by_hand():
    """Ten items of four options and ten of two: a guesser expects (10/4 + 10/2) / 20 = 0.375,
    with sd √(10·¼·¾ + 10·½·½) / 20 = √4.375 / 20 = 0.10458; 95 % of guessers within
    0.375 ± 1.96 · 0.10458 = [0.170, 0.580]."""
    from primebench_tasks.place.responses import chance_line

    ids = [str(k) for k in range(20)]
    options = {
        i: ({c: c for c in "ABCD"} if k < 10 else {"A": "a", "B": "b"}) for k, i in enumerate(ids)
    }
    key = AnswerKey("mcq", options, {})
    responses = pd.DataFrame(
        {"model": "m", "benchmark": "B", "item_id": ids, "response": ["A", "B"] * 10,
         "score": [1.0] * 9 + [0.0] * 11}
    )  # fmt: skip
    (p,) = response_profiles(responses, {"B": key}).to_dict("records")
    assert p["chance"] == pytest.approx(0.375)
    assert p["chance_sd"] == pytest.approx(np.sqrt(4.375) / 20)
    assert p["score"] == pytest.approx(0.45) and p["mismatched"] == 0.0
    line = chance_line(p)
    assert line is not None and "a guesser scores 0.375 on these 20 items" in line
    assert "[0.170, 0.580]" in line
    assert chance_line({**p, "score": 0.59}) is None
    assert "0.160 is no better than chance" in str(chance_line({**p, "score": 0.16}))  # below
    assert chance_line({**p, "chance": 0.0, "chance_sd": 0.0}) is None  # open answers: no guess
    check = check_profile(p, reference_limits(None, "B"))
    # at chance is said, not flagged: a weak model at chance answers the items as asked
    assert check.at_chance and check.comparable and check.chance == line and not check.flags
    assert not check_profile({**p, "score": 0.9}, reference_limits(None, "B")).at_chance


def test_letters_to_open_questions_make_a_run_not_comparable():
    ids = [str(k) for k in range(40)]
    key = AnswerKey(
        "mcq", {i: ({"A": "1", "B": "2"} if k < 20 else {}) for k, i in enumerate(ids)}, {}
    )
    # MATH-Vision mixes option and open items: the open half answered with letters
    responses = pd.DataFrame(
        {"model": "m", "benchmark": "B", "item_id": ids, "response": ["A"] * 40, "score": 0.0}
    )
    (p,) = response_profiles(responses, {"B": key}).to_dict("records")
    assert p["mismatched"] == 0.5
    check = check_profile(p, reference_limits(None, "B"))
    assert not check.comparable
    assert check.flags[0].startswith("50 % of the answers are of another type than the question")
    assert check.flags[-1].endswith("its answers do not answer the questions asked")
