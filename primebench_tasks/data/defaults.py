"""The embedded default data: real, licence-compatible panels and a leaderboard shipped as package
data (``primebench_tasks/data/embedded/<name>/``, each with its LICENSE and SOURCE.md)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from primebench_tasks.errors import NotFoundError

_DESCRIPTIONS = {
    "autojudger": "VLMEvalKit records of 168-169 VLMs on AI2D_TEST and MMMU_DEV_VAL (Apache-2.0)",
    "blink": "BLINK validation: 19 VLMs x 1,901 items, the authors' own predictions (Apache-2.0)",
    "m3irt": "24 recent VLMs on MathVista testmini and MMMU val, with blind (image-free) runs (MIT)",
    "mmmu_merged": "MMMU validation: 185 VLMs x 900 items, AutoJudger's VLMEvalKit records and "
    "M3IRT's runs merged by MMMU id (7 models joined by the alias table; Apache-2.0, MIT)",
    "openvlm_ocrbench_text": "OCRBench: 188 VLMs x the 959 items their text tells apart, "
    "VLMEvalKit's published records (March 2025; Apache-2.0)",
    "openvlm_realworldqa_text": "RealWorldQA: 172 VLMs x the 708 items their text tells apart, "
    "VLMEvalKit's published records (March 2025; Apache-2.0)",
    "mathvision": "MATH-Vision testmini: 304 items with images, 16 model set-ups (MIT)",
    "openvlm_records": "BLINK, OCRBench, RealWorldQA: 202 VLMs, VLMEvalKit's published records "
    "with MiniLM text embeddings (64-d projection; Apache-2.0)",
    "openvlm": "OpenVLM leaderboard snapshot: 284 VLMs x 8 benchmarks with release dates (MIT)",
}
"""Descriptions of the embedded data sets that no benchmark card builds (a card's ``[embedded]``
panel is described by the card)."""


def embedded_description(name: str) -> str:
    """One line on embedded data set ``name`` (``''`` when none is written)."""
    from primebench_tasks.data.cards import benchmark_cards

    for card in benchmark_cards():
        if card.embedded is not None and card.embedded.panel == name:
            return card.embedded.description
    return _DESCRIPTIONS.get(name, "")


def embedded_root() -> Path:
    return Path(str(resources.files("primebench_tasks.data").joinpath("embedded")))


def default_names() -> list[str]:
    """Names of the embedded data sets."""
    root = embedded_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("_"))


def default_path(name: str) -> Path:
    """Directory of embedded data set ``name``."""
    path = embedded_root() / name
    if not path.is_dir():
        raise NotFoundError(
            f"no embedded data set {name!r}; available: {', '.join(default_names())}"
        )
    return path


def default_kind(name: str) -> str:
    """``'panel'`` or ``'leaderboard'``."""
    return "leaderboard" if (default_path(name) / "leaderboard.json").exists() else "panel"
