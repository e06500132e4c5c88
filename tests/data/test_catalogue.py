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
