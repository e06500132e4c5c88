"""PNG plots for people (matplotlib, Agg backend, imported when a plot is drawn)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.io import atomic_write


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    # fixed metadata keeps the PNG bytes reproducible
    atomic_write(path, lambda p: fig.savefig(p, format="png", dpi=110, metadata={"Software": None}))
    _figure().close(fig)
    return path


def spectrum_plot(sv: np.ndarray, energy: np.ndarray, path: Path, k: int | None = None) -> Path:
    """Fig. 2 analogue: singular values (left) and cumulative energy (right)."""
    plt = _figure()
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4))
    idx = np.arange(1, len(sv) + 1)
    a.bar(idx, sv, color="#4472c4")
    a.set_xticks(idx)
    b.set_xticks(idx)
    a.set_xlabel("component")
    a.set_ylabel("singular value")
    a.set_title("Spectrum of the z-scored model × category matrix")
    b.plot(idx, 100 * energy, marker="o", color="#c0504d")
    b.axhline(95, ls="--", color="grey", lw=0.8, label="95 % of the energy")
    if k is not None and k <= len(energy):
        b.axvline(k, ls=":", color="black", lw=0.8)
        b.annotate(
            f"top-{k}: {100 * energy[k - 1]:.1f}%",
            (k, 100 * energy[k - 1]),
            textcoords="offset points",
            xytext=(6, -14),
        )
    b.set_xlabel("components")
    b.set_ylabel("cumulative energy (%)")
    b.set_title("Cumulative energy" + (f" (k = {k} chosen)" if k is not None else ""))
    b.set_ylim(0, 102)
    b.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def sweep_plot(sweep: pd.DataFrame, path: Path, k: int | None = None) -> Path:
    """Table 15 analogue as a plot: Stage 3 and end-to-end ρ against k (the chosen k marked)."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    ax.plot(sweep["k"], sweep["stage3_rho"], marker="o", label="Stage 3 ρ (vs all pruned)")
    ax.plot(
        sweep["k"], sweep["end_to_end_rho"], marker="s", label="end-to-end ρ (vs Stage 0-cleaned)"
    )
    if k is not None:
        ax.axvline(k, ls=":", color="black", lw=0.8, label=f"chosen k = {k}")
    ax.set_xticks(sorted(set(int(v) for v in sweep["k"])))
    ax.set_xlabel("k (categories kept)")
    ax.set_ylabel("Spearman ρ")
    ax.set_title("Stage 3: fidelity against the number of categories kept", fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def ranking_plot(reference: pd.Series, suite: pd.Series, path: Path, title: str) -> Path:
    """Models' suite score against their reference score, with ρ in the title."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.scatter(reference.to_numpy(), suite.reindex(reference.index).to_numpy(), s=12)
    ax.set_xlabel("reference score (all cleaned benchmarks)")
    ax.set_ylabel("compact suite score")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def retention_plot(
    summary: pd.DataFrame, path: Path, title: str, default: str = "", top: int = 5
) -> Path:
    """Mean ρ against retention (%, the retentions as ticks) for the default selector and the
    ``top`` others with the best mean, each with a ±1 SE band (Fig. 3a analogue)."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    by = summary.groupby("selector", sort=False)["mean_rho"].mean().sort_values(ascending=False)
    names = [default] if default in by.index else []
    names += [n for n in by.index if n != default][: max(0, top - len(names))]
    rets = sorted(summary["retention"].dropna().unique())
    for i, name in enumerate(names):
        g = summary[summary["selector"] == name].sort_values("retention")
        x = 100 * g["retention"].to_numpy()
        y = g["mean_rho"].to_numpy()
        se = (g["se_rho"] if "se_rho" in g else g["sd_rho"]).fillna(0).to_numpy()
        lw = 2.2 if name == default else 1.0
        ax.plot(
            x,
            y,
            marker="o",
            ms=3,
            lw=lw,
            zorder=3 if name == default else 2,
            color=f"C{i}",
            label=f"{name} (default)" if name == default else str(name),
        )
        ax.fill_between(x, y - se, y + se, alpha=0.12, color=f"C{i}")
    ax.set_xscale("log")
    ax.set_xticks([100 * r for r in rets], [f"{100 * r:g}%" for r in rets])
    ax.minorticks_off()
    ax.set_xlabel("retention (share of each category pool kept)")
    ax.set_ylabel("mean Spearman ρ on held-out models (±1 SE)")
    ax.set_title(
        title + f" — default and top {len(names) - (1 if default in names else 0)} others",
        fontsize=9,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return _save(fig, path)


def budget_plot(
    summary: pd.DataFrame,
    path: Path,
    value: str,
    label: str,
    title: str,
    default: tuple[str, str],
    top: int = 5,
) -> Path:
    """``value`` (``mean_mae`` or ``mean_rho``) against the items kept (the mean over splits of
    each item-count budget), one line per selector with the default pair's estimator — the
    default selector bold and the ``top`` − 1 others with the best mean — each with a ±1 SE
    band where the summary has one (ρ)."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    rows = summary[(summary["estimator"] == default[1]) & summary["retention"].isna()]
    better = rows.groupby("selector", sort=False)[value].mean()
    better = better.sort_values(ascending=value != "mean_rho")
    names = [default[0]] if default[0] in better.index else []
    names += [n for n in better.index if n != default[0]][: max(0, top - len(names))]
    for i, name in enumerate(names):
        g = rows[rows["selector"] == name].sort_values("n_items")
        x, y = g["n_items"].to_numpy(float), g[value].to_numpy(float)
        bold = name == default[0]
        ax.plot(x, y, marker="o", ms=3, lw=2.2 if bold else 1.0, color=f"C{i}",
                label=f"{name} (default)" if bold else str(name))  # fmt: skip
        if value == "mean_rho":
            se = g["se_rho"].fillna(0).to_numpy(float)
            ax.fill_between(x, y - se, y + se, alpha=0.12, color=f"C{i}")
    ax.set_xscale("log")
    ticks = sorted({round(float(v)) for v in rows["n_items"].dropna()})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("items kept (mean over splits)")
    ax.set_ylabel(label)
    ax.set_title(f"{title} — estimator {default[1]}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, path)


def variants_plot(
    table: pd.DataFrame, pairwise: pd.DataFrame, ceiling: float, path: Path, verdict: str = ""
) -> Path:
    """Left: variants' suite scores with 95 % intervals, headed by the ``verdict`` (what decides;
    the bootstrap ceiling below it); right: P(row beats column)."""
    import textwrap

    plt = _figure()
    n = len(table)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 0.45 * n + 2))
    y = np.arange(n)[::-1]
    a.errorbar(
        table.suite_score,
        y,
        xerr=[table.suite_score - table.lo, table.hi - table.suite_score],
        fmt="o",
        capsize=3,
    )
    a.set_yticks(y, [str(v) for v in table.index], fontsize=8)
    a.set_xlabel("suite score (95 % bootstrap interval)")
    head = textwrap.fill(verdict, 60) + "\n" if verdict else ""
    a.set_title(f"{head}(bootstrap ceiling ρ = {ceiling:.3f}, for reference)", fontsize=8)
    a.grid(alpha=0.3)
    im = b.imshow(pairwise.to_numpy(), vmin=0, vmax=1, cmap="RdBu_r")
    b.set_xticks(range(n), [str(v) for v in pairwise.columns], rotation=60, ha="right", fontsize=7)
    b.set_yticks(range(n), [str(v) for v in pairwise.index], fontsize=7)
    b.set_title("P(row beats column)", fontsize=9)
    fig.colorbar(im, ax=b, fraction=0.046)
    fig.tight_layout()
    return _save(fig, path)


def prism_axes_plot(means: pd.DataFrame, pscore: pd.Series, path: Path) -> Path:
    """Per model (rows, best PScore first) a bar per PRISM axis and the PScore bar."""
    plt = _figure()
    order = pscore.sort_values(ascending=False, kind="stable").index
    axes = list(means.columns)
    n = len(order)
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * n + 2), 4))
    width = 0.8 / (len(axes) + 1)
    x = np.arange(n)
    for k, a in enumerate(axes):
        ax.bar(x + k * width, means.loc[order, a], width, label=a)
    ax.bar(x + len(axes) * width, pscore[order], width, label="PScore", color="black")
    ax.set_xticks(x + 0.4 - width / 2, [str(m) for m in order], rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("per-axis mean")
    ax.legend(ncol=4, fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def separation_plot(pairs: pd.DataFrame, models: list[str], path: Path) -> Path:
    """Pairwise paired-bootstrap p-values (BH-separated pairs outlined)."""
    plt = _figure()
    n = len(models)
    P = np.full((n, n), np.nan)
    pos = {m: k for k, m in enumerate(models)}
    for r in pairs.itertuples(index=False):
        i, j = pos[r.model_a], pos[r.model_b]
        P[i, j] = P[j, i] = r.p
    fig, ax = plt.subplots(figsize=(0.5 * n + 3, 0.5 * n + 2.5))
    im = ax.imshow(P, vmin=0, vmax=1, cmap="viridis_r")
    for r in pairs.itertuples(index=False):
        if r.separated_bh:
            for i, j in ((pos[r.model_a], pos[r.model_b]), (pos[r.model_b], pos[r.model_a])):
                ax.add_patch(
                    plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=1.5, color="red")
                )
    ax.set_xticks(range(n), models, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(n), models, fontsize=7)
    ax.set_title("paired-bootstrap p (red: separated after BH)", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    return _save(fig, path)


def adaptive_plot(summary: pd.DataFrame, path: Path, title: str) -> Path:
    """The adaptive replay (``validate --protocol adaptive``): per benchmark, the full-score MAE
    of the adaptive test (solid) and of the static default suite (dotted) against the items asked,
    for the random and the frontier hold-outs — ``summary`` as
    :func:`~primebench_tasks.evaluate.adaptive_validation.summarise_adaptive` returns it."""
    plt = _figure()
    benchmarks = list(dict.fromkeys(summary["benchmark"]))
    cols = min(4, len(benchmarks))
    rows = -(-len(benchmarks) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.7 * rows + 0.5), squeeze=False)
    colors = {"random": "#4472c4", "frontier": "#c0504d"}
    for ax, b in zip(axes.flat, benchmarks, strict=False):
        for protocol, color in colors.items():
            d = summary[(summary["benchmark"] == b) & (summary["protocol"] == protocol)]
            d = d.sort_values("items")
            if d.empty:
                continue
            ax.plot(d["items"], d["adaptive_mae"], marker="o", color=color, label=protocol)
            ax.plot(d["items"], d["static_mae"], marker="s", ls=":", color=color)
        ax.set_title(b, fontsize=9)
        ax.set_xlabel("items asked")
        ax.set_ylabel("full-score MAE")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(benchmarks) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, title="solid: adaptive, dotted: static", title_fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return _save(fig, path)
