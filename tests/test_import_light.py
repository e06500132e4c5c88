import subprocess
import sys


def test_import_does_not_pull_heavy_packages():
    code = (
        "import sys, primebench_tasks, primebench_tasks.cli, harness_adapters;"
        "heavy = {'torch', 'transformers', 'lmms_eval', 'vllm'} & set(sys.modules);"
        "print(sorted(heavy)); sys.exit(1 if heavy else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
