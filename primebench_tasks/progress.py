"""Progress bars for long steps (tqdm, imported on first use): rate and ETA on stderr, off when
stderr is not a terminal (logs and CI stay clean) unless ``PRIMEBENCH_PROGRESS=1``."""

from __future__ import annotations

import os
import sys
from typing import Any


def progress_bar(total: int | None, desc: str, unit: str = "it", **kwargs: Any) -> Any:
    """A ``tqdm`` bar of ``total`` ``unit``s labelled ``desc``; use as a context manager and call
    ``.update(n)``. ``disable=True`` hides it whatever the terminal."""
    from tqdm import tqdm

    forced = os.environ.get("PRIMEBENCH_PROGRESS")
    disable = (forced == "0") if forced is not None else not sys.stderr.isatty()
    if kwargs.pop("disable", None):  # the caller hides it (another bar shows this work)
        disable = True
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        disable=disable,
        dynamic_ncols=True,
        **kwargs,
    )
