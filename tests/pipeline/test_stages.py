import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from primebench_tasks.pipeline.stage0_clean import stage0_clean
from primebench_tasks.pipeline.stage1_representatives import (
    benchmark_scores,
    choose_representative,
    stage1_representatives,
    supplement,
)
from primebench_tasks.pipeline.stage3_categories import spectrum, stage3_select
from tests.conftest import make_panel


def test_stage0_hand_case():
    nan = np.nan
    X = np.array([[1, 1, 0, 1, 0.5], [1, nan, 0, 0, 1], [1, 1, 0, 1, 1]], dtype=float)
    blind = np.array([[0, 0, 0, 1, 1], [1, 0, 0, 1, 0], [0, 0, 0, 0, 1]], dtype=float)
    p = make_panel({"b": X}, {"b": "Comprehensive"}, blind={"b": blind})
    r = stage0_clean(p)
    # item 0 and 1: all-correct (item 1 among valid scores); item 2 all-wrong: kept;
    # item 3: beta = 2/3 -> blind-solvable; item 4: beta = 2/3 -> blind-solvable
    assert r.keep["b"].tolist() == [False, False, True, False, False]
    row = r.table.iloc[0]
    assert (row.all_correct, row.blind_solvable, row.removed, row.all_wrong_kept) == (2, 2, 4, 1)
    r2 = stage0_clean(p, min_blind_models=4)  # too few blind models -> all-correct filter only
    assert r2.keep["b"].tolist() == [False, False, True, True, True]
    assert not r2.table.iloc[0].blind_filter


def _category_panel(seed=0, n_models=15):
    rng = np.random.default_rng(seed)
    ab = rng.normal(0, 1, n_models)
    mats = {}
    for b, (n, noise) in {
        "b1": (30, 0.5),
        "b2": (40, 1.5),
        "b3": (25, 3.0),
        "c1": (30, 0.5),
    }.items():
        own = ab + rng.normal(0, noise, n_models)
        diff = rng.normal(0, 1, n)
        mats[b] = (rng.random((n_models, n)) < 1 / (1 + np.exp(-(own[:, None] - diff)))).astype(
            float
        )
    cats = {
        "b1": "Science Knowledge",
        "b2": "Science Knowledge",
        "b3": "Science Knowledge",
        "c1": "Academic Knowledge",
    }
    return make_panel(mats, cats)


def test_eq3_representative_by_hand():
    p = _category_panel()
    keep = {b: np.ones(len(p.item_ids(b)), bool) for b in p.benchmark_names}
    s = benchmark_scores(p, keep)
    bs = ["b1", "b2", "b3"]
    z = np.column_stack([stats.zscore(s[b]) for b in bs])
    sc = z.mean(axis=1)
    rhos = {b: stats.spearmanr(s[b], sc).statistic for b in bs}
    rep, rho, cand, _ = choose_representative(s, bs)
    assert rep == max(rhos, key=rhos.get)
    for b in bs:
        assert cand[b] == pytest.approx(rhos[b])


def test_supplementation_matches_stepwise_spearman():
    p = _category_panel(seed=3)
    keep = {b: np.ones(len(p.item_ids(b)), bool) for b in p.benchmark_names}
    s = benchmark_scores(p, keep)
    bs = ["b1", "b2", "b3"]
    rep, rho, _, sc = choose_representative(s, bs)
    items, added, avail, final, prefix = supplement(p, keep, bs, rep, sc, target=0.999)
    # reference: one scipy spearmanr per step, candidates ordered by (-variance, bench, index)
    cands = []
    for j, b in enumerate(bs):
        if b == rep:
            continue
        X = p.matrix(b)
        for i in range(X.shape[1]):
            cands.append((-round(float(X[:, i].astype(float).var()), 12), j, i, b))
    cands.sort()
    pool = [p.matrix(rep)]
    ref = [stats.spearmanr(p.matrix(rep).mean(axis=1), sc).statistic]
    for _, _, i, b in cands:
        pool.append(p.matrix(b)[:, [i]])
        ref.append(stats.spearmanr(np.concatenate(pool, axis=1).mean(axis=1), sc).statistic)
    np.testing.assert_allclose(prefix, ref, atol=1e-9)
    ref = np.nan_to_num(np.array(ref), nan=-2)
    hit = np.flatnonzero(ref >= 0.999)
    assert added == (hit[0] if len(hit) else int(np.argmax(ref)))
    assert avail == len(cands)
    assert sum(len(v) for v in items.values()) == len(p.item_ids(rep)) + added


def test_stage1_tiers():
    p = _category_panel(seed=1)
    keep = {b: np.ones(len(p.item_ids(b)), bool) for b in p.benchmark_names}
    r = stage1_representatives(p, keep)
    t = r.table().set_index("category")
    assert t.loc["Academic Knowledge", "tier"] == 1  # single-benchmark category, rho = 1
    sci = t.loc["Science Knowledge"]
    assert sci.tier in (1, 2, 3)
    if sci.tier == 2:
        assert sci.final_rho >= 0.95


def _brute_stage3(S: pd.DataFrame, k: int):
    cats = sorted(S.columns)
    ref = S[cats].mean(axis=1)
    best, arg = -2, None
    for combo in itertools.combinations(cats, k):
        r = stats.spearmanr(S[list(combo)].mean(axis=1), ref).statistic
        if r > best + 1e-12:
            best, arg = r, list(combo)
    return arg, best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stage3_exhaustive_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    S = pd.DataFrame(rng.random((12, 8)), columns=[f"cat{c}" for c in "hgfedcba"])
    for k in (1, 3, 5):
        got = stage3_select(S, k)
        cats, rho = _brute_stage3(S, k)
        assert got.categories == cats
        assert got.rho == pytest.approx(rho)
        assert got.n_subsets == len(list(itertools.combinations(range(8), k)))


def test_stage3_ties_take_the_first_alphabetical_subset():
    base = np.arange(10, dtype=float)
    S = pd.DataFrame({"zeta": base, "alpha": base, "mid": base[::-1]})
    r = stage3_select(S, 1)
    assert r.categories == ["alpha"]  # alpha and zeta tie exactly


def test_stage3_greedy_fallback():
    rng = np.random.default_rng(0)
    S = pd.DataFrame(rng.random((10, 6)), columns=list("abcdef"))
    r = stage3_select(S, 3, max_subsets=5)
    assert r.method == "greedy" and len(r.categories) == 3


def test_spectrum_of_rank_one_matrix():
    v = np.arange(1, 9, dtype=float)
    S = pd.DataFrame(np.outer(v, [1, 2, 3, 4]))
    sv, energy = spectrum(S)
    assert energy[0] == pytest.approx(1.0)
