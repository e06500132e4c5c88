"""Adaptive evaluation: hand-computed information, prediction and interval; the first item asked
is the most informative one; the replay protocol on a simulated panel beats a random choice."""

import numpy as np
import pytest

from primebench_tasks.adaptive.policy import predict_full
from primebench_tasks.adaptive.procedure import conformal
from primebench_tasks.adaptive.replay import replay
from primebench_tasks.select.irt import IRT2PL, information
from tests.fixtures.blas import BLAS_KERNELS, kernel_env
from tests.fixtures.irt import simulate_2pl


def _model():
    # P = σ(aθ − b): at θ = 0, item 0 (a=2, b=0) has P = .5 → info 2²·.25 = 1;
    # item 1 (a=1, b=0) → .25; item 2 (a=2, b=4) → P = σ(−4)
    return IRT2PL(a=np.array([2.0, 1.0, 2.0]), b=np.array([0.0, 0.0, 4.0]), theta=np.zeros(1))


def test_information_by_hand():
    info = information(_model(), np.array([0.0]))[0]
    p2 = 1 / (1 + np.exp(4.0))
    assert info[:2].tolist() == [1.0, 0.25]
    assert info[2] == pytest.approx(4 * p2 * (1 - p2))


def test_predict_full_counts_answers_and_probabilities():
    m = _model()
    # asked item 0 (answered 1); unasked items 1 (P=.5) and 2 (P=σ(−4)) at θ = 0
    got = predict_full(m, np.array([0.0]), np.array([[1.0, np.nan, np.nan]]))
    assert got[0] == pytest.approx((1 + 0.5 + 1 / (1 + np.exp(4.0))) / 3)


def test_conformal_by_hand():
    errors = np.arange(-9, 10) / 100.0  # 19 errors; 90 %: k = ⌈20·0.95⌉ = 19 → the extremes
    lo, hi = conformal(0.5, errors, 0.90)
    assert (lo, hi) == pytest.approx((0.41, 0.59))
    assert np.isnan(conformal(0.5, np.array([np.nan]))[0])


def _sim(M=80, n=300, seed=0):
    return simulate_2pl(M, n, seed, a_mean=0.3, b_sd=1.2)[0]


def test_replay_asks_informative_items_and_predicts_the_full_score():
    X = _sim()
    ref, new = X[:60], X[60:]
    r = replay(ref, new, (10, 40), batch=5, design="item_model")
    assert r["predicted"].shape == (20, 2) and r["order"].shape == (20, 40)
    # every model is asked 40 distinct items
    assert all(len(set(row)) == 40 for row in r["order"])
    err = np.abs(r["predicted"] - r["true"][:, None]).mean(axis=0)
    assert err[1] < err[0]  # more items, closer
    # better than the mean of 40 random items
    rng = np.random.default_rng(1)
    rand = np.mean(
        [abs(new[v, rng.choice(300, 40, replace=False)].mean() - r["true"][v]) for v in range(20)]
    )
    assert err[1] < rand
    assert ((r["lo"] <= r["predicted"]) & (r["predicted"] <= r["hi"])).all()


def _ask(bench, y, rounds, asked=None, answers=None):
    asked = np.zeros(len(y), bool) if asked is None else asked.copy()
    answers = np.full(len(y), np.nan) if answers is None else answers.copy()
    order = []
    for _ in range(rounds):
        pick = bench.next_items(answers, asked, bench.batch)
        order += list(pick)
        asked[pick] = True
        answers[pick] = y[pick]
    return asked, answers, order


@pytest.mark.parametrize("shift", ["all", "outside"])
@pytest.mark.parametrize("strong", [False, True])
@pytest.mark.parametrize("predictor", ["pirt", "regime_blend"])
def test_estimate_is_the_regime_calibrated_prediction_by_hand(predictor, strong, shift):
    from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark
    from primebench_tasks.adaptive.defaults import ADAPTIVE_FOLDS, ADAPTIVE_NEAREST_SHIFT
    from primebench_tasks.adaptive.policy import AdaptivePolicy, predict_adaptive
    from primebench_tasks.adaptive.procedure import calibration_runs
    from primebench_tasks.place.benchmark import (
        conformal_bounds,
        placement_position,
        placement_regime,
        regime_residuals,
    )
    from primebench_tasks.place.calibration import FRONTIER_FOLDS
    from primebench_tasks.select.irt import binarize, estimate_theta

    X = _sim()
    ref, y = X[:60], X[70]
    if strong:  # above every reference model: placed by the frontier folds' errors
        y = np.where(np.arange(X.shape[1]) % 25 == 0, 0.0, 1.0)
    policy = AdaptivePolicy(predictor, "fisher", shift=shift)
    bench = AdaptiveBenchmark(ref, max_items=30, batch=5, policy=policy)
    asked, answers, _ = _ask(bench, y, 4)  # 20 items
    est = bench.estimate(answers, asked)
    seen = np.flatnonzero(asked)
    theta = estimate_theta(bench.model, binarize(answers[None, seen]), seen)[0]
    p = bench.model.prob(np.array([theta]))[0]
    full = ref.mean(axis=1)
    raw = np.where(asked, answers, p).mean()
    raw = predict_adaptive(raw, ref, full, seen, answers, predictor)
    regime = placement_regime(np.array([raw]), full)[0]
    errors, _, regimes, frontier, positions = calibration_runs(
        ref, bench.counts, 5, ADAPTIVE_FOLDS, 0, FRONTIER_FOLDS, policy
    )
    assert frontier.sum() == len(errors) - 60 > 0  # the random folds' 60 rows first
    j = bench.counts.index(20)
    # the errors of the models it resembles: the random folds' inside the panel, every one at
    # the top, the frontier folds' beyond it; the pooled interval from those (inside) or from
    # every error
    everyone = np.ones(len(errors), bool)
    alike = {"interior": ~frontier, "top": everyone, "beyond": frontier}[regime]
    pooled = {
        g: list(errors[(regimes[:, j] == g) & alike, j]) for g in ("interior", "top", "beyond")
    }
    errs = regime_residuals(pooled, regime)
    lo, hi = conformal_bounds(np.array([raw]), errs, 0.90)
    col = errors[:, j]
    col = col[alike] if regime == "interior" else col
    plo, phi = conformal_bounds(np.array([raw]), col[np.isfinite(col)], 0.90)
    lo, hi = np.minimum(lo, plo), np.maximum(hi, phi)
    if regime == "top":  # and the frontier folds' own interval
        fe = errors[frontier, j]
        flo, fhi = conformal_bounds(np.array([raw]), fe[np.isfinite(fe)], 0.90)
        lo, hi = np.minimum(lo, flo), np.maximum(hi, fhi)
    assert est.count == 20 and est.regime == regime
    assert (regime != "interior") == strong
    assert np.isclose(est.lo, max(0, lo[0])) and np.isclose(est.hi, min(1, hi[0]))
    # the point moves by the regime's median error inside the panel (or not at all, shift
    # "outside"); outside it by the median error of the calibration rows nearest in position
    z = placement_position(np.array([raw]), full)[0]
    near = np.argsort(np.abs(positions[:, j] - z), kind="stable")[:ADAPTIVE_NEAREST_SHIFT]
    assert np.isfinite(errors[:, j]).all() and ADAPTIVE_NEAREST_SHIFT is not None
    if strong:
        moved = raw + np.median(errors[near, j])
    else:
        moved = raw + np.median(errs) if shift == "all" else raw
    assert np.isclose(est.predicted, np.clip(moved, est.lo, est.hi))
    if shift == "outside" and not strong:
        assert np.median(errs) != 0 and est.predicted == pytest.approx(raw)
    assert est.rank == 1 + (full > est.predicted).sum() and est.n_reference == 60
    assert est.rank_lo <= est.rank <= est.rank_hi


@pytest.mark.parametrize("nearest", [None, 4])
@pytest.mark.parametrize("frontier_at_top", [True, False])
def test_interval_at_the_top_holds_the_frontier_folds_by_hand(frontier_at_top, nearest):
    """A prediction at the top of the panel, with a calibration written by hand: 20 random-fold
    errors in the top regime (−0.02 … 0.02), 10 random-fold errors of 0 inside the panel, 10
    frontier-fold errors beyond it (0.03, 0.04, … 0.12). At the 90 % level the regime's interval
    is its extremes (k = ⌈21·0.95⌉ = 20 = n), the pooled one (all 40) the second smallest and
    second largest errors (k = ⌈41·0.95⌉ = 39): [−0.02 + 0.04/19, 0.11]; the frontier folds'
    own, their extremes [0.03, 0.12]. The hull: [−0.02, 0.11], or with the frontier folds at the
    top [−0.02, 0.12]. The point moves by the regime's median error, 0 — or (``nearest`` = 4) by
    the median error of the 4 rows nearest in position: the top rows stand at z = 0, 1/19, …, 1
    (in the order of their errors), the frontier rows at 1.05, 1.10, … 1.50, the prediction (the
    panel's best) at z = 1; nearest: z = 1 (0.02), 1.05 (0.03), 18/19 (0.02 − 0.04/19) and 1.10
    (0.04) — median (0.02 + 0.03)/2 = 0.025."""
    from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark

    ref = _sim()[:60]
    bench = AdaptiveBenchmark(
        ref, max_items=10, batch=5, frontier_at_top=frontier_at_top, nearest_shift=nearest
    )
    top_errors = np.linspace(-0.02, 0.02, 20)
    frontier_errors = np.arange(3, 13) / 100
    col = np.concatenate([top_errors, np.zeros(10), frontier_errors])
    regimes = np.array(["top"] * 20 + ["interior"] * 10 + ["beyond"] * 10, dtype=object)
    frontier = np.array([False] * 30 + [True] * 10)
    z = np.concatenate([np.arange(20) / 19, np.full(10, -1.0), 1 + np.arange(1, 11) / 20])
    C = len(bench.counts)
    bench.__dict__["calibration"] = (  # the cached property, set by hand
        np.repeat(col[:, None], C, axis=1),
        np.repeat(regimes[:, None], C, axis=1),
        frontier,
        np.repeat(z[:, None], C, axis=1),
    )
    best = float(np.max(bench.reference_full))  # at the top, not beyond it
    assert best + 0.12 < 1
    pred, lo, hi, regime = bench.interval(best, 5)
    assert regime == "top"
    assert lo == pytest.approx(best - 0.02)
    assert hi == pytest.approx(best + (0.12 if frontier_at_top else 0.11))
    assert pred == pytest.approx(best + (0.025 if nearest else 0.0))
    # inside the panel none of these changes anything: the random folds' errors alone
    mid = float(np.median(bench.reference_full))
    p_mid, lo_mid, hi_mid, regime_mid = bench.interval(mid, 5)
    assert regime_mid == "interior" and p_mid == pytest.approx(mid)
    assert (lo_mid, hi_mid) == pytest.approx((mid - 0.02, mid + 0.02))
    # before the first round's count: no interval
    p0, lo0, hi0, _ = bench.interval(mid, 4)
    assert p0 == mid and np.isnan(lo0) and np.isnan(hi0)


def test_ridge_full_by_hand_and_against_scikit_learn():
    from sklearn.linear_model import Ridge

    from primebench_tasks.adaptive.policy import predict_adaptive, ridge_full

    # exactly determined without a penalty: full = 0.5·x0 + 0.5·x1
    Y = np.array([[1.0, 0.0, 9.0], [0.0, 1.0, 9.0], [1.0, 1.0, 9.0]])
    full = np.array([0.5, 0.5, 1.0])
    assert ridge_full(Y, full, np.array([0, 1]), np.array([1.0, 0.0, 0.0]), alpha=0.0) == (
        pytest.approx(0.5)
    )
    # with a penalty: scikit-learn's Ridge (intercept, centred) on the same columns
    X = _sim(M=50, n=40)
    f = X.mean(axis=1)
    items = np.array([3, 7, 11, 20, 31])
    want = Ridge(alpha=10.0).fit(X[:40][:, items], f[:40]).predict(X[45:46][:, items])[0]
    assert ridge_full(X[:40], f[:40], items, X[45], alpha=10.0) == pytest.approx(want)
    # a missing answer counts the item's reference mean
    y = X[45].copy()
    y[3] = np.nan
    filled = X[45].copy()
    filled[3] = X[:40, 3].mean()
    assert ridge_full(X[:40], f[:40], items, y) == pytest.approx(
        ridge_full(X[:40], f[:40], items, filled)
    )
    # the regime rule: the blend inside the panel, p-IRT alone above it
    ref = np.linspace(0.2, 0.8, 40)
    r = ridge_full(X[:40], ref, items, X[45])
    assert predict_adaptive(0.5, X[:40], ref, items, X[45], "regime_blend") == (
        pytest.approx((0.5 + r) / 2)
    )
    assert predict_adaptive(0.95, X[:40], ref, items, X[45], "regime_blend") == 0.95
    assert predict_adaptive(0.95, X[:40], ref, items, X[45], "blend") == (
        pytest.approx((0.95 + r) / 2)
    )
    with pytest.raises(ValueError, match="predictor must be one of"):
        predict_adaptive(0.5, X[:40], ref, items, X[45], "median")


def test_stopping_rule_and_resume():
    from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark

    X = _sim()
    bench = AdaptiveBenchmark(X[:60], max_items=40, batch=5)
    y = X[75]
    none = np.zeros(300, bool)
    assert bench.stop_reason(bench.estimate(np.full(300, np.nan), none), none, 0.5) is None
    asked, answers, order = _ask(bench, y, 8)
    est = bench.estimate(answers, asked)
    assert bench.stop_reason(est, asked, None) == "item budget (40) spent"
    assert bench.stop_reason(est, asked, est.width + 1e-9).startswith("interval narrower")
    # a run stopped after 3 rounds and resumed from its recorded answers asks what an
    # uninterrupted run asks: the choice depends only on the answers so far
    a3, y3, o3 = _ask(bench, y, 3)
    _, _, rest = _ask(bench, y, 5, a3, y3)
    assert o3 + rest == order


def test_race_separates_distinct_variants_and_stops():
    from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark
    from primebench_tasks.adaptive.race import race_variants

    X = _sim()
    bench = AdaptiveBenchmark(X[:60], max_items=100, batch=5)
    full = X.mean(axis=1)
    new = np.argsort(full[60:])[[0, 19]] + 60  # the weakest and the strongest held-out model
    calls = []

    def ask(picks):
        calls.append({b: list(p) for b, p in picks.items()})
        return {b: X[new][:, p] for b, p in picks.items()}

    r = race_variants([bench], ["c"], ["weak", "strong"], ask, max_items=100, batch=5)
    assert r.verdict["fully_ordered"] and list(r.table.index) == ["strong", "weak"]
    assert r.reason.startswith("every adjacent pair separated") and r.rounds == len(calls)
    assert len(r.asked[0]) <= 5 * r.rounds < 100 and len(set(r.asked[0])) == len(r.asked[0])
    assert len(r.draws[0]) == 5 * r.rounds and {i for i, _ in r.draws[0]} == set(r.asked[0])
    # the race's score is the Hansen–Hurwitz estimate: the weighted mean of the draws
    strong = np.mean([X[new[1], i] * w for i, w in r.draws[0]])
    assert r.table.loc["strong", "suite_score"] == pytest.approx(strong)
    # resumed from the first items' answers, the race draws what it drew and asks the rest only
    first = r.asked[0][:5]
    n_calls = len(calls)
    again = race_variants(
        [bench], ["c"], ["weak", "strong"], ask, max_items=100, batch=5,
        start=([list(first)], [X[new][:, first]]),
    )  # fmt: skip
    assert again.asked == r.asked and again.draws == r.draws
    asked_again = [i for c in calls[n_calls:] for i in c[0]]
    assert sorted(asked_again) == sorted(set(r.asked[0]) - set(first))

    same = np.argsort(full[60:])[[9, 9]] + 60  # a model against itself: never separated
    r2 = race_variants(
        [bench], ["c"], ["a", "b"], lambda p: {b: X[same][:, q] for b, q in p.items()},
        max_items=30, batch=5,
    )  # fmt: skip
    assert not r2.verdict["fully_ordered"] and r2.reason == "item budget (30 per benchmark) spent"
    assert len(r2.draws[0]) == 30 and len(r2.asked[0]) <= 30  # 6 rounds of 5 draws


def test_kept_calibration_does_not_carry_the_blas_kernels_last_bits(tmp_path, monkeypatch):
    """Another CPU's BLAS kernel moves the replayed errors by ~1e-12 (OpenBLAS's native kernel
    against Sandybridge: up to 1.6e-11 on the replay panels); rounded to CALIBRATION_DECIMALS,
    the kept file has the same bytes, and the errors used in memory are the rounded ones a resume
    reads back."""
    import primebench_tasks.adaptive.benchmark as adaptive

    X = _sim(M=40, n=60)
    kw = {"max_items": 20, "batch": 5}
    first = adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "a", **kw)
    errors = first.calibration[0]
    assert first.calibration_file is not None
    assert np.array_equal(errors, np.round(errors, adaptive.CALIBRATION_DECIMALS), equal_nan=True)
    real = adaptive.calibration_runs

    def other_kernel(*a, **k):
        e, p, g, f, z = real(*a, **k)
        wobble = 4e-12 * np.cos(np.arange(e.size)).reshape(e.shape)
        return e + wobble, p, g, f, z + wobble

    monkeypatch.setattr(adaptive, "calibration_runs", other_kernel)
    second = adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "b", **kw)
    assert np.array_equal(second.calibration[0], errors, equal_nan=True)
    assert second.calibration_file is not None
    assert second.calibration_file.read_bytes() == first.calibration_file.read_bytes()


def test_calibration_is_kept_and_read_back_not_replayed(tmp_path, monkeypatch):
    import primebench_tasks.adaptive.benchmark as adaptive
    from primebench_tasks.errors import InputError

    X = _sim(M=40, n=60)
    X[3, 7] = np.nan  # a missing reference answer is part of the inputs
    kw = {"max_items": 20, "batch": 5}
    first = adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "a", **kw)
    errors, regimes, frontier, positions = first.calibration
    path = first.calibration_file
    assert path is not None and path.parent == tmp_path / "a" and path.exists()
    assert errors.shape == (len(frontier), len(first.counts)) and frontier.any()
    # the same inputs elsewhere: the same bytes (canonical JSON, no timestamps)
    again = adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "b", **kw)
    again.calibration  # noqa: B018
    assert again.calibration_file is not None
    assert again.calibration_file.read_bytes() == path.read_bytes()

    # a resumed run reads it: the replay is not run, the arrays are the same, bit for bit
    def refuse(*_a, **_k):
        raise AssertionError("the calibration was replayed")

    monkeypatch.setattr(adaptive, "calibration_runs", refuse)
    back = adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "a", **kw)
    e2, r2, f2, z2 = back.calibration
    assert np.array_equal(e2, errors, equal_nan=True) and (f2 == frontier).all()
    assert np.array_equal(z2, positions, equal_nan=True) and np.isfinite(positions).all()
    assert r2.dtype == object and (r2 == regimes).all()
    y = X[5]
    asked = np.zeros(60, bool)
    asked[:10] = True
    ans = np.where(asked, y, np.nan)
    assert back.estimate(ans, asked) == first.estimate(ans, asked)

    # other inputs, other file: the policy, the round size, one reference answer
    other = [
        adaptive.AdaptiveBenchmark(
            X, cache_dir=tmp_path / "a", policy=adaptive.AdaptivePolicy(shift="outside"), **kw
        ),
        adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "a", max_items=20, batch=10),
        adaptive.AdaptiveBenchmark(
            np.where(np.arange(60) == 8, 1 - X, X), cache_dir=tmp_path, **kw
        ),
    ]
    keys = {b.calibration_key for b in other} | {first.calibration_key}
    assert len(keys) == 4

    # a damaged file is refused, naming the file and the field
    text = path.read_text()
    path.write_text(text.replace('"frontier": [', '"frontier": [1, ', 1))
    with pytest.raises(InputError, match="field 'frontier'") as exc:
        adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "a", **kw).calibration  # noqa: B018
    assert str(path) in str(exc.value)
    path.write_text(text.replace('"errors": [\n    [\n', '"errors": [\n    [\n      "x",\n', 1))
    with pytest.raises(InputError, match=r"row errors\[0\], field 'errors'"):
        adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "a", **kw).calibration  # noqa: B018
    path.write_text(text.replace('"interior"', '"inside"', 1))  # not a placement regime
    with pytest.raises(InputError, match="field 'regimes'"):
        adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "a", **kw).calibration  # noqa: B018
    path.write_text(
        text.replace('"positions": [\n    [\n', '"positions": [\n    [\n      true,\n', 1)
    )
    with pytest.raises(InputError, match=r"row positions\[0\], field 'positions'"):
        adaptive.AdaptiveBenchmark(X, cache_dir=tmp_path / "a", **kw).calibration  # noqa: B018


_KEPT_CALIBRATION_HASH = """
import hashlib, sys, tempfile
import numpy as np
from primebench_tasks.data.panel import Panel
from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark
Y = Panel.load_default("autojudger").matrix("MMMU_DEV_VAL").astype(float)
with tempfile.TemporaryDirectory() as d:
    bench = AdaptiveBenchmark(Y[np.isfinite(Y).any(axis=1)], max_items=50, cache_dir=d)
    bench.calibration
    print(hashlib.sha256(bench.calibration_file.read_bytes()).hexdigest())
"""


@pytest.mark.slow  # three replays of MMMU's calibration (~8 s each)
def test_procedure_class_is_asked_calibrated_and_keyed():
    """A subclass's ``procedure_class`` (a comparison script's variant) is the procedure the test
    asks and the one its calibration replays, and it enters the calibration's key; the library's
    own key is unchanged by the hook."""
    import primebench_tasks.adaptive.benchmark as adaptive

    built = []

    class Counting(adaptive.AdaptiveProcedure):
        def __init__(self, Y_fit, policy):
            super().__init__(Y_fit, policy)
            built.append(len(Y_fit))

    class Variant(adaptive.AdaptiveBenchmark):
        procedure_class = Counting

    X = _sim(M=30, n=40)
    kw = {"max_items": 10, "batch": 5}
    plain, variant = adaptive.AdaptiveBenchmark(X, **kw), Variant(X, **kw)
    assert type(variant.procedure) is Counting and built == [30]
    variant.calibration  # noqa: B018
    assert len(built) > 1 and max(built[1:]) < 30  # the folds' fits, each without its held-out
    assert variant.calibration_key != plain.calibration_key
    assert type(plain.procedure) is adaptive.AdaptiveProcedure


def test_kept_calibration_is_the_same_bytes_under_every_blas_kernel():
    """The real panel's kept calibration (MMMU, 169 models: at 100 items three quarters of its
    unrounded errors differ, by up to 9e-12, between the native and Sandybridge kernels) has the
    same bytes under the machine's own OpenBLAS kernel and forced Haswell and Sandybridge ones."""
    import subprocess
    import sys

    digests = {}
    for kernel in BLAS_KERNELS:
        r = subprocess.run(
            [sys.executable, "-c", _KEPT_CALIBRATION_HASH],
            env=kernel_env(kernel),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        digests[kernel] = r.stdout.strip()
    assert len(set(digests.values())) == 1, digests
