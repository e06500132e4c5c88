"""The torch-free parts of the embed package: δ^VL, the fixed projection and importing
precomputed vectors (kept out of test_encoders.py, whose module-level torch skip would hide them)."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from primebench_tasks.embed.projection import random_projection, vision_dependence


def _mathvision_copy(tmp_path):
    from primebench_tasks.data.defaults import default_path

    dst = tmp_path / "mv"
    shutil.copytree(default_path("mathvision"), dst)
    return dst


def test_vision_dependence_by_hand():
    t = np.array([[1.0, 0.0], [1.0, 0.0], [np.nan, np.nan]])
    v = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    d = vision_dependence(t, v)
    assert d[0] == pytest.approx(0.0)
    assert d[1] == pytest.approx(1 - 1 / np.sqrt(2))
    assert d[2] == 0.0  # no text/vl pair: δ = 0 (App. D.1)


def test_projection_is_fixed_and_seeded():
    x = np.random.default_rng(0).normal(size=(5, 300)).astype(np.float32)
    a, b = random_projection(x), random_projection(x)
    assert a.shape == (5, 64) and np.array_equal(a, b)
    assert not np.array_equal(a, random_projection(x, seed=1))
    # distances are roughly preserved (Johnson-Lindenstrauss)
    d0 = np.linalg.norm(x[0] - x[1])
    assert 0.6 < np.linalg.norm(a[0] - a[1]) / d0 < 1.4


def test_import_precomputed_vectors(tmp_path):
    from primebench_tasks.cli import main
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.errors import InputError

    root = _mathvision_copy(tmp_path)
    p = Panel.load(root)
    ids = p.items[["benchmark", "item_id"]]
    np.save(tmp_path / "v.npy", np.random.default_rng(0).normal(size=(len(ids), 8)))
    ids.to_csv(tmp_path / "v.ids.csv", index=False)
    assert (
        main(
            [
                "embed",
                "--panel",
                str(root),
                "--encoder",
                f"file:{tmp_path / 'v.npy'}",
                "--space",
                "text",
            ]
        )
        == 0
    )
    assert Panel.load(root).embeddings("MATH-Vision_MINI", "text")[1].all()
    from primebench_tasks.embed.cache import import_vectors

    with pytest.raises(InputError, match="ids file"):
        np.save(tmp_path / "w.npy", np.zeros((2, 2)))
        import_vectors(tmp_path / "w.npy")
    assert Path(tmp_path / "v.npy").exists()
