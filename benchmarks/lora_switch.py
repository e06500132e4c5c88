"""LoRA switching cost (a benchmark, not a test).

    python benchmarks/lora_switch.py [--adapters 3] [--items 20] [--work DIR]

On the tiny random Qwen2-VL (built here, no hub) and a suite of the first ``--items`` MATH-Vision
testmini items (real images):

A. one engine with ``enable_lora``: start it once, run the base model and every adapter through
   ``LoRARequest`` (what ``primebench run`` does);
B. what lmms-eval's vLLM backend needs (it has no LoRA): merge each adapter into the base
   (peft ``merge_and_unload``, not timed) and start one engine per merged model.

Prints the wall time of each, their ratio, and items/s (engine start included and excluded).
Engine settings are the CPU ones (enforce_eager, 512 tokens); on a GPU drop --enforce-eager.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
from pathlib import Path


def _engine(model: str, lora: bool, rank: int):  # type: ignore[no-untyped-def]
    from vllm import LLM

    kw = dict(
        model=model,
        max_model_len=512,
        limit_mm_per_prompt={"image": 1},
        enforce_eager=True,
        max_num_seqs=8,
        seed=0,
    )
    if lora:
        kw.update(enable_lora=True, max_lora_rank=rank, max_loras=2)
    return LLM(**kw)


def _run(llm, messages, lora_request=None) -> float:  # type: ignore[no-untyped-def]
    from vllm import SamplingParams

    t = time.perf_counter()
    llm.chat(
        messages,
        SamplingParams(temperature=0.0, max_tokens=64),
        lora_request=lora_request,
        use_tqdm=False,
    )
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--adapters", type=int, default=3)
    ap.add_argument("--items", type=int, default=20)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from peft import PeftModel
    from transformers import AutoProcessor, Qwen2VLForConditionalGeneration
    from vllm.lora.request import LoRARequest

    from harness_adapters.engines.vllm.tiny_model import build_lora_adapter, build_tiny_qwen2vl
    from harness_adapters.run.messages import chat_messages
    from harness_adapters.suites.documents import suite_docs
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.pipeline.manifest import build_manifest

    work = Path(args.work or tempfile.mkdtemp(prefix="lora_switch_"))
    base = build_tiny_qwen2vl(work / "base")
    names = [f"lora{i + 1}" for i in range(args.adapters)]
    merged = []
    for i, n in enumerate(names):
        build_lora_adapter(base, work / n, seed=i + 1, r=args.rank)
        m = PeftModel.from_pretrained(
            Qwen2VLForConditionalGeneration.from_pretrained(base), work / n
        ).merge_and_unload()
        m.save_pretrained(work / f"merged_{n}")
        AutoProcessor.from_pretrained(base).save_pretrained(work / f"merged_{n}")
        merged.append(work / f"merged_{n}")
    import numpy as np

    panel = Panel.load_default("mathvision")
    b = panel.benchmark_names[0]
    suite = build_manifest(
        "bench", panel, {panel.category_of(b): {b: np.arange(args.items)}}, {}, [], {}
    )
    messages = [chat_messages(d) for d in suite_docs(suite, panel)]
    n_runs = 1 + args.adapters

    t0 = time.perf_counter()
    llm = _engine(str(base), True, args.rank)
    start_a = time.perf_counter() - t0
    gen_a = _run(llm, messages)
    for i, n in enumerate(names):
        gen_a += _run(llm, messages, LoRARequest(n, i + 1, str(work / n)))
    total_a = time.perf_counter() - t0
    del llm
    gc.collect()

    t0 = time.perf_counter()
    gen_b = starts_b = 0.0
    for model in [base, *merged]:
        t1 = time.perf_counter()
        llm = _engine(str(model), False, args.rank)
        starts_b += time.perf_counter() - t1
        gen_b += _run(llm, messages)
        del llm
        gc.collect()
    total_b = time.perf_counter() - t0

    items = n_runs * len(messages)
    print(f"{args.adapters} adapters + base, {len(messages)} items each ({items} generations)")
    print(
        f"A one engine + LoRARequest : {total_a:7.1f} s (start {start_a:.1f} s, generation "
        f"{gen_a:.1f} s) → {items / total_a:.2f} items/s, {items / gen_a:.1f} items/s "
        "without the start"
    )
    print(
        f"B one engine per variant   : {total_b:7.1f} s ({n_runs} starts {starts_b:.1f} s, "
        f"generation {gen_b:.1f} s) → {items / total_b:.2f} items/s"
    )
    print(f"ratio B / A: {total_b / total_a:.2f}x")


if __name__ == "__main__":
    main()
