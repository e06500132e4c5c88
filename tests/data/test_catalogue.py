from pathlib import Path

import pytest

from primebench_tasks.data.catalogue import CATEGORIES, lookup, paper_benchmarks
from primebench_tasks.errors import UnknownBenchmarkError


def test_catalogue_matches_paper_tables_4_and_5():
    specs = paper_benchmarks()
    assert len(specs) == 43
    assert {s.category for s in specs} == set(CATEGORIES) and len(CATEGORIES) == 18
    assert sum(s.items for s in specs) == 386_324
    assert sum(s.all_correct for s in specs) == 42_747
    assert sum(s.blind_solvable for s in specs) == 84_416
    assert sum(s.removed for s in specs) == 115_916
    # the eight benchmarks without enough blind scores (App. B; CharXiv counts twice here)
    assert {s.benchmark for s in specs if not s.blind_runs} == {
        "coco2017_cap_val",
        "mathvista_testmini_cot",
        "olympiadbench_OE_MM_maths_en_COMP",
        "charxiv_val_descriptive",
        "charxiv_val_reasoning",
        "mmvet",
        "mia_bench",
        "llava_bench_coco",
        "llava_in_the_wild",
    }


def test_aliases_of_real_data():
    assert lookup("AI2D_TEST").category == "Science Knowledge"
    assert lookup("MMMU_DEV_VAL").category == "Academic Knowledge"
    assert lookup("MATH-Vision").category == "Math Reasoning"
    assert lookup("HallusionBench").category == "Hallucination Detection"
    assert lookup("MMT-Bench").category == "Multi-Turn/Multilingual"


def test_unknown_benchmark_says_how_to_give_a_category():
    with pytest.raises(UnknownBenchmarkError, match="--category"):
        lookup("my_private_bench")
    assert lookup("my_private_bench", "Chart Understanding").category == "Chart Understanding"
    with pytest.raises(UnknownBenchmarkError, match="unknown category"):
        lookup("my_private_bench", "Nonsense")


FIELDS = ("category", "metric_kind", "score_min", "score_max", "lmms_eval_task", "vlmeval_dataset")


def _disagreements(cards, rows) -> tuple[set[str], list[tuple[str, str, str]]]:
    """(cards some row names, [(card file, row, field)] where they differ): a row names a card
    by the card's name or alias, its VLMEvalKit dataset or its lmms-eval task."""
    matched, out = set(), []
    for c in cards:
        e = c.catalogue
        for r in rows:
            same = (
                r.benchmark in c.names
                or (r.vlmeval_dataset is not None and r.vlmeval_dataset == e.vlmeval_dataset)
                or (r.lmms_eval_task is not None and r.lmms_eval_task == e.lmms_eval_task)
            )
            if same:
                matched.add(c.names[0])
                out += [
                    (Path(c.file).name, r.benchmark, f)
                    for f in FIELDS
                    if getattr(r, f) != getattr(e, f)
                ]
    return matched, out


def test_the_catalogue_agrees_with_the_cards():
    """One registry (#57): the cards. A paper row that names a card's benchmark, its lmms-eval
    task or its VLMEvalKit dataset must say what the card says of it — else a harness would run
    one benchmark's items under the other's name."""
    from primebench_tasks.data.cards import benchmark_cards

    matched, disagreements = _disagreements(benchmark_cards(), paper_benchmarks())
    assert disagreements == []
    # the cards the paper's table has a row for (the others are data sets it did not run)
    assert {"AI2D_TEST", "BLINK", "MMMU_DEV_VAL", "MathVista_MINI", "OCRBench"} <= matched
    assert "MMBench_V11" not in matched  # v1.1: neither lmms-eval's mmbench_en_dev nor the paper's


def test_a_card_row_disagreement_is_caught():
    """The check fails on the disagreements it was written for: the catalogue's MathVista row
    naming lmms-eval's CoT task where the card runs ``mathvista_testmini``, and a v1.1 card
    claiming lmms-eval's v1.0 task."""
    from dataclasses import replace

    from primebench_tasks.data.cards import benchmark_cards

    cards = benchmark_cards()
    rows = [
        replace(r, lmms_eval_task="mathvista_testmini_cot")
        if r.vlmeval_dataset == "MathVista_MINI"
        else r
        for r in paper_benchmarks()
    ]
    v11 = next(c for c in cards if c.names[0] == "MMBench_V11")
    v11 = replace(v11, catalogue=replace(v11.catalogue, lmms_eval_task="mmbench_en_dev"))
    _, found = _disagreements([*cards, v11], rows)
    assert ("MathVista_MINI.toml", "mathvista_testmini_cot", "lmms_eval_task") in found
    assert ("MMBench_V11.toml", "mmbench_en_dev", "vlmeval_dataset") in found
