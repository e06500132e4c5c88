"""Graders against hand-written answers (the harness's answer match comes in as Matchers)."""

import pytest

from harness_adapters.lmms_eval_upstream.functions import exact_answer_score, extract_answer
from primebench_tasks.prism import graders as g

M = g.Matchers(exact_answer_score, extract_answer)
MC = {"question": "Which?", "options": ["3", "4", "5"], "answer": "B", "image": None}


class Judge:
    id = "j"

    def __init__(self, replies):
        self.replies, self.seen = list(replies), []

    def complete_many(self, reqs):
        self.seen += reqs
        return [self.replies.pop(0) for _ in reqs]


def test_if_mean_compliance():
    payload = {
        "constraints": [{"id": "all_caps", "params": {}}, {"id": "max_words", "params": {"n": 3}}]
    }
    assert g.grade_if(payload, "ANSWER: B") == 1.0
    assert g.grade_if(payload, "THE ANSWER IS B") == 0.5
    assert g.grade_if(payload, "the answer is option b") == 0.0


@pytest.mark.parametrize(
    "count,answer,score",
    [
        (12, "There are 12 apples.", 1.0),
        (12, "12", 1.0),
        (12, "I count 3 rows, 13 in all", 0.0),
        (12, "many", 0.0),
        (7, "Between 5 and 7", 1.0),
    ],
)
def test_count_is_exact_last_integer(count, answer, score):
    assert g.grade_count(count, answer) == score


@pytest.mark.parametrize(
    "gold,answer,score",
    [
        ("B", "B", 1.0),
        ("B", "Caption B is accurate.", 1.0),
        ("A", "b", 0.0),
        ("A", "(A)", 1.0),
        ("A", "Neither", 0.0),
    ],
)
def test_ab_choice(gold, answer, score):
    assert g.grade_ab(gold, answer) == score


def test_q_rules_and_judge():
    assert g.grade_q([MC, MC], ["B", "The answer is C"], None, M) == [1.0, 0.0]
    j = Judge(['{"correct": true}', "I refuse", '{"correct": false}'])
    assert g.grade_q([MC] * 3, ["B", "B", "A"], j, M) == [1.0, None, 0.0]  # None: unanswered
    assert "Gold answer: B" in j.seen[0].prompt and j.seen[0].pattern


def test_h_refusal_rule_and_judge():
    p = {"question": "What colour is the giraffe?", "trap": "there is no giraffe"}
    assert g.grade_h([p, p], ["There is no giraffe in the image.", "It is yellow."], None) == [
        1.0,
        0.0,
    ]
    j = Judge(['{"correct": false}'])
    assert g.grade_h([p], ["It is yellow."], j) == [0.0]
    assert "there is no giraffe" in j.seen[0].prompt


def test_mq_all_or_nothing_and_partial():
    payload = {"extra": [{"q": "How many circles?", "a": "3"}, {"q": "Line colour?", "a": "red"}]}
    assert g.split_mq_answers("Q1: B\nQ2: 3\n**Q3**: red", 3) == ["B", "3", "red"]
    assert g.split_mq_answers("Q1: B\nQ3: red", 3) == ["B", None, "red"]
    full = g.grade_mq([MC], [payload], ["Q1: B\nQ2: 3 circles\nQ3: It is red."], None, M)
    assert full == [(1.0, 1.0)]
    part = g.grade_mq([MC], [payload], ["Q1: B\nQ2: 4\nQ3: red"], None, M)
    assert part == [(0.0, pytest.approx(2 / 3))]
    missing = g.grade_mq([MC], [payload], ["B, 3, red"], None, M)
    assert missing == [(0.0, 0.0)]
    j = Judge(['{"correct": [true, true, false]}', '{"correct": [true, true]}'])
    out = g.grade_mq([MC, MC], [payload, payload], ["x", "y"], j, M)
    assert out == [(0.0, pytest.approx(2 / 3)), None]  # wrong length: unanswered
    assert "Gold answer to Q3: red" in j.seen[0].prompt


def test_sc_flip_detection_and_adoption():
    assert g.same_answers([MC, MC], ["B", "The answer is B"], ["Still B.", "C"], None, M) == [
        True,
        False,
    ]
    j = Judge(['{"same": false}', "?"])
    assert g.same_answers([MC, MC], ["B", "B"], ["B", "B"], j, M) == [False, None]
    assert g.adopted_hint(MC, "C", "You are right, it is C.", M)
    assert not g.adopted_hint(MC, "C", "A", M)


def test_mq_verdict_pattern_fixes_the_bundle_size():
    import re

    from primebench_tasks.prism.prompts import mq_verdict_pattern

    assert re.fullmatch(mq_verdict_pattern(3), '{"correct":[true,false,true]}')
    assert not re.fullmatch(mq_verdict_pattern(3), '{"correct":[true,false]}')
    assert not re.fullmatch(mq_verdict_pattern(3), '{"correct":[true,false,true,true]}')


def test_unverifiable_constraint_is_excluded_not_zero():
    assert g.grade_if({"constraints": [{"id": "rhymes", "params": {}}]}, "x") is None
    assert g.grade_if({"constraints": [{"id": "max_words", "params": {}}]}, "x") is None
    assert g.grade_if({"constraints": []}, "x") is None
