"""The README's scale-out table is the committed output of benchmarks/ray_scale.py."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_ray_scale_table_is_the_benchmark_output():
    readme = (ROOT / "README.md").read_text("utf-8")
    m = re.search(r"<!-- ray-scale-table:[^\n]*-->\n(.*?)<!-- /ray-scale-table -->", readme, re.S)
    assert m, "the README lost its ray-scale-table markers"
    committed = (ROOT / "benchmarks" / "results" / "ray_scale.md").read_text("utf-8")
    assert m.group(1) == committed
