"""Exact fixed-point products: hand-computed cases and independence of the summation order."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from primebench_tasks.numerics import exact_matmul, grid_bits, to_grid


def test_grid_bits_leaves_room_for_the_sum():
    # 2·bits + ⌈log2 64⌉ + 1 ≤ 53 → bits = 23; 2·23 + 6 + 1 = 53
    assert grid_bits(64) == 23
    assert grid_bits(1) == 26  # 2·26 + 0 + 1 = 53
    assert grid_bits(64, headroom=3) == 22
    with pytest.raises(ValueError, match="too large"):
        grid_bits(2**40)


def test_to_grid_by_hand():
    # max |x| = 0.75 = 0.75·2^0 → e = 0 − 4; q = x·16 rounded half to even
    q, e = to_grid(np.array([0.75, -0.5, 0.03125, 0.09375, np.nan]), bits=4)
    assert e == -4
    assert q[:4].tolist() == [12.0, -8.0, 0.0, 2.0]  # 0.5 → 0 and 1.5 → 2 (half to even)
    assert np.isnan(q[4])
    q0, e0 = to_grid(np.zeros(3), bits=10)
    assert e0 == 0 and q0.tolist() == [0.0, 0.0, 0.0]


def test_exact_matmul_is_the_rational_product_of_the_grid_values():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(7, 50))
    b = rng.normal(size=(50, 4))
    got = exact_matmul(a, b)
    bits = grid_bits(50)
    qa, ea = to_grid(a, bits)
    qb, eb = to_grid(b, bits)
    for i in range(7):
        for j in range(4):
            # any order: the reversed sum of exact Fractions
            want = sum(
                (Fraction(int(qa[i, k])) * Fraction(int(qb[k, j])) for k in reversed(range(50))),
                Fraction(0),
            ) * Fraction(2) ** (ea + eb)
            assert Fraction(got[i, j]) == want
    assert np.allclose(got, a @ b, atol=1e-5)


def test_exact_matmul_keeps_nan_rows():
    a = np.array([[1.0, 2.0], [np.nan, 1.0], [0.5, 0.25]])
    out = exact_matmul(a, np.eye(2))
    assert np.isnan(out[1]).all()
    assert out[[0, 2]].tolist() == [[1.0, 2.0], [0.5, 0.25]]
