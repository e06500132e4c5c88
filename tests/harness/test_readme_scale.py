"""The scale-out table in the docs is the committed output of benchmarks/ray_scale.py."""

from pathlib import Path

from tests.docs import doc_block

ROOT = Path(__file__).resolve().parents[2]


def test_readme_ray_scale_table_is_the_benchmark_output():
    committed = (ROOT / "benchmarks" / "results" / "ray_scale.md").read_text("utf-8")
    assert doc_block("ray-scale-table") == committed
