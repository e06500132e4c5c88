"""Throughput of the runner on this machine: the runner's own overhead over a bare vLLM loop, and
the Ray path with 1 and 2 replicas on a local cluster.

    python benchmarks/ray_scale.py [--max-new-tokens 16] [--out benchmarks/results]

Same work everywhere: the released ``primebench_mathvision`` suite (100 items) × the tiny Qwen2-VL
and 3 LoRA adapters (400 requests), greedy, the same prompts and images.

1. **Runner overhead** (one engine, in this process): a bare ``LLM.chat`` loop over the prebuilt
   requests (batches of ``--batch-size`` per variant, the adapter's ``LoRARequest``) vs
   ``run_variants`` (builds the requests, scores every answer, fsyncs the records after each
   batch) on the same engine; best of 5 alternating repeats each; goal ratio ≤ 1.05. Also the
   runner's own time outside the engine calls (the part the runner can change).
2. **Ray** (``ray.init(address="local", num_cpus=2)``): ``run_on_ray`` with 1 and 2 replicas — wall time including
   the replicas' engine start, and the steady rate from the first answer to the last — next to
   the single-machine runner (engine start + run).

Writes ``ray_scale.json`` and ``ray_scale.md``; figures are this machine's (2 cores: two CPU
replicas share the same cores, so they cannot be faster than one here — the point of the figure is
the overhead, the scaling is for machines with more devices).
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


REPEATS = 5
"""Alternating bare / runner passes; the best of each is compared (a pass is ~6 s here, and two
passes of the same loop differ by up to 7 %)."""


def _settings() -> Any:
    from harness_adapters.engines.vllm.settings import EngineSettings

    return EngineSettings(
        max_model_len=2048, max_num_seqs=4, enforce_eager=True, max_lora_rank=8, max_loras=3
    )


def runner_overhead(
    work: Path, adapters: list[Any], docs: list[Any], max_new_tokens: int, batch_size: int
) -> dict[str, Any]:
    from vllm import SamplingParams

    from harness_adapters.engines.vllm.backends import OfflineBackend, sampling_kwargs
    from harness_adapters.run.messages import chat_messages
    from harness_adapters.run.records import RecordFile
    from harness_adapters.run.static_loop import run_variants

    t0 = time.perf_counter()
    backend = OfflineBackend(str(work / "base"), adapters, _settings(), max_new_tokens)
    start = time.perf_counter() - t0
    msgs = [chat_messages(d) for d in docs]
    sp = SamplingParams(**sampling_kwargs(max_new_tokens))
    variants: list[str | None] = [None, *[a.name for a in adapters]]

    def bare() -> float:
        t = time.perf_counter()
        for v in variants:
            lora = backend._lora(v)
            for k in range(0, len(msgs), batch_size):
                backend.llm.chat(msgs[k : k + batch_size], sp, lora_request=lora, use_tqdm=False)
        return time.perf_counter() - t

    class Timed:
        """The backend, timing its generate calls (the engine's share of a runner pass)."""

        kind = backend.kind

        def __init__(self) -> None:
            self.inside = 0.0

        def generate(self, *a: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return backend.generate(*a, **kw)
            finally:
                self.inside += time.perf_counter() - t

    def runner(k: int) -> tuple[float, float]:
        rec = RecordFile(work / f"records_{k}.jsonl")
        timed = Timed()
        t = time.perf_counter()
        run_variants(timed, docs, "tiny", variants, rec, "bench", batch_size, None)  # type: ignore[arg-type]
        total = time.perf_counter() - t
        return total, total - timed.inside

    bare()  # warm-up: the first pass loads every adapter once
    times_bare, times_runner, outside = [], [], []
    for k in range(REPEATS):
        times_bare.append(bare())
        total, own = runner(k)
        times_runner.append(total)
        outside.append(own)
    n = len(msgs) * len(variants)
    b, r = min(times_bare), min(times_runner)
    own = min(outside)
    return {
        "requests": n,
        "repeats": REPEATS,
        "engine_start_s": round(start, 2),
        "bare_llm_chat_s": round(b, 2),
        "runner_s": round(r, 2),
        "ratio": round(r / b, 3),
        "runner_outside_engine_s": round(own, 3),
        "ratio_outside_engine": round((b + own) / b, 3),
        "bare_items_per_s": round(n / b, 2),
        "runner_items_per_s": round(n / r, 2),
    }


def ray_runs(
    work: Path, adapters: list[Any], docs: list[Any], max_new_tokens: int, batch_size: int
) -> list[dict[str, Any]]:
    import ray

    from harness_adapters.engines.vllm import ray_runner
    from harness_adapters.run.records import RecordFile

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)

    class TimedRecords(RecordFile):
        """Notes when the first answers arrive."""

        first: float | None = None

        def append(self, records: Any, skip_done: bool = True) -> int:
            rows = list(records)
            if rows and self.first is None:
                self.first = time.perf_counter()
            return super().append(rows, skip_done)

    out = []
    for replicas in (1, 2):
        rec = TimedRecords(work / f"ray_{replicas}.jsonl")
        t0 = time.perf_counter()
        summary = ray_runner.run_on_ray(
            docs,
            "tiny",
            str(work / "base"),
            adapters,
            [None, *[a.name for a in adapters]],
            rec,
            "bench",
            _settings(),
            replicas=replicas,
            batch_size=batch_size,
            max_new_tokens=max_new_tokens,
        )
        end = time.perf_counter()
        n = sum(summary.scored.values())
        first = rec.first or end
        out.append(
            {
                "replicas": replicas,
                "requests": n,
                "wall_s": round(end - t0, 2),
                "first_answer_after_s": round(first - t0, 2),
                "steady_items_per_s": round(n / max(end - first, 1e-9), 2),
            }
        )
    ray.shutdown()
    return out


def markdown(doc: dict[str, Any]) -> str:
    o = doc["runner_overhead"]
    single = o["engine_start_s"] + o["runner_s"]
    lines = [
        "# Runner overhead and the Ray path (`python benchmarks/ray_scale.py`)",
        "",
        f"{doc['machine']}; suite {doc['suite']} × {doc['variants']} variants = "
        f"{o['requests']} requests, tiny Qwen2-VL, {doc['max_new_tokens']} new tokens, "
        f"batches of {doc['batch_size']}.",
        "",
        "| path | wall (s) | items/s | vs |",
        "|---|---|---|---|",
        f"| bare `LLM.chat` loop (engine already up) | {o['bare_llm_chat_s']} | "
        f"{o['bare_items_per_s']} | — |",
        f"| `primebench run` loop, same engine | {o['runner_s']} | {o['runner_items_per_s']} "
        f"| **{o['ratio']}×** the bare loop (goal ≤ 1.05) |",
        f"| of which the runner's own work outside the engine calls | "
        f"{o['runner_outside_engine_s']} | — | {o['ratio_outside_engine']}× |",
        f"| single machine: engine start + run | {single:.2f} | {o['requests'] / single:.2f} | — |",
    ]
    for r in doc["ray"]:
        lines.append(
            f"| Ray, {r['replicas']} replica(s): start + run | {r['wall_s']} | "
            f"{r['requests'] / r['wall_s']:.2f} (steady {r['steady_items_per_s']}) | "
            f"{r['wall_s'] / single:.2f}× the single machine |"
        )
    lines += [
        "",
        "Two CPU replicas share this machine's 2 cores, so they add an engine start "
        "and no speed here; on a machine with one device per replica the steady rate "
        "scales with the replicas (the GPU check measures that when a GPU is lent).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    ap.add_argument(
        "--overhead-only",
        action="store_true",
        help="measure the runner overhead only and print it (writes nothing)",
    )
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from harness_adapters.engines.vllm.backends import Adapter
    from harness_adapters.engines.vllm.tiny_model import build_lora_adapter, build_tiny_qwen2vl
    from harness_adapters.suites.documents import suite_docs
    from harness_adapters.suites.released import resolve_suite
    from primebench_tasks.data.panel import Panel

    work = Path(tempfile.mkdtemp(prefix="ray_scale_"))
    build_tiny_qwen2vl(work / "base")
    adapters = [
        Adapter(
            f"lora{i + 1}", build_lora_adapter(work / "base", work / f"lora{i + 1}", seed=i + 1), 8
        )
        for i in range(3)
    ]
    suite = resolve_suite("primebench_mathvision")
    docs = suite_docs(suite, Panel.load_default("mathvision"))
    doc = {
        "machine": f"{os.cpu_count()} CPU cores, no GPU",
        "suite": suite["name"],
        "variants": 4,
        "max_new_tokens": args.max_new_tokens,
        "batch_size": args.batch_size,
        "runner_overhead": runner_overhead(
            work, adapters, docs, args.max_new_tokens, args.batch_size
        ),
    }
    if args.overhead_only:
        print(json.dumps(doc["runner_overhead"], indent=2))
        return 0
    doc["ray"] = ray_runs(work, adapters, docs, args.max_new_tokens, args.batch_size)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ray_scale.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    (out / "ray_scale.md").write_text(markdown(doc))
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
