import subprocess
import sys


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_import_does_not_pull_heavy_packages():
    r = _run(
        "import sys, primebench_tasks, primebench_tasks.cli, harness_adapters;"
        "heavy = {'torch', 'transformers', 'lmms_eval', 'vllm'} & set(sys.modules);"
        "print(sorted(heavy)); sys.exit(1 if heavy else 0)"
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_public_api_is_complete_and_lazy():
    r = _run(
        "import sys, primebench_tasks as p;"
        "assert 'pandas' not in sys.modules and 'numpy' not in sys.modules, 'import is heavy';"
        "missing = [n for n in p.__all__ if getattr(p, n, None) is None];"
        "assert not missing, missing;"
        "assert p.DEFAULT_SELECTOR in p.SELECTORS;"
        "print('ok')"
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_help_builds_without_the_numerical_stack():
    """``primebench --help`` (every plugin's commands included) imports no numpy, pandas,
    pyarrow, scipy or scikit-learn: it answers in a fraction of a second."""
    r = _run(
        "import sys; from primebench_tasks.cli import build_parser; build_parser();"
        "heavy = {'numpy', 'pandas', 'pyarrow', 'scipy', 'sklearn', 'torch'} & set(sys.modules);"
        "print(sorted(heavy)); sys.exit(1 if heavy else 0)"
    )
    assert r.returncode == 0, r.stdout + r.stderr
