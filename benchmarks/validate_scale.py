"""Scale of the import and of ``validate`` in the number of models (issue #16, "Scale").

    python benchmarks/validate_scale.py [--import-models 5000,10000,20000] [--items 1000]
        [--validate-models 500,1000,2000,5000] [--splits 20] [--out benchmarks/results]

1. **Import peak**: a wide models × items CSV of 0/1 scores (20 % missing cells) is imported with
   ``import_matrix`` in a fresh process; the peak RSS (``ru_maxrss``) minus the RSS of the same
   process before the import (the interpreter, numpy, pandas, pyarrow) is compared with the dense
   float32 matrix (models × items × 4 bytes). Goal: ≤ 3×.
2. **validate in models**: one held-out split of every selector of ``validate --selectors all``
   at the default retentions and estimators on simulated leaderboards of 5 × ``items``/5 items
   and growing model counts; the exponent is the least-squares slope of log time on log models.
   Goal: about 1 (linear).
3. **20 splits at the largest size**: the same run with ``--splits`` splits, timed. Goal: under
   5 min on 2 cores.

Writes ``validate_scale.json`` and ``validate_scale.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHILD = r"""
import resource, sys, time
import numpy, pandas, pyarrow, pyarrow.csv  # the baseline holds the libraries
from primebench_tasks.data.importers import import_matrix
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
base = rss_mb()
t = time.perf_counter()
panel, rep = import_matrix(sys.argv[1], "bench_x", category="Chart Understanding")
dt = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(base, peak, dt, rep.n_records)
"""


def write_matrix(path: Path, models: int, items: int, seed: int = 0) -> None:
    """models × items CSV, 0/1 with 20 % empty cells, written in row blocks."""
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as f:
        f.write("model," + ",".join(f"q{j}" for j in range(items)) + "\n")
        for s in range(0, models, 1000):
            block = rng.random((min(1000, models - s), items))
            cells = np.where(block < 0.2, "", np.where(block < 0.6, "0", "1"))
            f.write("".join(f"m{s + i:06d}," + ",".join(row) + "\n" for i, row in enumerate(cells)))


def measure_import(models: int, items: int, tmp: Path) -> dict:
    path = tmp / f"m{models}x{items}.csv"
    write_matrix(path, models, items)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], check=True, capture_output=True, text=True
    ).stdout.split()
    base, peak, seconds, records = float(out[0]), float(out[1]), float(out[2]), int(out[3])
    dense = models * items * 4 / 2**20
    row = {
        "models": models,
        "items": items,
        "file_mb": round(path.stat().st_size / 2**20, 1),
        "records": records,
        "dense_float32_mb": round(dense, 1),
        "baseline_rss_mb": round(base, 1),
        "peak_rss_mb": round(peak, 1),
        "import_mb": round(peak - base, 1),
        "ratio_to_dense": round((peak - base) / dense, 2),
        "seconds": round(seconds, 2),
    }
    path.unlink()
    return row


def time_validate(models: int, items: int, splits: int) -> float:
    from primebench_tasks.data.simulate import simulate_leaderboard
    from primebench_tasks.evaluate.protocols import RETENTIONS, run_protocol
    from primebench_tasks.select.registry import resolve

    panel = simulate_leaderboard(models, n_benchmarks=5, seed=0, items=(items // 5, items // 5))
    names, _ = resolve("all", False, binary=True)
    t = time.perf_counter()
    run_protocol(panel, "heldout", names, RETENTIONS, n_splits=splits, seed=0)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--import-models", default="5000,10000,20000")
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--validate-models", default="500,1000,2000,5000")
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    a = ap.parse_args(argv)
    import warnings

    warnings.filterwarnings("ignore", message="Number of distinct clusters")
    res: dict = {"cpus": os.cpu_count(), "import": [], "validate_one_split": []}
    with tempfile.TemporaryDirectory() as tmp:
        for m in (int(x) for x in a.import_models.split(",")):
            res["import"].append(measure_import(m, a.items, Path(tmp)))
            print(res["import"][-1], flush=True)
    ms = [int(x) for x in a.validate_models.split(",")]
    for m in ms:
        s = time_validate(m, a.items, 1)
        res["validate_one_split"].append({"models": m, "items": a.items, "seconds": round(s, 2)})
        print(res["validate_one_split"][-1], flush=True)
    t = np.array([r["seconds"] for r in res["validate_one_split"]])
    res["validate_exponent"] = round(float(np.polyfit(np.log(ms), np.log(t), 1)[0]), 2)
    full = time_validate(ms[-1], a.items, a.splits)
    res["validate_full"] = {
        "models": ms[-1],
        "items": a.items,
        "splits": a.splits,
        "seconds": round(full, 1),
    }
    print(res["validate_full"], flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "validate_scale.json").write_text(json.dumps(res, indent=1) + "\n", "utf-8")
    (a.out / "validate_scale.md").write_text(render(res), "utf-8")
    print(render(res))
    return 0


def render(res: dict) -> str:
    lines = [
        f"Generated by `python benchmarks/validate_scale.py` ({res['cpus']} CPUs).",
        "",
        "| import: models × items | records | file | dense float32 | import RSS (peak − "
        "baseline) | ratio (goal ≤ 3) | time |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in res["import"]:
        lines.append(
            f"| {r['models']:,} × {r['items']:,} | {r['records']:,} | "
            f"{r['file_mb']} MB | {r['dense_float32_mb']} MB | {r['import_mb']} MB | "
            f"{r['ratio_to_dense']}× | {r['seconds']} s |"
        )
    v = res["validate_one_split"]
    f = res["validate_full"]
    lines += [
        "",
        "`validate` (every selector, 6 retentions, 4 estimators), one split: "
        + ", ".join(f"{r['models']:,} models {r['seconds']} s" for r in v)
        + f" — time ∝ models^{res['validate_exponent']} (goal ≈ 1). "
        f"{f['splits']} splits on {f['models']:,} × {f['items']:,}: {f['seconds']} s "
        f"(goal < 300 s: {'met' if f['seconds'] < 300 else 'not met'}).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
