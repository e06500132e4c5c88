import numpy as np
import pandas as pd
import pytest

from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from tests.conftest import make_panel


def test_roundtrip_keeps_nan_and_hash(tmp_path, toy_panel):
    X = toy_panel.matrix("bench_a").copy()
    assert X.dtype == np.float32 and X.shape == (12, 60)
    toy_panel.save(tmp_path / "p")
    q = Panel.load(tmp_path / "p")
    assert q.content_hash == toy_panel.content_hash
    np.testing.assert_array_equal(q.matrix("bench_a"), X)


def test_missing_score_stays_missing():
    X = np.array([[1.0, np.nan], [0.0, 1.0], [np.nan, 0.0]])
    p = make_panel({"b": X}, {"b": "Comprehensive"})
    np.testing.assert_array_equal(np.isnan(p.matrix("b")), np.isnan(X))


def test_subset_shares_score_arrays(toy_panel):
    names = toy_panel.model_names[::2]
    sub = toy_panel.subset_models(names)
    assert sub._scores is toy_panel._scores
    assert sub.model_names == names
    np.testing.assert_array_equal(sub.matrix("bench_b"), toy_panel.matrix("bench_b")[::2])
    with pytest.raises(KeyError):
        toy_panel.subset_models(["nope"])


def _tables():
    scores = pd.DataFrame(
        {
            "model": ["a", "b"],
            "benchmark": ["x", "x"],
            "item_id": ["1", "1"],
            "condition": ["vl", "vl"],
            "score": [1.0, 0.0],
        }
    )
    models = pd.DataFrame({"model": ["a", "b"]})
    bench = pd.DataFrame({"benchmark": ["x"], "category": ["Comprehensive"]})
    items = pd.DataFrame({"benchmark": ["x"], "item_id": ["1"]})
    return scores, models, bench, items


def test_validation_errors_name_row_and_field():
    s, m, b, i = _tables()
    dup = pd.concat([s, s.iloc[[0]]], ignore_index=True)
    with pytest.raises(InputError, match=r"row 4.*duplicate key"):
        Panel.from_records("t", dup, m, b, i, source="scores.parquet")
    bad = s.assign(score=[1.5, 0.0])
    with pytest.raises(InputError, match=r"row 2, field 'score'.*outside \[0, 1\]"):
        Panel.from_records("t", bad, m, b, i, source="scores.parquet")
    with pytest.raises(InputError, match="unknown column"):
        Panel.from_records("t", s.assign(extra=1), m, b, i)
    with pytest.raises(InputError, match="not in the benchmarks table"):
        Panel.from_records("t", s, m, b, pd.DataFrame({"benchmark": ["y"], "item_id": ["1"]}))
    with pytest.raises(InputError, match="no category"):
        Panel.from_records("t", s, m, b.assign(category=[None]), i)
    only_nan = s.assign(score=[1.0, np.nan])
    with pytest.raises(InputError, match="model 'b' has no valid score"):
        Panel.from_records("t", only_nan, m, b, i)


def test_tampered_panel_is_refused(tmp_path, toy_panel):
    from primebench_tasks.data.panel import data_dir

    toy_panel.save(tmp_path / "p")
    d = data_dir(tmp_path / "p")
    models = pd.read_parquet(d / "models.parquet")
    models.loc[0, "family"] = "changed"
    models.to_parquet(d / "models.parquet", index=False)
    with pytest.raises(InputError, match="content hash"):
        Panel.load(tmp_path / "p")


def test_embeddings_align_by_id(toy_panel):
    ids = pd.DataFrame({"benchmark": ["bench_a", "bench_a"], "item_id": ["bench_a-3", "bench_a-0"]})
    toy_panel.set_embeddings("text", ids, np.array([[3.0, 3.0], [0.0, 1.0]]))
    vecs, has = toy_panel.embeddings("bench_a", "text")
    assert has.sum() == 2 and has[0] and has[3]
    np.testing.assert_array_equal(vecs[3], [3.0, 3.0])
    assert np.isnan(vecs[1]).all()


def test_outputs_follow_the_umask_not_0600(tmp_path, toy_panel):
    """Atomic writes went through mkstemp (0600): others in a shared folder could not read."""
    import os
    import stat

    from primebench_tasks.data.io import atomic_write_text

    old = os.umask(0o022)
    try:
        f = atomic_write_text(tmp_path / "a.json", "{}")
        assert stat.S_IMODE(f.stat().st_mode) == 0o644
        toy_panel.save(tmp_path / "p")
        assert stat.S_IMODE((tmp_path / "p" / "panel.json").stat().st_mode) == 0o644
    finally:
        os.umask(old)
