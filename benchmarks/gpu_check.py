"""The prepared device check: the released suite through the offline engine, the server backend and
the Ray path, with a random-weight Qwen2-VL and N LoRA adapters built here (no hub), written to
one JSON.

    python benchmarks/gpu_check.py --size 2b --adapters 8 --out gpu_check.json   # a GPU machine
    python benchmarks/gpu_check.py --size tiny --adapters 2 --limit 8 --out x.json  # CPU (CI)

``benchmarks/gpu_check.sh`` installs the project with the CUDA ``vllm`` wheel and runs the first
line. Reported: the device; build time; per backend the engine/server start (s), items/s over
the suite × variants, and for the server the time to first token (streamed, median of 5); the
LoRA switch overhead (first request after switching adapter minus a repeat of it, mean over
adapters) next to the engine start it replaces; a vision-tower adapter (``tower``: peft
``all-linear``) on an engine with tower/connector LoRA beside a language-only one (start, items/s,
answers changed); ``primebench run --adaptive`` against a static run of the same number of items
(wall time ratio); peak memory (GPU: ``nvidia-smi`` polled; CPU: the
process tree's RSS).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _has_gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


class MemoryPeak:
    """Peak GPU memory used (MiB, every GPU summed; nvidia-smi) or peak RSS of this process
    tree (MiB) while running."""

    def __init__(self, gpu: bool) -> None:
        self.gpu, self.peak, self._stop = gpu, 0.0, threading.Event()
        self._t = threading.Thread(target=self._poll, daemon=True)

    def _sample(self) -> float:
        if self.gpu:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
            return float(sum(float(x) for x in out.split() if x.strip()))
        import psutil

        me = psutil.Process()
        procs = [me, *me.children(recursive=True)]
        total = 0
        for p in procs:
            with contextlib.suppress(psutil.Error):  # a child that just exited
                total += p.memory_info().rss
        return total / 2**20

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            time.sleep(0.5)

    def __enter__(self) -> MemoryPeak:
        self._t.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._t.join()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def engine_settings(gpu: bool, max_lora_rank: int, n_adapters: int) -> Any:
    from harness_adapters.engines.vllm.settings import EngineSettings

    return EngineSettings(
        max_model_len=4096 if gpu else 2048,
        max_num_seqs=64 if gpu else 4,
        enforce_eager=not gpu,
        max_lora_rank=max_lora_rank,
        max_loras=max(1, n_adapters),
    )


def run_offline(
    model: Path,
    adapters: list[Any],
    docs: list[Any],
    gpu: bool,
    max_new_tokens: int,
    batch_size: int,
) -> dict[str, Any]:
    from harness_adapters.engines.vllm.backends import OfflineBackend
    from harness_adapters.run.messages import chat_messages

    settings = engine_settings(gpu, max(a.rank for a in adapters), len(adapters))
    t0 = time.perf_counter()
    backend = OfflineBackend(str(model), adapters, settings, max_new_tokens)
    start = time.perf_counter() - t0
    msgs = [chat_messages(d) for d in docs]
    variants: list[str | None] = [None, *[a.name for a in adapters]]
    t0 = time.perf_counter()
    n = 0
    for v in variants:
        for k in range(0, len(msgs), batch_size):
            outs = backend.generate(msgs[k : k + batch_size], v)
            n += sum(not isinstance(o, Exception) for o in outs)
    gen = time.perf_counter() - t0
    switch = []
    for a in adapters:  # a 1-item request right after another adapter, then the same again
        backend.generate(msgs[:1], None)
        t1 = time.perf_counter()
        backend.generate(msgs[:1], a.name)
        cold = time.perf_counter() - t1
        t1 = time.perf_counter()
        backend.generate(msgs[:1], a.name)
        switch.append(cold - (time.perf_counter() - t1))
    del backend
    return {
        "engine_start_s": round(start, 2),
        "items": n,
        "generate_s": round(gen, 2),
        "items_per_s": round(n / gen, 2),
        "adapter_switch_overhead_s": round(statistics.mean(switch), 4),
        "engine_start_per_variant_instead_s": round(start * len(variants), 2),
    }


def run_server(
    model: Path, adapters: list[Any], docs: list[Any], gpu: bool, max_new_tokens: int, work: Path
) -> dict[str, Any]:
    from openai import OpenAI

    from harness_adapters.engines.vllm.backends import (
        ServerBackend,
        stop_server,
        wait_until_healthy,
    )
    from harness_adapters.run.messages import chat_messages

    port = _free_port()
    s = engine_settings(gpu, max(a.rank for a in adapters), len(adapters))
    cmd = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model),
        "--served-model-name",
        "m",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--max-model-len",
        str(s.max_model_len),
        "--max-num-seqs",
        str(s.max_num_seqs),
        "--limit-mm-per-prompt",
        '{"image": 1}',
        "--enable-lora",
        "--max-lora-rank",
        str(s.max_lora_rank),
        "--max-loras",
        str(s.max_loras),
        "--lora-modules",
        *[f"{a.name}={a.path}" for a in adapters],
    ]
    if not gpu:
        cmd.append("--enforce-eager")
    log = open(work / "server.log", "w")  # noqa: SIM115
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, proc, 900, str(work / "server.log"))
        start = time.perf_counter() - t0
        backend = ServerBackend(
            url + "/v1",
            "m",
            [a.name for a in adapters],
            max_new_tokens=max_new_tokens,
            concurrency=s.max_num_seqs,
        )
        msgs = [chat_messages(d) for d in docs]
        t0 = time.perf_counter()
        n = 0
        for v in [None, *[a.name for a in adapters]]:
            n += sum(not isinstance(o, Exception) for o in backend.generate(msgs, v))
        gen = time.perf_counter() - t0
        client = OpenAI(base_url=url + "/v1", api_key="none")
        ttft = []
        for m in msgs[:5]:
            t1 = time.perf_counter()
            stream = client.chat.completions.create(
                model="m", messages=m, stream=True, max_tokens=max_new_tokens, temperature=0
            )
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    ttft.append(time.perf_counter() - t1)
                    break
            stream.close()
        return {
            "server_start_s": round(start, 2),
            "items": n,
            "generate_s": round(gen, 2),
            "items_per_s": round(n / gen, 2),
            "time_to_first_token_s": round(statistics.median(ttft), 4) if ttft else None,
        }
    finally:
        stop_server(proc)
        log.close()


def run_ray(
    model: Path,
    adapters: list[Any],
    docs: list[Any],
    gpu: bool,
    max_new_tokens: int,
    batch_size: int,
    work: Path,
) -> dict[str, Any]:
    import ray

    from harness_adapters.engines.vllm.ray_runner import run_on_ray
    from harness_adapters.run.records import RecordFile

    n_gpus = 0
    if gpu:
        import torch

        n_gpus = torch.cuda.device_count()
    replicas = max(1, n_gpus)
    s = engine_settings(gpu, max(a.rank for a in adapters), len(adapters))
    records = RecordFile(work / "ray_records.jsonl")
    t0 = time.perf_counter()
    summary = run_on_ray(
        docs,
        "m",
        str(model),
        adapters,
        [None, *[a.name for a in adapters]],
        records,
        "gpu-check",
        s,
        replicas=replicas,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
    )
    wall = time.perf_counter() - t0
    ray.shutdown()
    n = sum(summary.scored.values())
    return {
        "replicas": replicas,
        "items": n,
        "wall_s_including_start": round(wall, 2),
        "items_per_s_including_start": round(n / wall, 2),
    }


def run_tower(
    model: Path,
    adapters: list[Any],
    docs: list[Any],
    gpu: bool,
    max_new_tokens: int,
    batch_size: int,
) -> dict[str, Any]:
    """A vision-tower adapter (peft ``all-linear``: tower, connector and text model) beside a
    language-only one on one engine with tower/connector LoRA on, as the runner plans it
    (``lora_scope.check_adapters``): engine start, items/s of each, and whether the tower
    adapter's answers differ from the base model's and the language adapter's."""
    from harness_adapters.engines.vllm.backends import Adapter, OfflineBackend
    from harness_adapters.engines.vllm.lora_scope import check_adapters
    from harness_adapters.run.messages import chat_messages

    tower = Adapter("tower", model.parent / "tower", 8)
    both = [adapters[0], tower]
    plan = check_adapters({a.name: a.path for a in both}, model)
    settings = engine_settings(gpu, 8, len(both))
    settings.enable_tower_connector_lora = plan.tower_lora
    t0 = time.perf_counter()
    backend = OfflineBackend(str(model), both, settings, max_new_tokens)
    start = time.perf_counter() - t0
    msgs = [chat_messages(d) for d in docs]
    answers, rate = {}, {}
    for v in (None, adapters[0].name, "tower"):
        t1 = time.perf_counter()
        outs = []
        for k in range(0, len(msgs), batch_size):
            outs += backend.generate(msgs[k : k + batch_size], v)
        rate[v or "base"] = round(len(msgs) / (time.perf_counter() - t1), 2)
        answers[v or "base"] = [o if isinstance(o, str) else None for o in outs]
    return {
        "tower_lora": plan.tower_lora,
        "tower_modules": len(plan.scopes["tower"].tower) + len(plan.scopes["tower"].connector),
        "engine_start_s": round(start, 2),
        "items_per_s": rate,
        "tower_answers_differ_from_base": answers["tower"] != answers["base"],
        "tower_answers_differ_from_language_adapter": answers["tower"] != answers[adapters[0].name],
    }


def run_adaptive_phase(
    model: Path,
    adapters: list[Any],
    docs: list[Any],
    gpu: bool,
    max_new_tokens: int,
    suite: dict[str, Any],
) -> dict[str, Any]:
    """``primebench run --adaptive`` against a static run of the same number of items per
    variant on one engine (issue #29's goal: adaptive ≤ 1.15× the static wall time)."""
    from harness_adapters.engines.vllm.backends import OfflineBackend
    from harness_adapters.run.adaptive_loop import run_adaptive
    from harness_adapters.run.records import RecordFile
    from harness_adapters.run.request import RunRequest
    from harness_adapters.run.static_loop import run_variants
    from harness_adapters.suites.documents import SuiteDoc, benchmark_rows
    from primebench_tasks.adaptive.result import AdaptiveSettings
    from primebench_tasks.data.panel import Panel

    settings = engine_settings(gpu, max(a.rank for a in adapters), len(adapters))
    backend = OfflineBackend(str(model), adapters, settings, max_new_tokens)
    panel = Panel.load_default(suite["built_from"]["panel"])
    (bench,) = panel.benchmark_names
    n = len(docs)
    pool = [SuiteDoc(r["id"], bench, "c", r) for r in benchmark_rows(panel, bench)][:n]
    variants = [None, *[a.name for a in adapters]]
    work = Path(tempfile.mkdtemp(prefix="gpu_adaptive_"))
    run_variants(backend, pool, "m", variants, RecordFile(work / "warm.jsonl"), "w", 32, None)
    t0 = time.perf_counter()
    run_variants(backend, pool, "m", variants, RecordFile(work / "static.jsonl"), "s", 5, None)
    static = time.perf_counter() - t0
    req = RunRequest(
        model=str(model),
        suite=suite,
        out=work / "adaptive",
        adapters={a.name: str(a.path) for a in adapters},
        name="m",
        max_new_tokens=max_new_tokens,
    )
    t0 = time.perf_counter()
    doc = run_adaptive(req, {bench: panel}, AdaptiveSettings(None, n, 5), backend=backend)
    adaptive = time.perf_counter() - t0
    return {
        "items_per_variant": n,
        "static_s": round(static, 2),
        "adaptive_s": round(adaptive, 2),
        "ratio": round(adaptive / static, 3),
        "items_asked": {m: r.items for m, r in doc.models.items()},
    }


def _phase(
    name: str, work: Path, docs: list[Any], adapters: list[Any], gpu: bool, args: argparse.Namespace
) -> dict[str, Any]:
    if name == "adaptive":
        from harness_adapters.suites.released import resolve_suite

        return run_adaptive_phase(
            work / "base", adapters, docs, gpu, args.max_new_tokens, resolve_suite(args.suite)
        )
    if name == "tower":
        return run_tower(work / "base", adapters, docs, gpu, args.max_new_tokens, args.batch_size)
    if name == "offline":
        return run_offline(work / "base", adapters, docs, gpu, args.max_new_tokens, args.batch_size)
    if name == "server":
        return run_server(work / "base", adapters, docs, gpu, args.max_new_tokens, work)
    return run_ray(work / "base", adapters, docs, gpu, args.max_new_tokens, args.batch_size, work)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the JSON to write")
    ap.add_argument("--size", choices=["tiny", "2b"], default="2b")
    ap.add_argument("--adapters", type=int, default=8)
    ap.add_argument("--suite", default="primebench_mathvision")
    ap.add_argument("--limit", type=int, help="first N documents of the suite")
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--backends", default="offline,server,ray,tower,adaptive")
    ap.add_argument("--phase", help=argparse.SUPPRESS)  # one backend, in its own process
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    gpu = _has_gpu()
    if not gpu:
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from harness_adapters.engines.vllm.backends import Adapter
    from harness_adapters.engines.vllm.tiny_model import build_lora_adapter, build_tiny_qwen2vl
    from harness_adapters.suites.documents import suite_docs
    from harness_adapters.suites.released import resolve_suite
    from primebench_tasks.data.panel import Panel

    suite = resolve_suite(args.suite)
    docs = suite_docs(suite, Panel.load_default(suite["built_from"]["panel"]))
    docs = docs[: args.limit] if args.limit else docs
    if args.phase:  # a child: one backend, its figures to --out
        work = Path(args.work)
        adapters = [Adapter(f"lora{i + 1}", work / f"lora{i + 1}", 8) for i in range(args.adapters)]
        res = _phase(args.phase, work, docs, adapters, gpu, args)
        Path(args.out).write_text(json.dumps(res))
        return 0
    work = Path(tempfile.mkdtemp(prefix="gpu_check_"))
    t0 = time.perf_counter()
    build_tiny_qwen2vl(work / "base", size=args.size)
    for i in range(args.adapters):
        build_lora_adapter(work / "base", work / f"lora{i + 1}", seed=i + 1)
    build_lora_adapter(work / "base", work / "tower", seed=99, targets="all-linear")
    built = time.perf_counter() - t0
    import vllm

    doc: dict[str, Any] = {
        "schema": "primebench.gpu_check/1",
        "date": time.strftime("%Y-%m-%d"),
        "device": (
            subprocess.run(
                ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            if gpu
            else "cpu"
        ),
        "vllm": vllm.__version__,
        "model_size": args.size,
        "adapters": args.adapters,
        "suite": suite["name"],
        "documents": len(docs),
        "variants": args.adapters + 1,
        "max_new_tokens": args.max_new_tokens,
        "build_s": round(built, 2),
    }
    for name in args.backends.split(","):
        print(f"[gpu_check] {name} ...", file=sys.stderr, flush=True)
        part = work / f"{name}.json"
        cmd = [
            sys.executable,
            __file__,
            "--phase",
            name,
            "--work",
            str(work),
            "--out",
            str(part),
            "--size",
            args.size,
            "--adapters",
            str(args.adapters),
            "--suite",
            args.suite,
            "--max-new-tokens",
            str(args.max_new_tokens),
            "--batch-size",
            str(args.batch_size),
        ] + (["--limit", str(args.limit)] if args.limit else [])
        with MemoryPeak(gpu) as mem:
            rc = subprocess.run(cmd, check=False).returncode
        if rc != 0:
            doc[name] = {"error": f"exit status {rc}"}
            continue
        doc[name] = {**json.loads(part.read_text()), "peak_memory_mib": round(mem.peak)}
    Path(args.out).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    print(json.dumps(doc, indent=2, sort_keys=True))
    return 1 if any("error" in doc.get(n, {}) for n in args.backends.split(",")) else 0


if __name__ == "__main__":
    sys.exit(main())
