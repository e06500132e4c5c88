"""A paper-scale synthetic panel (PRIMEBench Table 3-5 shapes), calibrated against the real data.

Generative model (all draws from one seeded ``numpy.random.Generator``):

* **Models**: the paper's 30 models (Table 3 names and families, approximate release dates) or
  ``n_models`` synthetic ones in 10 families. Ability θ_m ∈ R^5 (rank-5 capability model): a
  general factor that grows with release date and family generation, plus four specific factors,
  plus a model × benchmark interaction (sd 0.3).
* **Benchmarks**: the 43 of Table 4 with item counts × ``scale`` (1.0 = 386,324 items). Each
  category has a loading vector on the five factors (dominated by the general one); a benchmark
  perturbs its category's loading.
* **Items**: 2PL (3PL with guessing 1/4 on multiple-choice benchmarks): P = c + (1 − c)·σ(a·(w·θ) − b);
  binary metrics draw Bernoulli(P); continuous (ANLS/BLEU/F1) draw Beta around P; judge metrics round
  a Beta draw to the 0..10 grid. A Table-5 share of items are trivial (everyone correct) and a
  Table-5 share are blind-solvable.
* **Blind runs**: 12 models (the paper's blind models when the default panel is used) are also run
  without the image on the benchmarks where the paper had blind runs: blind-solvable items are
  answered from text with high probability, others near chance.
* **Missing records**: ``missing`` (default 2 %) of all records are absent (NaN, not 0).
* **Embeddings**: 64-d ``text`` and ``vl`` vectors; items of a benchmark form topic clusters whose
  topic shifts the item difficulty, so cells relate to item parameters; the ``vl`` vector adds an
  image component whose weight is low on blind-solvable items (so δ^VL tracks vision dependence).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from primebench_tasks.data.catalogue import paper_benchmarks
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError

RANK = 5
EMBED_DIM = 64

PAPER_MODELS: tuple[tuple[str, str, str, float], ...] = (
    ("Qwen-VL-Chat", "Qwen", "2023-08-22", 9.6),
    ("Qwen2-VL-7B-Instruct", "Qwen", "2024-08-29", 8.3),
    ("Qwen2.5-VL-7B-Instruct", "Qwen", "2025-01-26", 8.3),
    ("Qwen2.5-Omni-3B", "Qwen", "2025-04-30", 3.0),
    ("Qwen2.5-Omni-7B", "Qwen", "2025-03-26", 7.0),
    ("Qwen3-VL-2B-Instruct", "Qwen", "2025-10-21", 2.0),
    ("Qwen3-VL-4B-Instruct", "Qwen", "2025-10-15", 4.0),
    ("Qwen3-VL-8B-Instruct", "Qwen", "2025-10-15", 8.0),
    ("Qwen3-VL-30B-A3B-Instruct", "Qwen", "2025-10-01", 30.0),
    ("Qwen3-Omni-30B-A3B-Instruct", "Qwen", "2025-09-22", 30.0),
    ("InternVL2-8B", "InternVL", "2024-07-04", 8.1),
    ("InternVL2.5-8B", "InternVL", "2024-12-05", 8.1),
    ("InternVL3-8B", "InternVL", "2025-04-11", 8.0),
    ("InternVL3.5-8B", "InternVL", "2025-08-25", 8.5),
    ("Gemma3-4B-IT", "Gemma3", "2025-03-12", 4.3),
    ("Gemma3-12B-IT", "Gemma3", "2025-03-12", 12.2),
    ("Gemma4-E2B-IT", "Gemma4", "2026-04-01", 5.1),
    ("Gemma4-E4B-IT", "Gemma4", "2026-04-01", 8.0),
    ("Gemma4-26B-A4B-IT", "Gemma4", "2026-04-01", 26.0),
    ("Gemma4-31B-IT", "Gemma4", "2026-04-01", 31.0),
    ("LLaVA-OneVision-Qwen2-7B-OV", "LLaVA-OneVision", "2024-08-06", 8.0),
    ("LLaVA-OneVision-1.5-4B-Instruct", "LLaVA-OneVision", "2025-09-30", 4.0),
    ("LLaVA-OneVision-1.5-8B-Instruct", "LLaVA-OneVision", "2025-09-30", 8.0),
    ("LLaVA-OneVision-2-8B-Instruct", "LLaVA-OneVision", "2026-03-01", 8.0),
    ("Llama-3.2-11B-Vision-Instruct", "Llama", "2024-09-25", 10.7),
    ("SmolVLM2-2.2B-Instruct", "SmolVLM", "2025-02-20", 2.2),
    ("Kimi-VL-A3B-Instruct", "Kimi-VL", "2025-04-10", 16.4),
    ("MiniCPM-V-4.5", "MiniCPM-V", "2025-08-26", 8.7),
    ("MiniCPM-V-4.6", "MiniCPM-V", "2026-02-01", 8.7),
    ("HyperCLOVAX-SEED-Omni-8B", "HyperCLOVAX", "2026-01-01", 8.0),
)
"""Table 3's 30 models with families; release dates and sizes are approximate (simulation only)."""

PAPER_BLIND_MODELS = (
    "Qwen-VL-Chat",
    "Qwen2-VL-7B-Instruct",
    "Qwen2.5-VL-7B-Instruct",
    "Qwen3-VL-2B-Instruct",
    "Qwen3-VL-4B-Instruct",
    "Qwen3-VL-8B-Instruct",
    "InternVL2-8B",
    "InternVL2.5-8B",
    "InternVL3-8B",
    "InternVL3.5-8B",
    "Gemma3-4B-IT",
    "Gemma3-12B-IT",
)
"""App. B: the models also run without images."""


def _models(n_models: int, rng: np.random.Generator) -> pd.DataFrame:
    if n_models == len(PAPER_MODELS):
        return pd.DataFrame(PAPER_MODELS, columns=["model", "family", "release_date", "params_b"])
    fams = [f"fam{j:02d}" for j in range(10)]
    rows = []
    for i in range(n_models):
        f = fams[i % 10]
        gen = i // 10
        y, m = 2023 + (gen + i % 3) // 2, 1 + (5 * i) % 12
        rows.append(
            (
                f"{f}-gen{gen}-m{i:03d}",
                f,
                f"{y:04d}-{m:02d}-01",
                float(rng.choice([2.0, 4.0, 8.0, 13.0, 30.0])),
            )
        )
    return pd.DataFrame(rows, columns=["model", "family", "release_date", "params_b"])


def simulate_panel(
    scale: float = 0.01,
    n_models: int = 30,
    seed: int = 0,
    missing: float = 0.02,
    min_items: int = 20,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Panel:
    """Simulate a panel; see the module docstring. ``scale`` multiplies Table 4's item counts
    (each benchmark keeps at least ``min_items``; scale 1.0 gives exactly 386,324 items)."""
    if not 0 < scale <= 1.0:
        raise ConfigError("scale must be in (0, 1]")
    rng = np.random.default_rng(seed)
    models = _models(n_models, rng)
    M = len(models)
    dates = pd.to_datetime(models["release_date"])
    age = ((dates - dates.min()).dt.days / 365.0).to_numpy()
    size = np.log2(models["params_b"].to_numpy())
    fam_codes = pd.factorize(models["family"])[0]
    fam_effect = rng.normal(0, 0.35, fam_codes.max() + 1)[fam_codes]
    theta = rng.normal(0, 1, (M, RANK)) * np.array([0.45, 0.35, 0.3, 0.25, 0.2])
    theta[:, 0] += 0.75 * (age - age.mean()) + 0.25 * (size - size.mean()) + fam_effect
    blind_names = (
        set(PAPER_BLIND_MODELS)
        if n_models == len(PAPER_MODELS)
        else set(models["model"].iloc[rng.choice(M, size=min(12, M), replace=False)])
    )
    blind_rows = np.flatnonzero(models["model"].isin(blind_names).to_numpy())

    specs = paper_benchmarks()
    cats = sorted({s.category for s in specs})
    cat_load = {c: np.r_[1.0, rng.normal(0, 0.35, RANK - 1)] for c in cats}
    topic_dirs = rng.normal(0, 1, (16, EMBED_DIM)).astype(np.float32)
    bench_rows, item_frames, tables = [], [], []
    text_vecs, vl_vecs = [], []
    for bi, s in enumerate(specs):
        n = s.items if scale == 1.0 else max(min_items, int(round(s.items * scale)))
        load = cat_load[s.category] + np.r_[0.0, rng.normal(0, 0.15, RANK - 1)]
        load /= np.linalg.norm(load)
        # model x benchmark interaction: format quirks, data overlap (what makes benchmarks of
        # one category disagree in real panels, Table 7)
        ability = theta @ load + rng.normal(0, 0.3, M)  # (M,)
        n_topics = int(np.clip(round(np.sqrt(n) / 2), 2, 64))
        topic = rng.integers(n_topics, size=n)
        topic_shift = rng.normal(0, 0.6, n_topics)
        a = rng.lognormal(0.25, 0.35, n)
        b = rng.normal(-0.3, 1.1, n) + topic_shift[topic]
        mc = s.metric_kind == "binary" and "MCQ" in s.metric
        c = np.full(n, 0.25 if mc else 0.0)
        trivial = rng.random(n) < s.all_correct / s.items
        blind_solv = rng.random(n) < s.blind_solvable / s.items
        logits = a[None, :] * ability[:, None] - b[None, :]
        P = c + (1 - c) / (1 + np.exp(-logits))
        P[:, trivial] = 0.9995
        if s.metric_kind == "binary":
            X = (rng.random((M, n)) < P).astype(np.float32)
        else:
            kappa = 6.0
            Pc = np.clip(P, 0.02, 0.98)
            X = rng.beta(Pc * kappa, (1 - Pc) * kappa).astype(np.float32)
            X[:, trivial] = 1.0
            if s.metric_kind == "judge":
                X = np.round(X * 10) / 10
        X[rng.random((M, n)) < missing] = np.nan
        ids = np.array([f"{s.benchmark}:{i}" for i in range(n)], dtype=object)
        tables.append(_long(models["model"].to_numpy(), s.benchmark, ids, X, "vl"))
        if s.blind_runs and len(blind_rows):
            pb = np.where(blind_solv[None, :], 0.9, np.clip(c, 0.05, None) + 0.1)
            Bx = (rng.random((len(blind_rows), n)) < pb).astype(np.float32)
            if s.metric_kind != "binary":
                Bx = np.clip(Bx * 0.95 + rng.random(Bx.shape) * 0.05, 0, 1).astype(np.float32)
            Bx[rng.random(Bx.shape) < missing] = np.nan
            tables.append(
                _long(models["model"].to_numpy()[blind_rows], s.benchmark, ids, Bx, "blind")
            )
        # embeddings: benchmark centre + topic direction + noise; vl adds an image component
        centre = rng.normal(0, 1, EMBED_DIM).astype(np.float32)
        tdir = (
            topic_dirs[topic % 16] * 1.5
            + rng.normal(0, 0.8, (n_topics, EMBED_DIM)).astype(np.float32)[topic]
        )
        text = centre + tdir + rng.normal(0, 0.6, (n, EMBED_DIM)).astype(np.float32)
        weight = np.where(blind_solv, 0.15, 0.6) * rng.random(n) + 0.05
        image = rng.normal(0, 1, (n, EMBED_DIM)).astype(np.float32) * 3.0
        vl = text + weight[:, None].astype(np.float32) * image
        text_vecs.append(text)
        vl_vecs.append(vl)
        bench_rows.append(
            {
                "benchmark": s.benchmark,
                "category": s.category,
                "metric": s.metric,
                "metric_kind": s.metric_kind,
                "score_min": 0.0,
                "score_max": 1.0,
                "lmms_eval_task": s.lmms_eval_task,
                "vlmeval_dataset": s.vlmeval_dataset,
            }
        )
        item_frames.append(
            pd.DataFrame({"benchmark": s.benchmark, "item_id": ids, "source_index": ids})
        )
        if progress and (bi + 1) % 10 == 0:
            progress(f"simulate: {bi + 1}/{len(specs)} benchmarks")
    items = pd.concat(item_frames, ignore_index=True)
    table = pa.concat_tables(tables)
    panel = Panel._from_arrow(
        name or f"simulated-s{scale:g}-m{M}-seed{seed}",
        table,
        models,
        pd.DataFrame(bench_rows),
        items,
        "<simulator>",
    )
    ids = items[["benchmark", "item_id"]]
    panel.set_embeddings("text", ids, np.concatenate(text_vecs))
    panel.set_embeddings("vl", ids, np.concatenate(vl_vecs))
    return panel


def _long(
    models: np.ndarray, benchmark: str, ids: np.ndarray, X: np.ndarray, cond: str
) -> pa.Table:
    r, c = np.nonzero(np.isfinite(X))
    return pa.table(
        {
            "model": pa.DictionaryArray.from_arrays(
                pa.array(r.astype(np.int32)), pa.array([str(m) for m in models])
            ),
            "benchmark": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(len(r), np.int32)), pa.array([benchmark])
            ),
            "item_id": pa.DictionaryArray.from_arrays(
                pa.array(c.astype(np.int32)), pa.array(list(ids), pa.string())
            ),
            "condition": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(len(r), np.int32)), pa.array([cond])
            ),
            "score": pa.array(X[r, c], pa.float32()),
        }
    )


def simulate_leaderboard(
    n_models: int = 2000,
    n_benchmarks: int = 5,
    seed: int = 0,
    items: tuple[int, int] = (100, 250),
    chance_share: float = 0.2,
    easy_share: float = 0.5,
    log_a_mean: float = 1.0,
    log_a_sd: float = 0.5,
    guessing: float = 0.25,
    name: str | None = None,
) -> Panel:
    """A text-LLM-leaderboard-like panel: many models, few items per benchmark, near-ceiling
    items and large discriminations — the regime where a selector tuned on VLM panels can lose to
    random (issue #16's 6,300-model panel).

    * **Models**: ``n_models``; a share ``chance_share`` is near chance (θ ~ N(−3, 0.3): broken
      merges, untrained checkpoints), the rest a dense competent cluster (θ ~ N(1, 0.5)). Each
      benchmark adds a model × benchmark interaction (sd 0.3).
    * **Items**: per benchmark a count drawn uniformly in ``items`` (inclusive); 3PL multiple
      choice, P = c + (1 − c)·σ(a·θ − a·β) with c = ``guessing``, a ~ LogNormal(``log_a_mean``,
      ``log_a_sd``) (median e¹ ≈ 2.7), β ~ N(−2, 0.7) for a share ``easy_share`` of near-ceiling
      items, else N(0.3, 1). Binary scores; every record present.
    * Each benchmark is its own category (budgets per benchmark = per category pool).

    With the defaults the items of highest item-rest correlation are the ones that split the two
    model clusters, so a discrimination-ranked selection does not order the competent models (the
    guard test in ``tests/select/test_cross_validated.py``); ``chance_share=0`` gives a unimodal
    panel where it does.
    """
    if n_models < 2 or n_benchmarks < 1:
        raise ConfigError("need at least 2 models and 1 benchmark")
    if not (0 <= chance_share < 1 and 0 <= easy_share <= 1 and 0 <= guessing < 1):
        raise ConfigError("chance_share in [0, 1), easy_share in [0, 1], guessing in [0, 1)")
    lo, hi = items
    if not 1 <= lo <= hi:
        raise ConfigError(f"items must be (low, high) with 1 <= low <= high, got {items}")
    rng = np.random.default_rng(seed)
    M = n_models
    chance = rng.random(M) < chance_share
    theta = np.where(chance, rng.normal(-3.0, 0.3, M), rng.normal(1.0, 0.5, M))
    model_names = np.array([f"llm{i:05d}" for i in range(M)], dtype=object)
    bench_rows, item_frames, tables = [], [], []
    for bi in range(n_benchmarks):
        bname = f"LLM-{bi}"
        n = int(rng.integers(lo, hi + 1))
        ability = theta + rng.normal(0, 0.3, M)
        a = rng.lognormal(log_a_mean, log_a_sd, n)
        easy = rng.random(n) < easy_share
        beta = np.where(easy, rng.normal(-2.0, 0.7, n), rng.normal(0.3, 1.0, n))
        P = guessing + (1 - guessing) / (1 + np.exp(-a[None, :] * (ability[:, None] - beta)))
        X = (rng.random((M, n)) < P).astype(np.float32)
        ids = np.array([f"{bname}:{i}" for i in range(n)], dtype=object)
        tables.append(_long(model_names, bname, ids, X, "vl"))
        bench_rows.append(
            {
                "benchmark": bname,
                "category": f"Category {bi}",
                "metric": "accuracy (MCQ)",
                "metric_kind": "binary",
                "score_min": 0.0,
                "score_max": 1.0,
            }
        )
        item_frames.append(pd.DataFrame({"benchmark": bname, "item_id": ids, "source_index": ids}))
    models = pd.DataFrame({"model": model_names})
    return Panel._from_arrow(
        name or f"leaderboard-m{M}-b{n_benchmarks}-seed{seed}",
        pa.concat_tables(tables),
        models,
        pd.DataFrame(bench_rows),
        pd.concat(item_frames, ignore_index=True),
        "<simulator>",
    )
