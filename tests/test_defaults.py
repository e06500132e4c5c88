"""Every default is defined once: no function or dataclass field of the library restates a
method constant as a literal (it names the constant of its defaults module instead), so changing
a default changes it everywhere (the floor, k, the retention, τ, α, the estimator, the bootstrap
resamples, the adaptive round, ...)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMES = {
    "floor",
    "k",
    "retention",
    "tau",
    "alpha",
    "min_blind_models",
    "estimator",
    "target_rho",
    "level",
    "batch",
    "n_boot",
    "top_share",
    "top_fraction",
    "target_width",
    "max_items",
}
#: literal defaults that are not a method constant, with the reason
ALLOWED = {
    ("metrics.py", "top_k_overlap", "k"): "the metric's own k (top-5 overlap), not Stage 3's",
    ("pipeline/stage2_prune.py", "stage2_factory", "top_share"): "0 = no top reserve (off)",
    ("embed/cache.py", "embed_panel", "batch"): "the encoder's batch size",
}


def _literal_defaults(path: Path):
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            pos = a.args[len(a.args) - len(a.defaults) :]
            pairs = list(zip(pos, a.defaults, strict=True))
            pairs += [(x, d) for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d]
            for arg, d in pairs:
                if arg.arg in NAMES and isinstance(d, ast.Constant) and d.value is not None:
                    yield node.name, arg.arg, d.value
        elif isinstance(node, ast.ClassDef):
            for st in node.body:
                if (
                    isinstance(st, ast.AnnAssign)
                    and isinstance(st.target, ast.Name)
                    and st.target.id in NAMES
                    and isinstance(st.value, ast.Constant)
                    and st.value.value is not None
                ):
                    yield node.name, st.target.id, st.value.value


def test_no_method_default_is_restated_as_a_literal():
    found = []
    for pkg in ("primebench_tasks", "harness_adapters"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT / pkg).as_posix()
            for fn, name, value in _literal_defaults(path):
                if (rel, fn, name) not in ALLOWED:
                    found.append(f"{pkg}/{rel}: {fn}({name}={value!r})")
    assert found == []


def test_the_check_sees_a_restated_default(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f(x, floor: int = 100, *, k=K):\n    pass\nclass P:\n    tau: float = 0.6\n")
    assert list(_literal_defaults(f)) == [("f", "floor", 100), ("P", "tau", 0.6)]
