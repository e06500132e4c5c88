"""The hostile battery, embedding: an item image that is a FIFO, a device or a 70 MB file never
stops `embed` — the text space reads no image, the vision-text space records the item as failed
and encodes the others."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from primebench_tasks.embed.cache import embed_panel
from tests.conftest import make_panel


class _Encoder:
    """A deterministic stand-in encoder (the fault here is the file, not the model)."""

    id = "test:hash-8"

    def encode_text(self, texts):
        return np.array([[hash(t) % 97 / 97.0] * 8 for t in texts], dtype=np.float32)

    def encode_vl(self, texts, images):
        return self.encode_text(
            [f"{t}|{im is not None}" for t, im in zip(texts, images, strict=True)]
        )


def _panel_with_bad_images(tmp_path):
    X = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0]])
    panel = make_panel({"b": X}, {"b": "Math Reasoning"})
    root = tmp_path / "p"
    panel.save(root)
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    big = tmp_path / "big.png"
    with open(big, "wb") as fh:  # sparse: 70 MB on paper, nothing on disk
        fh.truncate(70 * 1024 * 1024)
    ok = tmp_path / "ok.png"
    from PIL import Image

    Image.new("RGB", (4, 4)).save(ok)
    items = panel.items.copy()
    items["question"] = [f"q{i}" for i in range(4)]
    items["image_ref"] = [str(fifo), "/dev/zero", str(big), str(ok)]
    from primebench_tasks.data.panel import Panel

    p2 = Panel.from_records(
        panel.name,
        pd.DataFrame(
            {
                "model": np.repeat(panel.model_names, 4),
                "benchmark": "b",
                "item_id": list(items["item_id"]) * 2,
                "condition": "vl",
                "score": X.ravel(),
            }
        ),
        panel.models,
        panel.benchmarks,
        items,
    )
    p2.save(root)
    return p2, root


def test_text_space_reads_no_image(tmp_path):
    panel, root = _panel_with_bad_images(tmp_path)
    _, rep = embed_panel(panel, root, _Encoder(), "text")
    assert rep.n_encoded == 4 and not rep.failed


def test_vl_space_records_bad_images_and_encodes_the_rest(tmp_path):
    panel, root = _panel_with_bad_images(tmp_path)
    _, rep = embed_panel(panel, root, _Encoder(), "vl")
    reasons = " ".join(r for *_, r in rep.failed)
    assert len(rep.failed) == 3 and "not a regular file" in reasons and "limit" in reasons
