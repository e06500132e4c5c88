"""Embedding speed (a benchmark, not a test).

    python benchmarks/embed_speed.py [--items 512]

1. Items/s of the offline MiniLM text encoder on this machine for batch sizes 16/64/128 and
   torch.set_num_threads(1 | 2).
2. Time to project the paper-scale embedding set (386,324 items, 384-d here) to 64 dimensions and
   draw the Stage 2 cells (5 % of each benchmark, Table 4 sizes) with the bounded Lloyd k-means.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=512)
    args = ap.parse_args()
    import torch

    from primebench_tasks.embed.encoders import MiniLMEncoder

    texts = [
        f"Question {i}: how many digits can you find in the picture, and which option "
        f"({i % 4}) names the largest one?"
        for i in range(args.items)
    ]
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for batch in (16, 64, 128):
            enc = MiniLMEncoder(batch_size=batch)
            enc.encode_text(texts[:16])  # warm up
            t = time.perf_counter()
            enc.encode_text(texts)
            dt = time.perf_counter() - t
            print(f"minilm threads={threads} batch={batch}: {args.items / dt:.1f} items/s")

    from primebench_tasks.data.catalogue import paper_benchmarks
    from primebench_tasks.embed.projection import random_projection
    from primebench_tasks.select.vaw import kmeans_labels

    rng = np.random.default_rng(0)
    sizes = [s.items for s in paper_benchmarks()]
    X = rng.normal(size=(sum(sizes), 384)).astype(np.float32)
    t = time.perf_counter()
    P = random_projection(X)
    t_proj = time.perf_counter() - t
    t = time.perf_counter()
    start = 0
    for n in sizes:
        k = max(int(0.05 * n), min(n, 100))
        kmeans_labels(P[start : start + n], k, 0)
        start += n
    print(
        f"paper scale: project {len(X):,} x 384 -> 64 in {t_proj:.1f}s; k-means cells for all "
        f"43 benchmarks (5 %) in {time.perf_counter() - t:.1f}s"
    )


if __name__ == "__main__":
    main()
