"""VAW: Vision-Aware Variance with benchmark shares and k-means coverage cells (PRIMEBench §4.3,
App. D.1, ablations of App. D.4).

Score (Eq. 4-5): q_i = σ̂²_i + α·δ^VL_i with σ̂²_i = (1/√M) Σ_m (x_mi − x̄_i)². Dividing by √M gives
v̂_i + α·δ_i/√M; when items have different numbers of valid records M_i the items are ranked by
v̂_i + α·δ_i/√M_i (§4.3), which for a common M is the same order as q_i.

Within a category pool of budget K, benchmark b gets K_b by largest-remainder rounding of
K·n_b/n_C; its items with an embedding are grouped into K_b cells by k-means (on the projected
embeddings), and the highest-scoring item of each cell is kept. Items without an embedding join no
cell; a share that the cells cannot fill is completed with the benchmark's highest-scoring
remaining items. Exact ties are broken in a seeded random order.
"""

from __future__ import annotations

import numpy as np

from primebench_tasks.errors import ConfigError
from primebench_tasks.numerics import grid_bits, to_grid
from primebench_tasks.select.base import (
    ItemFeatures,
    Selector,
    item_variance,
    rank_by_score,
    tie_keys,
)
from primebench_tasks.select.default import ALPHA as ALPHA  # defined once, re-exported
from primebench_tasks.select.default import FLOOR

CELL_MODES = ("embedding", "random", "none", "dpp", "responses")
DPP_MAX_ENTRIES = 50_000_000
"""Largest n·K_b of one benchmark share for the DPP arm (its greedy MAP holds an (n, K_b) array)."""


def category_budget(n: int, retention: float, floor: int = FLOOR) -> int:
    """K_C = max(⌊r·n_C⌋, min(n_C, floor)) (§4.3)."""
    if not 0 < retention <= 1:
        raise ConfigError(f"retention must be in (0, 1], got {retention}")
    return max(int(np.floor(retention * n + 1e-9)), min(n, floor))


def benchmark_shares(k: int, sizes: np.ndarray) -> np.ndarray:
    """Split a budget ``k`` over benchmarks in proportion to ``sizes`` by largest-remainder
    rounding; equal remainders go to the earlier benchmark. Returns ints summing to
    min(k, Σ sizes), each ≤ its size."""
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(sizes.sum())
    k = min(k, total)
    if total == 0:
        return np.zeros_like(sizes)
    exact = k * sizes / total
    base = np.floor(exact + 1e-12).astype(np.int64)
    rem = exact - base
    left = k - int(base.sum())
    order = np.lexsort((np.arange(len(sizes)), -rem))
    for i in order[:left]:
        base[i] += 1
    return np.minimum(base, sizes)


def benchmark_groups(labels: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """(benchmark names in order of first appearance, the positions of each) for per-item
    benchmark ``labels`` (n,)."""
    labels = np.asarray(labels).astype(str)
    names, first = np.unique(labels, return_index=True)
    names = names[np.argsort(first)]
    return names, [np.flatnonzero(labels == b) for b in names]


DISCRIMINATION_POWER = 4


def discrimination_signal(X: np.ndarray, power: float = DISCRIMINATION_POWER) -> np.ndarray:
    """sign(r_i)·|r_i|^power·√v̂_i: the item's spread across models, kept in proportion to how
    well it tracks the other items (r_i = item-rest correlation, DatBench's r_pb). (n,)."""
    from primebench_tasks.select.datbench import item_rest_correlation

    r = item_rest_correlation(X)
    var, _ = item_variance(X)
    return np.sign(r) * np.abs(r) ** power * np.sqrt(var)


def vaw_rank_score(
    X: np.ndarray,
    delta: np.ndarray | None,
    alpha: float,
    signal: str = "variance",
    power: float = DISCRIMINATION_POWER,
) -> np.ndarray:
    """s_i + α·δ_i/√M_i with s_i = v̂_i (Eq. 4-5 divided by √M) or the discrimination signal;
    shape (n,); NaN for items without a valid record."""
    if signal == "variance":
        base, m = item_variance(X)
    elif signal == "discrimination":
        base = discrimination_signal(X, power)
        m = np.isfinite(X).sum(axis=0)
    else:
        raise ConfigError(f"signal must be 'variance' or 'discrimination', got {signal!r}")
    if delta is None or alpha == 0:
        return base
    with np.errstate(invalid="ignore", divide="ignore"):
        return base + alpha * np.asarray(delta, float) / np.sqrt(m)


def kmeans_labels(
    x: np.ndarray, k: int, random_state: int, max_iter: int = 4, chunk: int = 4096
) -> np.ndarray:
    """Lloyd's k-means with ``k`` centres initialised at distinct random points (seeded), at most
    ``max_iter`` assignment/update rounds (stops early when no label changes). Returns labels (n,)
    in [0, k); equal distances go to the lower centre. With k ≥ n every point is its own cell.

    Points and centres live on one fixed-point grid (:mod:`primebench_tasks.numerics`, ≥ 22
    significant bits for 64 dimensions) and the squared distances are computed exactly in float64,
    chunk by chunk: the labels are the same on every CPU and BLAS kernel (with float32 BLAS
    distances, near-equal distances went to different centres on Haswell and SkylakeX kernels).

    The cells only need to spread the budget over the embedding space; a few Lloyd rounds reach
    that, and the bounded cost keeps paper-scale pools (140k items, 7k cells) to seconds.
    """
    n = len(x)
    if k >= n:
        return np.arange(n)
    # headroom 3: c2 − 2·x·c stays below 2^52 in magnitude
    q, _ = to_grid(np.asarray(x, dtype=np.float64), grid_bits(np.shape(x)[1], headroom=3))
    rng = np.random.default_rng(random_state)
    centres = q[np.sort(rng.choice(n, size=k, replace=False))].copy()
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(max_iter + 1):
        c2 = (centres * centres).sum(axis=1)
        new = np.empty(n, dtype=np.int64)
        for s in range(0, n, chunk):
            d = q[s : s + chunk] @ centres.T
            d *= -2.0
            d += c2
            new[s : s + chunk] = d.argmin(axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=k)
        sums = np.zeros_like(centres)
        _sum_by_label(sums, labels, q)  # integer-valued: exact in any order
        nonempty = counts > 0
        centres[nonempty] = np.rint(sums[nonempty] / counts[nonempty, None])
    return labels


def _sum_by_label(out: np.ndarray, labels: np.ndarray, x: np.ndarray) -> None:
    order = np.argsort(labels, kind="stable")
    lab = labels[order]
    starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
    out[lab[starts]] = np.add.reduceat(x[order], starts, axis=0)


def rbf_bandwidth(x: np.ndarray, random_state: int, pairs: int = 2000) -> float:
    """Median squared Euclidean distance of ``pairs`` random item pairs (App. D.4)."""
    rng = np.random.default_rng(random_state)
    i = rng.integers(len(x), size=pairs)
    j = rng.integers(len(x), size=pairs)
    d = ((x[i] - x[j]) ** 2).sum(axis=1)
    med = float(np.median(d[i != j])) if (i != j).any() else 1.0
    return med if med > 0 else 1.0


def dpp_greedy_map(x: np.ndarray, quality: np.ndarray, k: int, bandwidth: float) -> np.ndarray:
    """Greedy MAP of a DPP with L = diag(q)·G·diag(q), G_ij = exp(−||x_i − x_j||² / bandwidth)
    (fast incremental Cholesky, Chen et al. 2018): O(n·k) memory and O(n·k²) time. Stops early
    when no item adds volume. Returns positions in selection order."""
    n = len(x)
    k = min(k, n)
    q = np.maximum(np.asarray(quality, float), 0.0)
    sq = (x * x).sum(axis=1)
    c = np.zeros((n, k))
    d2 = q * q  # diagonal of L (G_ii = 1)
    picked: list[int] = []
    avail = np.ones(n, dtype=bool)
    for t in range(k):
        cand = np.where(avail, d2, -np.inf)
        j = int(np.argmax(cand))
        if not cand[j] > 1e-12:
            break
        picked.append(j)
        avail[j] = False
        g = np.exp(-np.maximum(sq + sq[j] - 2.0 * (x @ x[j]), 0.0) / bandwidth)
        lj = q * g * q[j]
        e = (lj - c[:, :t] @ c[j, :t]) / np.sqrt(d2[j])
        c[:, t] = e
        d2 = d2 - e * e
    return np.asarray(picked, dtype=np.int64)


def response_vectors(X: np.ndarray, dim: int = 64) -> np.ndarray:
    """Each item's centred response pattern over the build models, (n, min(M, dim)): missing
    records take the item mean; with more than ``dim`` models the fixed random projection is
    applied. Cells drawn here group items that the models answer alike — a label-based coverage
    space for panels without item embeddings (not in the papers; see docs/library.md, paper fidelity)."""
    from primebench_tasks.embed.projection import random_projection

    mu = np.nanmean(np.where(np.isfinite(X), X, np.nan), axis=0)
    Z = (np.where(np.isfinite(X), X, mu) - np.nan_to_num(mu)).T
    Z = np.nan_to_num(Z)
    return Z.astype(np.float32) if Z.shape[1] <= dim else random_projection(Z, dim)


def select_in_cells(
    score: np.ndarray, keys: np.ndarray, share: int, labels: np.ndarray | None, member: np.ndarray
) -> np.ndarray:
    """Keep the best item (score desc, key asc) of each cell, then fill the share with the best
    remaining items. ``labels`` (n,) cell of each item (only read where ``member``), or None for
    no cells. Returns positions in selection order (cell winners by rank, then fill)."""
    order = rank_by_score(score, keys)
    chosen = np.zeros(len(score), dtype=bool)
    picked: list[int] = []
    if labels is not None and share > 0:
        seen: set[int] = set()
        for i in order:
            if member[i] and labels[i] not in seen:
                seen.add(int(labels[i]))
                chosen[i] = True
                picked.append(int(i))
        # more cells than the share (cannot happen with k-means, can with a random partition):
        picked = picked[:share]
        chosen[:] = False
        chosen[picked] = True
    for i in order:
        if len(picked) >= share:
            break
        if not chosen[i]:
            chosen[i] = True
            picked.append(int(i))
    return np.asarray(picked, dtype=np.int64)


class VAWSelector(Selector):
    """Vision-Aware Variance with benchmark shares and coverage cells.

    Parameters
    ----------
    k : the category budget K_C (use :func:`category_budget`).
    alpha : weight of the vision-dependence prior (paper: 0.187; 0 = variance inside cells).
    cells : ``"embedding"`` (k-means on ``items.embedding``; the paper's default with
        vision-text embeddings), ``"random"`` (a seeded random partition of each benchmark into
        K_b groups, App. D.4), ``"none"`` (benchmark shares only), or ``"dpp"`` (App. D.4's DPP
        arm: greedy MAP of diag(q)·G·diag(q) inside each share, RBF kernel on the embeddings with
        the median squared distance of 2,000 random pairs as bandwidth), or ``"responses"``
        (k-means cells on the items' build-model response patterns, :func:`response_vectors`).
    shares : split the budget over ``items.benchmark`` in proportion to size (default True).
    kmeans_iter : Lloyd rounds per k-means run.
    signal : ``"variance"`` (the paper's σ̂²) or ``"discrimination"`` (:func:`discrimination_signal`).
    cell_quantile : items whose score is below this quantile of their benchmark's scores may not
        win a cell (0 = the paper: every item with a vector may); cells left without a winner
        leave their place to the fill rule.
    power : exponent of |r| in the discrimination signal (``vaw_dc``: 4).
    """

    def __init__(
        self,
        k: int,
        *,
        random_state: int = 0,
        alpha: float = ALPHA,
        cells: str = "embedding",
        shares: bool = True,
        kmeans_iter: int = 4,
        signal: str = "variance",
        cell_quantile: float = 0.0,
        power: float = DISCRIMINATION_POWER,
    ) -> None:
        self.k = k
        self.random_state = random_state
        self.alpha = alpha
        self.cells = cells
        self.shares = shares
        self.kmeans_iter = kmeans_iter
        self.signal = signal
        self.cell_quantile = cell_quantile
        self.power = power

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> VAWSelector:
        X = self._check(X)
        if self.cells not in CELL_MODES:
            raise ConfigError(f"cells must be one of {CELL_MODES}, got {self.cells!r}")
        if self.alpha < 0:
            raise ConfigError("alpha must be >= 0")
        items = items or ItemFeatures()
        n = X.shape[1]
        labels = (
            np.asarray(items.benchmark)
            if (self.shares and items.benchmark is not None)
            else np.zeros(n, dtype=object)
        )
        if len(labels) != n:
            raise ConfigError(f"items.benchmark has {len(labels)} entries for {n} items")
        names, groups = benchmark_groups(labels)
        shares = benchmark_shares(min(self.k, n), np.array([len(g) for g in groups]))
        score = vaw_rank_score(X, items.delta, self.alpha, self.signal, self.power)
        emb = items.embedding
        if self.cells == "responses":
            emb = response_vectors(X)
        if self.cells in ("embedding", "responses") and emb is not None and len(emb) != n:
            raise ConfigError(f"items.embedding has {len(emb)} rows for {n} items")
        picked: list[np.ndarray] = []
        self.n_cells_: dict[str, int] = {}
        for b, pos, share in zip(names, groups, shares, strict=True):
            keys = tie_keys(len(pos), self.random_state, salt=str(b))
            cell_labels = None
            member = np.zeros(len(pos), dtype=bool)
            if self.cells in ("embedding", "responses") and emb is not None:
                e = emb[pos]
                member = np.isfinite(e).all(axis=1)
                if member.any() and share > 0:
                    lab = np.full(len(pos), -1, dtype=np.int64)
                    lab[member] = kmeans_labels(
                        e[member],
                        int(min(share, member.sum())),
                        self.random_state,
                        self.kmeans_iter,
                    )
                    cell_labels = lab
                if self.cell_quantile > 0 and np.isfinite(score[pos]).any():
                    # cells are drawn over all items; only the upper part may win one
                    cut = np.nanquantile(score[pos], self.cell_quantile)
                    member &= np.nan_to_num(score[pos], nan=-np.inf) >= cut
            elif self.cells == "dpp" and emb is not None and share > 0:
                e = emb[pos]
                member = np.isfinite(e).all(axis=1)
                if len(pos) * share > DPP_MAX_ENTRIES:
                    raise ConfigError(
                        f"DPP arm: share of {share} over {len(pos)} items of {b!r} "
                        f"exceeds {DPP_MAX_ENTRIES:,} kernel entries"
                    )
                if member.any():
                    em = e[member].astype(np.float64)
                    qm = np.nan_to_num(score[pos][member], nan=0.0)
                    got = np.flatnonzero(member)[
                        dpp_greedy_map(em, qm, int(share), rbf_bandwidth(em, self.random_state))
                    ]
                    cell_labels = np.full(len(pos), -1, dtype=np.int64)
                    cell_labels[got] = np.arange(len(got))  # each DPP pick is its own "cell"
                    member = cell_labels >= 0
            elif self.cells == "random" and share > 0:
                rng = np.random.default_rng([self.random_state, 1 + len(picked)])
                cell_labels = rng.permutation(len(pos)) % share
                member[:] = True
            self.n_cells_[str(b)] = (
                0 if cell_labels is None else int(len(np.unique(cell_labels[member])))
            )
            local = select_in_cells(score[pos], keys, int(share), cell_labels, member)
            picked.append(pos[local])
        self._set(np.concatenate(picked) if picked else np.zeros(0, np.int64))
        return self
