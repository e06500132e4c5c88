"""The placement figure (``placement.png``): per benchmark, the reference models' full scores by
rank and each placed model at its predicted rank and full score with 95 % intervals (matplotlib,
Agg backend, imported when drawn)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from primebench_tasks.place.result import Placement

if TYPE_CHECKING:
    from primebench_tasks.data.panel import Panel


def placement_figure(doc: Placement, panels: Mapping[str, Panel], path: Path) -> Path:
    """One panel per benchmark: the reference models' full benchmark scores by rank, and each
    placed model at its predicted rank and predicted full score with 95 % intervals."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from primebench_tasks.metrics import nanmean_rows

    benches = list(next(iter(doc.models.values())).benchmarks)
    fig, axes = plt.subplots(
        1, len(benches), figsize=(max(3.2 * len(benches), 6.4), 3.8), squeeze=False
    )
    for ax, b in zip(axes[0], benches, strict=True):
        ref = np.sort(nanmean_rows(panels[b].matrix(b)))[::-1]
        ref = ref[np.isfinite(ref)]
        ax.scatter(
            np.arange(1, len(ref) + 1),
            ref,
            s=10,
            color="#999999",
            label=f"reference ({panels[b].name})",
        )
        for k, (model, r) in enumerate(doc.models.items()):
            e = r.benchmarks[b]
            t, rk = e.predicted_full, e.predicted_rank
            if t.value is None or rk.value is None:
                continue
            assert t.lo is not None and t.hi is not None and rk.lo is not None and rk.hi is not None
            # a placement the checks flagged is drawn hollow and named as such: its point is
            # not a comparison (answers the parser could not read, or a misfit pattern)
            warning = (
                "not comparable: answers"
                if not e.comparable
                else "misfit"
                if e.misfit.flagged
                else "answers flagged"
                if e.flagged
                else None
            )
            ax.errorbar(
                rk.value,
                t.value,
                xerr=[[rk.value - rk.lo], [rk.hi - rk.value]],
                yerr=[[t.value - t.lo], [t.hi - t.value]],
                fmt="o",
                color=f"C{k % 10}",
                mfc="none" if warning else f"C{k % 10}",
                ls="none",
                alpha=0.6 if warning else 1.0,
                capsize=3,
                label=model if warning is None else f"{model} ({warning})",
            )
        ax.set_title(b, fontsize=9)
        ax.set_xlabel("rank (1 = best)")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("full score (run: predicted)")
    fig.suptitle(
        f"{doc.suite_name}: predicted full scores and ranks\n(95 % intervals; hollow: flagged)",
        fontsize=9,
    )
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    try:
        fig.savefig(tmp, dpi=120)
        tmp.replace(path)
    finally:  # a full disk leaves no half-written figure behind
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    return path
