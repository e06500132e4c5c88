"""Arithmetic whose result does not depend on the CPU, the BLAS kernel or the summation order.

A released suite must rebuild byte for byte on any machine. Matrix products through BLAS are not
reproducible across kernels (OpenBLAS picks Haswell, SkylakeX or Sandybridge code by CPU, each
with its own blocking and FMA use), and a k-means assignment or a farthest-point choice decided by
the last bit of a distance then differs. Here both operands are put on a binary fixed-point grid
(integer-valued float64 times a power of two) with few enough bits that every product and every
partial sum is an integer below 2⁵³: float64 then represents each of them exactly, so every
summation order — any kernel, with or without FMA — gives the same exact result.

The grid keeps ``bits`` significant bits relative to the largest magnitude of each operand
(``bits`` ≥ 17 for inner dimensions up to 2¹⁶): a relative quantisation error below 2⁻¹⁷ ≈ 8e-6,
far below what separates k-means cells or embedding distances.
"""

from __future__ import annotations

import math

import numpy as np

MANTISSA_BITS = 53
"""float64 represents every integer of magnitude ≤ 2⁵³ exactly."""


def grid_bits(inner: int, headroom: int = 1) -> int:
    """Bits per operand so that Σ_k a_k·b_k over ``inner`` terms, with |a|, |b| ≤ 2^bits, stays
    below 2^(53 − headroom): 2·bits + ⌈log₂ inner⌉ + headroom ≤ 53."""
    need = math.ceil(math.log2(max(int(inner), 1))) + headroom
    bits = (MANTISSA_BITS - need) // 2
    if bits < 8:
        raise ValueError(f"inner dimension {inner} is too large for exact products")
    return bits


def to_grid(x: np.ndarray, bits: int) -> tuple[np.ndarray, int]:
    """(q, e) with q integer-valued float64, |q| ≤ 2^bits, and x ≈ q·2^e (round half to even).

    The exponent comes from the largest finite magnitude (frexp, exact), so the grid depends on the
    data only through that one power of two. NaN stays NaN; an all-zero array gives e = 0."""
    x = np.asarray(x, dtype=np.float64)
    fin = np.isfinite(x)
    top = float(np.abs(x[fin]).max()) if fin.any() else 0.0
    if top == 0.0:
        return np.where(fin, 0.0, x), 0
    _, exp2 = math.frexp(top)  # top = m·2^exp2 with m in [0.5, 1): |x| < 2^exp2
    e = exp2 - bits
    return np.rint(np.ldexp(x, -e)), e


def exact_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for (n, d) and (d, m) (or (d,)) computed exactly on a fixed-point grid of each
    operand: float64 result, identical on every CPU and BLAS kernel. Rows of ``a`` with a NaN
    give NaN rows."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    bits = grid_bits(a.shape[-1])
    ok = np.isfinite(a).all(axis=-1) if a.ndim == 2 else np.ones(1, dtype=bool)
    qa, ea = to_grid(a[ok] if a.ndim == 2 else a, bits)
    qb, eb = to_grid(b, bits)
    prod = np.ldexp(qa @ qb, ea + eb)
    if a.ndim != 2 or ok.all():
        return prod
    out = np.full((len(a),) + prod.shape[1:], np.nan)
    out[ok] = prod
    return out
