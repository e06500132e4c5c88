import pytest

from primebench_tasks.prism.constraints import VERIFIERS, Constraint, if_score, sample_constraints

CASES = [
    ("max_words", {"n": 5}, "Two apples.", "One two three four five six."),
    ("exact_sentences", {"n": 2}, "It is red. It is big.", "It is red."),
    ("all_caps", {}, "THE ANSWER IS B.", "The answer is B."),
    ("all_lowercase", {}, "the answer is b.", "The answer is b."),
    ("include_word", {"word": "because"}, "B, because of the shadow.", "B, since it is dark."),
    ("exclude_word", {"word": "because"}, "B, since it is dark.", "B because it is dark."),
    (
        "json_keys",
        {"keys": ["answer", "reason"]},
        '{"answer": "B", "reason": "dark"}',
        '{"answer": "B"}',
    ),
    ("python_list", {}, '["B", "C"]', "B and C"),
    ("starts_with_answer", {}, "Answer: B", "The answer: B"),
    ("ends_single_sentence", {}, "Reasoning here.\nSo it is B.", "Line.\nIt is B. Sure."),
    ("yes_no_only", {}, "Yes.", "Yes, it is."),
]


def test_pool_has_the_eleven_constraints_of_table_10():
    assert len(VERIFIERS) == 11


@pytest.mark.parametrize("cid, params, good, bad", CASES)
def test_verifiers(cid, params, good, bad):
    c = Constraint(cid, "x", params)
    assert c.verify(good), (cid, good)
    assert not c.verify(bad), (cid, bad)
    assert c.instruction


def test_sampling_is_deterministic_and_compatible():
    counts = set()
    for i in range(200):
        cs = sample_constraints(f"item-{i}")
        assert cs == sample_constraints(f"item-{i}")
        ids = {c.id for c in cs}
        counts.add(len(cs))
        assert not {"all_caps", "all_lowercase"} <= ids
        assert not ({"json_keys", "python_list"} <= ids)
    assert counts == {1, 2, 3}
    cs = [Constraint("all_lowercase", "casing"), Constraint("max_words", "length", {"n": 3})]
    assert if_score("yes it is", cs) == 1.0 and if_score("Yes it is", cs) == 0.5
