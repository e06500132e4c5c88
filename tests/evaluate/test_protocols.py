import numpy as np
import pandas as pd
import pytest

from primebench_tasks.cli import main
from primebench_tasks.evaluate.protocols import (
    bootstrap_ceiling,
    default_meets_bar,
    run_end_to_end,
    run_protocol,
    summarise,
    variant_ranking,
)
from primebench_tasks.evaluate.splits import chronological_split, random_splits
from tests.conftest import make_panel


def test_random_splits_partition_the_models():
    for build, held in random_splits(30, 5, seed=1):
        assert len(build) == 15 and len(held) == 15
        assert sorted(np.concatenate([build, held]).tolist()) == list(range(30))
    assert [b.tolist() for b, _ in random_splits(30, 3, 7)] == [
        b.tolist() for b, _ in random_splits(30, 3, 7)
    ]


def test_chronological_split_keeps_undated_out_of_build():
    models = pd.DataFrame(
        {
            "model": list("abcdef"),
            "release_date": ["2024-05-01", None, "2023-01-01", "2025-01-01", None, "2024-01-01"],
        }
    )
    build, held = chronological_split(models)
    assert set(models["model"][build]) == {"c", "f", "a"}
    assert {"b", "e"} <= set(models["model"][held])
    with pytest.raises(ValueError, match="release dates"):
        chronological_split(models.assign(release_date=None))


def _panel(M=24, seed=0):
    rng = np.random.default_rng(seed)
    ab = np.linspace(-2, 2, M)
    mats = {}
    for b, n in (("sci", 150), ("aca", 120)):
        d = rng.normal(0, 1, n)
        mats[b] = (rng.random((M, n)) < 1 / (1 + np.exp(-(ab[:, None] - d)))).astype(float)
    dates = [f"202{i % 4}-0{1 + i % 9}-01" for i in range(M)]
    return make_panel(mats, {"sci": "Science Knowledge", "aca": "Academic Knowledge"}, dates=dates)


def test_heldout_protocol_rows_and_summary():
    p = _panel()
    cats, splits = run_protocol(
        p,
        "heldout",
        ["random", "variance", "anchor_points"],
        retentions=[0.1, 0.5],
        n_splits=3,
        estimators=["mean", "pirt"],
    )
    assert set(cats["category"]) == {"Science Knowledge", "Academic Knowledge"}
    assert len(splits) == 3 * 2 * (2 + 2 + 3)  # anchor_points also gets the weighted mean
    # the panel is a clean 1-d ability model: every arm must order held-out models well at 50 %
    half = splits[splits["budget"] == "50%"]
    assert (half.groupby(["selector", "estimator"])["rho"].mean() > 0.8).all()
    s = summarise(splits, ("variance", "mean"))
    assert s["n_splits"].eq(3).all()
    assert s.groupby("retention")["wins"].sum().ge(3).all()
    assert s["is_default"].sum() == 2
    bar = default_meets_bar(s, ("variance", "mean"), retentions=[0.1])
    assert list(bar.columns) == [
        "budget",
        "retention",
        "n_items",
        "default_rho",
        "best_other",
        "best_rho",
        "best_se",
        "meets_bar",
    ]


def test_undefined_categories_are_counted():
    M = 24
    ab = np.linspace(-2, 2, M)
    rng = np.random.default_rng(0)
    good = (rng.random((M, 60)) < 1 / (1 + np.exp(-ab[:, None]))).astype(float)
    flat = np.tile(np.array([1.0, 0.0] * 30), (M, 1))  # every model scores 0.5 everywhere
    p = make_panel({"g": good, "f": flat}, {"g": "Comprehensive", "f": "Commonsense"})
    cats, splits = run_protocol(p, "same", ["random"], retentions=[1.0], estimators=["mean"])
    flat_rows = cats[cats["category"] == "Commonsense"]
    assert flat_rows["rho"].isna().all()
    assert splits["n_undefined"].tolist() == [1]
    assert np.isfinite(splits["rho"]).all()  # the split mean leaves the undefined category out


def test_default_meets_bar_logic():
    s = pd.DataFrame(
        {
            "selector": ["a", "b"],
            "estimator": ["mean", "mean"],
            "retention": [0.05, 0.05],
            "mean_rho": [0.90, 0.92],
            "se_rho": [0.01, 0.01],
        }
    )
    assert not default_meets_bar(s, ("a", "mean"), [0.05])["meets_bar"].iloc[0]
    s.loc[0, "mean_rho"] = 0.915
    assert default_meets_bar(s, ("a", "mean"), [0.05])["meets_bar"].iloc[0]


def test_bootstrap_ceiling():
    rng = np.random.default_rng(0)
    far = (rng.random((6, 500)) < np.linspace(0.2, 0.8, 6)[:, None]).astype(float)
    close = (rng.random((6, 500)) < np.full((6, 1), 0.5)).astype(float)
    assert bootstrap_ceiling(far, 200) > 0.95
    assert bootstrap_ceiling(close, 200) < 0.9
    r = variant_ranking(far, np.arange(0, 500, 5), n_boot=100)
    assert r["supports_conclusion"] and r["rho"] > 0.8


def test_end_to_end_protocol():
    p = _panel()
    df, _ = run_end_to_end(p, ["variance"], [0.5], n_splits=2, k=1)
    assert set(df["selector"]) == {"stage3_only", "variance"}
    # keeping half of a clean 1-d panel's items still orders the held-out models
    assert (df["rho"] > 0.8).all()


def test_cli_validate(tmp_path, capsys):
    p = _panel()
    p.save(tmp_path / "p")
    assert (
        main(
            [
                "validate",
                "--panel",
                str(tmp_path / "p"),
                "--selectors",
                "random,variance",
                "--splits",
                "2",
                "--retentions",
                "0.1,0.5",
                "--estimators",
                "mean",
                "--out",
                str(tmp_path / "v"),
            ]
        )
        == 0
    )
    for f in ("splits.csv", "summary.csv", "table.md", "rho_vs_retention.png"):
        assert (tmp_path / "v" / f).exists()
    s = pd.read_csv(tmp_path / "v" / "summary.csv")
    assert {"mean_rho", "sd_rho", "n_splits", "wins", "mean_mae", "is_default"} <= set(s.columns)
    assert (
        main(
            [
                "validate",
                "--panel",
                str(tmp_path / "p"),
                "--protocol",
                "chrono",
                "--selectors",
                "variance",
                "--retentions",
                "0.5",
                "--estimators",
                "mean",
                "--out",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )


def test_cli_validate_frontier_budgets_only_and_the_chosen_arm(tmp_path):
    """--protocol frontier holds out the strongest models; --budgets alone runs only those
    budgets; splits.csv names the arm the cross-validated selector kept."""
    p = _panel()
    p.save(tmp_path / "p")
    args = ["validate", "--panel", str(tmp_path / "p"), "--estimators", "mean"]
    assert (
        main(
            [
                *args,
                "--protocol",
                "frontier",
                "--selectors",
                "random,cross_validated",
                "--budgets",
                "5",
                "--out",
                str(tmp_path / "f"),
            ]
        )
        == 0
    )
    s = pd.read_csv(tmp_path / "f" / "splits.csv")
    assert set(s["budget"]) == {"5 per category"}  # no default retentions added
    cv = s[s["selector"] == "cross_validated"]
    assert cv["chosen"].str.contains(": ").all()  # "category: arm" per category
    assert (s[s["selector"] == "random"]["chosen"].str.contains("random")).all()


def test_budgets_in_items_and_floor_and_item_counts_in_every_row(toy_panel, tmp_path):
    """`validate` could not test small budgets: the 100-item floor was always applied and no
    output had the item count. Item budgets take no floor; --floor applies to retentions."""
    from primebench_tasks.evaluate.validate import validate

    s = validate(
        toy_panel,
        tmp_path / "v",
        "same",
        "vaw_dc,random",
        [0.1],
        n_splits=1,
        estimators=["mean"],
        floor=0,
        budgets=[5, 10],
    )
    from primebench_tasks.evaluate.protocols import prepare_pools

    sizes = [p.data.X.shape[1] for p in prepare_pools(toy_panel)]  # the category pools
    n = s.set_index(["selector", "budget"])["n_items"]
    assert len(sizes) == 2 and min(sizes) >= 10
    assert n[("random", "5 per category")] == 10 and n[("random", "10 per category")] == 20
    assert n[("random", "10%")] == sum(int(0.1 * m) for m in sizes)  # no floor
    s2 = validate(
        toy_panel,
        tmp_path / "w",
        "same",
        "random",
        [0.1],
        n_splits=1,
        estimators=["mean"],
        floor=30,
    )
    assert s2["n_items"].iloc[0] == sum(min(m, 30) for m in sizes)  # the floor lifts them
    table = (tmp_path / "v" / "table.md").read_text()
    assert "5 per category (10 items)" in table


def test_disco_is_left_out_of_all_on_binary_panels():
    from primebench_tasks.select.registry import resolve

    names, _ = resolve("all", has_embeddings=False, binary=True)
    assert "disco" not in names and "variance" in names
    assert "disco" in resolve("all", has_embeddings=False, binary=False)[0]
    assert "disco" in resolve("disco", has_embeddings=False, binary=True)[0]  # asked by name


def test_heldout_protocol_never_shows_held_out_models_to_the_selection(monkeypatch):
    """Leakage: selectors and estimators are fitted on the build rows only. (1) every matrix a
    selector or estimator is fitted on is exactly the build rows of its pool; (2) replacing the
    held-out models' scores with noise leaves every selection unchanged."""
    from primebench_tasks.evaluate import protocols
    from primebench_tasks.select.registry import SELECTORS

    fitted: list[tuple[np.ndarray, np.ndarray]] = []
    base = SELECTORS["vaw_dc"]

    class Spy:
        def __init__(self, k, rs, ctx):
            self.inner = base(k, rs, ctx)

        def fit(self, X, items=None):
            self.inner.fit(X, items)
            self.indices_, self.weights_ = self.inner.indices_, self.inner.weights_
            fitted.append((np.array(X), self.indices_.copy()))
            return self

    monkeypatch.setitem(SELECTORS, "spy", lambda k, rs, ctx: Spy(k, rs, ctx))
    est_inputs: list[np.ndarray] = []
    real_make = protocols.make_estimator

    def spy_make(name, thresholds=None):
        est = real_make(name, thresholds)
        real_fit = est.fit

        def fit(Y, idx, w=None):
            est_inputs.append(np.array(Y))
            return real_fit(Y, idx, w)

        est.fit = fit
        return est

    monkeypatch.setattr(protocols, "make_estimator", spy_make)
    p = _panel()
    run_protocol(p, "heldout", ["spy"], retentions=[0.1], n_splits=2, estimators=["aipw"])
    splits = random_splits(len(p.model_names), 2, 0)
    pools = protocols.prepare_pools(p)
    expected = [pool.data.X[b] for b, _ in splits for pool in pools]
    assert len(fitted) == len(expected) == len(est_inputs)
    for (X, _), E, Y in zip(fitted, expected, est_inputs, strict=True):
        np.testing.assert_array_equal(X, E)
        np.testing.assert_array_equal(Y, E)
    first = [idx for _, idx in fitted]

    # split 0 again with its held-out models' scores replaced by noise: the same selections
    fitted.clear()
    build0, held0 = splits[0]
    assert len(held0) > 0
    rng = np.random.default_rng(5)
    real_prepare = protocols.prepare_pools

    def noisy_prepare(panel, cell_space="auto"):
        out = real_prepare(panel, cell_space)
        for pool in out:
            pool.data.X[held0] = (rng.random((len(held0), pool.data.X.shape[1])) < 0.5).astype(
                pool.data.X.dtype
            )
        return out

    monkeypatch.setattr(protocols, "prepare_pools", noisy_prepare)
    run_protocol(p, "heldout", ["spy"], retentions=[0.1], n_splits=1, estimators=["aipw"])
    assert len(fitted) == len(pools)
    for (_, idx), ref in zip(fitted, first[: len(pools)], strict=True):
        np.testing.assert_array_equal(idx, ref)
