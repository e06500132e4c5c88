"""What adaptivity costs on the engine: ``primebench run --adaptive`` against a static run of the
same number of items, on one vLLM engine (the tiny Qwen2-VL + 3 LoRA adapters, CPU).

    python benchmarks/adaptive_speed.py [--items 40] [--round-size 5]

Static: the first ``--items`` items of MATH-Vision testmini for each of the 4 variants
(``run_variants``, batches of ``--round-size`` × benchmarks, as a round). Adaptive: ``run_adaptive``
asking ``--items`` per variant in rounds of ``--round-size`` (target width off), on the same
engine, its 2PL fit and calibration included and also reported alone. Best of 3 alternating
passes. Goal (issue #29): ≤ 1.15×. Writes ``benchmarks/results/adaptive_speed.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RESULTS = Path(__file__).resolve().parent / "results"


def markdown(doc: dict[str, Any]) -> str:
    return (
        f"{doc['machine']}; tiny Qwen2-VL + 3 LoRA adapters on one vLLM engine; "
        f"{doc['items']} MATH-Vision testmini items per variant × 4 variants, rounds of "
        f"{doc['round_size']}, {doc['max_new_tokens']} new tokens.\n\n"
        "| run | wall (s) | vs static |\n|---|---|---|\n"
        f"| static (`primebench run`, the same number of items) | {doc['static_s']} | — |\n"
        f"| adaptive (`--adaptive`; the 2PL fits already cached) | {doc['adaptive_s']} | "
        f"**{doc['ratio']}×** (goal ≤ 1.15) |\n"
        f"| + the first fit and calibration of the pool (once per run) | {doc['setup_s']} | "
        f"{doc['ratio_with_setup']}× with it |\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--round-size", type=int, default=5)
    ap.add_argument("--max-new-tokens", type=int, default=16)
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from harness_adapters.engines.vllm.backends import Adapter, OfflineBackend
    from harness_adapters.engines.vllm.settings import EngineSettings
    from harness_adapters.engines.vllm.tiny_model import build_lora_adapter, build_tiny_qwen2vl
    from harness_adapters.run.adaptive_loop import item_pools, run_adaptive
    from harness_adapters.run.records import RecordFile
    from harness_adapters.run.request import RunRequest
    from harness_adapters.run.static_loop import run_variants
    from harness_adapters.suites.documents import SuiteDoc, benchmark_rows
    from harness_adapters.suites.released import resolve_suite
    from primebench_tasks.adaptive.result import AdaptiveSettings
    from primebench_tasks.data.panel import Panel

    work = Path(tempfile.mkdtemp(prefix="adaptive_speed_"))
    build_tiny_qwen2vl(work / "base")
    adapters = {
        f"lora{i}": str(build_lora_adapter(work / "base", work / f"lora{i}", i)) for i in (1, 2, 3)
    }
    settings = EngineSettings(
        max_model_len=2048, max_num_seqs=4, enforce_eager=True, max_lora_rank=8, max_loras=3
    )
    backend = OfflineBackend(
        str(work / "base"),
        [Adapter(n, Path(p), 8) for n, p in adapters.items()],
        settings,
        args.max_new_tokens,
    )
    suite = resolve_suite("primebench_mathvision")
    panel = Panel.load_default("mathvision")
    bench = "MATH-Vision_MINI"
    rows = benchmark_rows(panel, bench)
    docs = [SuiteDoc(r["id"], bench, "Math Reasoning", r) for r in rows[: args.items]]
    variants = [None, *sorted(adapters)]
    ad = AdaptiveSettings(target_width=None, max_items=args.items, round_size=args.round_size)

    def static(k: int) -> float:
        rec = RecordFile(work / f"static_{k}" / "records.jsonl")
        rec.path.parent.mkdir(parents=True)
        t = time.perf_counter()
        run_variants(backend, docs, "tiny", variants, rec, "b", args.round_size, None)
        return time.perf_counter() - t

    def adaptive(k: int) -> float:
        req = RunRequest(
            model=str(work / "base"),
            suite=suite,
            out=work / f"adaptive_{k}",
            adapters=adapters,
            name="tiny",
            max_new_tokens=args.max_new_tokens,
        )
        t = time.perf_counter()
        run_adaptive(req, {bench: panel}, ad, backend=backend)
        return time.perf_counter() - t

    static(99)  # warm-up: every adapter loaded once
    t = time.perf_counter()
    for pool in item_pools(suite, {bench: panel}, ad):
        pool.bench.calibration  # noqa: B018 — replayed on first use: timed here
    setup = time.perf_counter() - t
    s, a = [], []
    for k in range(3):
        s.append(static(k))
        a.append(adaptive(k))
    doc = {
        "machine": f"{os.cpu_count()} CPU cores, no GPU",
        "items": args.items,
        "round_size": args.round_size,
        "max_new_tokens": args.max_new_tokens,
        "static_s": round(min(s), 2),
        "adaptive_s": round(min(a), 2),
        "setup_s": round(setup, 2),
        "ratio": round(min(a) / min(s), 3),
        "ratio_with_setup": round((min(a) + setup) / min(s), 3),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "adaptive_speed.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    (RESULTS / "adaptive_speed.md").write_text(markdown(doc))
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
