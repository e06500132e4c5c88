"""Whether a design-only benchmark's content key survives the re-encoding between harnesses
(#81): lmms-eval's rows hold an image as the hub stores it (PNG, or the source JPEG), VLMEvalKit's
TSVs as a JPEG in base64. A key that changes with the encoding draws other items in the other
harness (their pool fingerprints then differ). Measured: the share of images whose grey
mean-hash changes under JPEG re-encoding at qualities 95, 90 and 75, for the 16 × 16 hash the
key took (``suite.content_design.image_hash``) and an 8 × 8 one — the share of items whose key
changes —, against the key the cross-harness designs take: the text alone, the rows of one text
ranked by ``suite.content_design.image_order`` (mean grey, then R, G, B) — the share of a group's
rows whose rank changes (groups of 5, 20 and 100 drawn from the images) —, on two kinds of real
images:
MATH-Vision testmini's 304 figures (embedded in the product) and 300 crops (160–400 px) of the
two photographs scikit-learn ships (natural scenes, as POPE's COCO images).

    python research/design_only/image_key.py            # writes results/image_key.csv and .md
    python research/design_only/image_key.py --render   # the table from the committed CSV
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CSV = HERE / "results" / "image_key.csv"
MD = HERE / "results" / "image_key.md"
QUALITIES = (95, 90, 75)
GROUPS = (5, 20, 100)
"""Rows of one text in a stratum: POPE's question and answer in a split holds tens to hundreds;
ChartQA's, TextVQA's and ScienceQA's texts are mostly single."""
REPEATS = 200


def mean_hash(image, side: int) -> str:
    import numpy as np

    px = np.asarray(image.convert("L").resize((side, side)), dtype=np.float64).ravel()
    return "".join("1" if p > px.mean() else "0" for p in px)


def jpeg(image, quality: int):
    from PIL import Image

    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="JPEG", quality=quality)
    return Image.open(io.BytesIO(buf.getvalue()))


def images() -> dict[str, list]:
    from PIL import Image
    from sklearn.datasets import load_sample_images

    figures = sorted((ROOT / "primebench_tasks/data/embedded/mathvision/images").iterdir())
    out = {"MATH-Vision figures": [Image.open(p).convert("RGB") for p in figures]}
    rng = random.Random(0)
    photos = [Image.fromarray(a) for a in load_sample_images().images]
    crops = []
    for _ in range(300):
        p = rng.choice(photos)
        side = rng.randrange(160, 400)
        x, y = rng.randrange(p.width - side), rng.randrange(p.height - side)
        crops.append(p.crop((x, y, x + side, y + side)))
    out["photo crops"] = crops
    return out


def measure() -> list[dict[str, str]]:
    from primebench_tasks.suite.content_design import image_order

    rows = []
    for kind, imgs in images().items():
        for q in QUALITIES:
            copies = [jpeg(i, q) for i in imgs]
            for side in (16, 8):  # the image's hash in the key: an item whose key changes
                moved = sum(
                    mean_hash(a, side) != mean_hash(b, side)
                    for a, b in zip(imgs, copies, strict=True)
                )
                rows.append(
                    _row(
                        kind,
                        len(imgs),
                        f"{side} x {side} mean-hash in the key",
                        q,
                        moved,
                        len(imgs),
                    )
                )
            before = [image_order(i) for i in imgs]
            after = [image_order(i) for i in copies]
            rng = random.Random(0)
            for g in GROUPS:  # the text's key, rows of one text ranked by image_order
                moved = total = 0
                for _ in range(REPEATS):
                    pick = rng.sample(range(len(imgs)), g)
                    a = sorted(pick, key=lambda k: before[k])
                    b = sorted(pick, key=lambda k: after[k])
                    moved += sum(x != y for x, y in zip(a, b, strict=True))
                    total += g
                rows.append(
                    _row(kind, len(imgs), f"text key, rank in a group of {g}", q, moved, total)
                )
    return rows


def _row(kind: str, n: int, key: str, q: int, moved: int, total: int) -> dict[str, str]:
    return {
        "images": kind,
        "n": str(n),
        "key": key,
        "jpeg_quality": str(q),
        "changed": str(moved),
        "of": str(total),
        "changed_share": f"{moved / total:.4f}",
    }


def render(rows: list[dict[str, str]]) -> str:
    lines = [
        "| images | key | JPEG 95 | JPEG 90 | JPEG 75 |",
        "|---|---|---|---|---|",
    ]
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for r in rows:
        cells.setdefault((f"{r['images']} ({r['n']})", r["key"]), {})[r["jpeg_quality"]] = (
            f"{float(r['changed_share']):.1%}"
        )
    for (images, key), by_q in cells.items():
        lines.append(f"| {images} | {key} | {by_q['95']} | {by_q['90']} | {by_q['75']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--render", action="store_true", help="the table from the committed CSV")
    args = p.parse_args(argv)
    if args.render:
        with CSV.open(encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    else:
        rows = measure()
        CSV.parent.mkdir(parents=True, exist_ok=True)
        with CSV.open("w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    MD.write_text(render(rows), encoding="utf-8")
    sys.stdout.write(render(rows))
    print(f"wrote {CSV} and {MD}" if not args.render else f"wrote {MD}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
