"""The fixed random projection applied before k-means cells and FPS (PRIMEBench §4.3, App. D.1)."""

from __future__ import annotations

import numpy as np

from primebench_tasks.numerics import exact_matmul

PROJECTION_DIM = 64
PROJECTION_SEED = 0


def random_projection(
    x: np.ndarray, dim: int = PROJECTION_DIM, seed: int = PROJECTION_SEED
) -> np.ndarray:
    """Project (n, d) vectors to (n, dim) with a fixed Gaussian matrix G (d, dim),
    G_jk ~ N(0, 1/dim) drawn from ``numpy.random.default_rng(seed)``. Depends only on d, dim and
    seed, so the same item always lands at the same point. Rows with NaN stay NaN.

    Computed exactly on a fixed-point grid of x and G (:func:`~primebench_tasks.numerics.exact_matmul`)
    and rounded once to float32: the same bits on every CPU and BLAS kernel. Returns float32."""
    x = np.asarray(x, dtype=np.float32)
    g = np.random.default_rng(seed).normal(0.0, 1.0 / np.sqrt(dim), size=(x.shape[1], dim))
    return exact_matmul(x, g.astype(np.float32)).astype(np.float32)


def vision_dependence(text: np.ndarray, vl: np.ndarray) -> np.ndarray:
    """δ^VL_i = 1 − cos(E^L_i, E^VL_i) (Eq. 6) for (n, d) text and vision-text embeddings of one
    encoder; rows where either is missing (NaN) get δ = 0 (App. D.1). Range [0, 2]."""
    text = np.asarray(text, dtype=np.float64)
    vl = np.asarray(vl, dtype=np.float64)
    ok = np.isfinite(text).all(axis=1) & np.isfinite(vl).all(axis=1)
    out = np.zeros(len(text))
    t, v = text[ok], vl[ok]
    den = np.linalg.norm(t, axis=1) * np.linalg.norm(v, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.where(den > 0, (t * v).sum(axis=1) / den, 1.0)
    out[ok] = 1.0 - cos
    return out
