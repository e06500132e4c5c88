"""The adaptive replay protocol on any panel (``primebench validate --protocol adaptive``; #29):
how well the adaptive test would place a panel's models, against the static default suite of
the same size, measured before a model is run.

Per benchmark of the panel, held-out models' recorded answers stand in for the model
(:func:`~primebench_tasks.adaptive.replay.replay`, the policy and stopping rule the runner
uses); the other models are the reference panel that fits the 2PL and calibrates the interval.
Hold-outs (:func:`hold_out`): ``random`` — 20 % of the models, one seeded draw per split — and
``frontier`` — the strongest 15 %, a new model's usual place (above the whole reference panel).
At every item count the predicted full score is compared with the held-out model's true full
score (its mean over every item it answered) and with the static default suite's prediction
from the same number of items (:func:`static_prediction`: the default selector's items on the
reference models and the default estimator fitted there). ``benchmarks/adaptive_replay.py`` is
this protocol on the replay panels, with the figures the README quotes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.adaptive.defaults import ADAPTIVE_LEVEL, ADAPTIVE_TARGET_WIDTH
from primebench_tasks.adaptive.policy import AdaptivePolicy
from primebench_tasks.adaptive.replay import replay
from primebench_tasks.data.io import atomic_write_text, canonical_json
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError
from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR, FRONTIER_SHARE
from primebench_tasks.place.estimators import make_estimator
from primebench_tasks.progress import progress_bar
from primebench_tasks.report.plots import adaptive_plot
from primebench_tasks.report.tables import markdown_table
from primebench_tasks.select.default import DEFAULT_SELECTOR
from primebench_tasks.select.registry import SELECTORS, SelectorContext

SCHEMA = "primebench.adaptive_validation/1"
"""The schema of ``spec.json`` beside the outputs."""

RANDOM_SHARE = 0.2
"""The share of the models a random hold-out holds out."""
MIN_HELD = 3
"""Every hold-out holds out at least this many models."""
MIN_MODELS = 20
"""A benchmark with fewer models (with an answer) is not replayed: its reference panel, less
the held-out models and the calibration's folds, would be too small to fit a 2PL."""
CHECKPOINTS = (25, 50, 100)
"""The default item counts per benchmark at which the replay is scored."""
PROTOCOLS = ("random", "frontier")


def hold_out(X: np.ndarray, protocol: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(held-out, build) model positions of the responses ``X`` (M, n): ``random``
    :data:`RANDOM_SHARE` of the models (seeded by ``seed``), ``frontier`` the strongest
    :data:`FRONTIER_SHARE` by full score (ties → the lower position), at least :data:`MIN_HELD`
    either way. A model with no answer has no full score to predict: where a hold-out draws it,
    it is left out of the held-out models (and of the build models: the other models' splits
    stay as drawn)."""
    M = len(X)
    if protocol == "random":
        n_held = max(MIN_HELD, round(RANDOM_SHARE * M))
        held = np.sort(np.random.default_rng(seed).choice(M, n_held, replace=False))
    elif protocol == "frontier":
        with warnings.catch_warnings():  # a model with no answer: NaN, sorted last
            warnings.simplefilter("ignore", RuntimeWarning)
            full = np.nanmean(X, axis=1)
        n_held = max(MIN_HELD, round(FRONTIER_SHARE * M))
        held = np.sort(np.lexsort((np.arange(M), -full))[:n_held])
    else:
        raise ConfigError(f"hold-out protocol must be one of {PROTOCOLS}, not {protocol!r}")
    answered = np.isfinite(X).any(axis=1)
    return held[answered[held]], np.setdiff1d(np.arange(M), held)


def static_prediction(X_build: np.ndarray, X_held: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The static default suite's full-score predictions (V,) for the held-out models ``X_held``
    (V, n): the default selector's ``k`` items on the build models ``X_build`` (M, n) (seed
    ``seed``) and the default estimator fitted there — the baseline every adaptive ratio is
    taken against."""
    sel = SELECTORS[DEFAULT_SELECTOR](k, seed, SelectorContext()).fit(X_build)
    est = make_estimator(DEFAULT_ESTIMATOR).fit(X_build, sel.indices_)
    return np.asarray(est.predict(X_held[:, sel.indices_]), float)


def replay_hold_out(
    X: np.ndarray,
    protocol: str,
    seed: int,
    checkpoints: Sequence[int] = CHECKPOINTS,
    target_width: float = ADAPTIVE_TARGET_WIDTH,
    policy: AdaptivePolicy | None = None,
    cache_dir: str | Path | None = None,
) -> pd.DataFrame:
    """One hold-out of one benchmark's responses ``X`` (M, n) replayed: one row per held-out
    model and item count (``checkpoints``, each at most n) — ``model`` (its position in ``X``),
    ``items``, ``true`` (its full score), the adaptive ``predicted`` score with its
    :data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_LEVEL` interval ``lo``/``hi``, the static
    default suite's ``static``, and where the stopping rule (interval narrower than
    ``target_width``, or max(checkpoints) items) ended the test: ``stop_items``,
    ``stop_predicted``, ``stop_lo``, ``stop_hi``. ``cache_dir``: where the interval's calibration
    is kept, so that a rerun does not replay it again."""
    counts = sorted({min(int(k), X.shape[1]) for k in checkpoints})
    held, build = hold_out(X, protocol, seed)
    r = replay(
        X[build],
        X[held],
        counts,
        seed=seed,
        target_width=target_width,
        policy=policy,
        cache_dir=cache_dir,
        design="item_model",  # the runner's --adaptive test (the sequential design: #89)
    )
    rows = []
    for j, k in enumerate(counts):
        static = static_prediction(X[build], X[held], k, seed)
        for v, m in enumerate(held):
            rows.append(
                {
                    "model": int(m),
                    "items": k,
                    "true": r["true"][v],
                    "predicted": r["predicted"][v, j],
                    "lo": r["lo"][v, j],
                    "hi": r["hi"][v, j],
                    "static": static[v],
                    "stop_items": r["stop_items"][v],
                    "stop_predicted": r["stop_predicted"][v],
                    "stop_lo": r["stop_lo"][v],
                    "stop_hi": r["stop_hi"][v],
                }
            )
    return pd.DataFrame(rows)


def summarise_adaptive(models: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark, hold-out protocol and item count, from :func:`validate_adaptive`'s
    per-model rows: ``tests`` (held-out models, over every split), the adaptive and the static
    full-score MAE and their ``ratio``, how often the adaptive interval covered the true score
    (``cover``) and its mean ``width``; at stop, the mean ``stop_items``, the ``stop_mae`` and
    ``stop_cover``."""
    d = models.assign(
        adaptive_err=(models.predicted - models.true).abs(),
        static_err=(models.static - models.true).abs(),
        covered=(models.lo <= models.true) & (models.true <= models.hi),
        width=models.hi - models.lo,
        stop_err=(models.stop_predicted - models.true).abs(),
        stop_covered=(models.stop_lo <= models.true) & (models.true <= models.stop_hi),
    )
    g = d.groupby(["benchmark", "protocol", "items"], sort=False)
    out = g.agg(
        tests=("true", "size"),
        adaptive_mae=("adaptive_err", "mean"),
        static_mae=("static_err", "mean"),
        cover=("covered", "mean"),
        width=("width", "mean"),
        stop_items=("stop_items", "mean"),
        stop_mae=("stop_err", "mean"),
        stop_cover=("stop_covered", "mean"),
    ).reset_index()
    out.insert(6, "ratio", out.adaptive_mae / out.static_mae)
    return out


def validate_adaptive(
    panel: Panel,
    out: Path,
    *,
    n_splits: int = 10,
    seed: int = 0,
    checkpoints: Sequence[int] = CHECKPOINTS,
    target_width: float = ADAPTIVE_TARGET_WIDTH,
    policy: AdaptivePolicy | None = None,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """The adaptive replay protocol on every benchmark of ``panel`` with at least
    :data:`MIN_MODELS` answering models: ``n_splits`` random hold-outs (seeds ``seed``,
    ``seed`` + 1, …) and the frontier hold-out (seed ``seed``), scored at ``checkpoints`` items.
    Writes into ``out``: ``models.csv`` (:func:`replay_hold_out`'s rows with ``benchmark``,
    ``protocol``, ``split`` and the model's name), ``summary.csv``
    (:func:`summarise_adaptive`), ``table.md``, ``mae_vs_items.png`` (the adaptive and the static
    MAE against the items asked, per benchmark) and ``spec.json`` (what was run: panel, hold-outs,
    counts, target width, policy, library version) — last: it is the commit point, removed
    before the other files are replaced, so where it is, the files beside it are complete and of
    the run it describes. The calibrations are kept in
    ``out/calibration``: a rerun after a kill replays no finished calibration again. Returns the
    summary."""
    from primebench_tasks import __version__

    if n_splits < 1:
        raise ConfigError(f"--splits must be ≥ 1 for the adaptive protocol, not {n_splits}")
    counts = sorted({int(k) for k in checkpoints})
    if not counts or counts[0] < 1:
        raise ConfigError(f"item counts must be ≥ 1, not {list(checkpoints)}")
    policy = AdaptivePolicy() if policy is None else policy
    say = progress or (lambda _msg: None)
    matrices = {b: panel.matrix(b) for b in panel.benchmark_names}
    answering = {b: int(np.isfinite(X).any(axis=1).sum()) for b, X in matrices.items()}
    benchmarks = [b for b in matrices if answering[b] >= MIN_MODELS]
    skipped = {b: m for b, m in answering.items() if m < MIN_MODELS}
    for b, m in skipped.items():
        say(f"{b}: {m} models with an answer, fewer than {MIN_MODELS}: not replayed")
    if not benchmarks:
        raise ConfigError(
            f"no benchmark of {panel.name!r} has {MIN_MODELS} models with an answer; the "
            "adaptive replay needs a reference panel to hold models out of"
        )
    hold_outs = [*(("random", seed + s) for s in range(n_splits)), ("frontier", seed)]
    out.mkdir(parents=True, exist_ok=True)
    frames = []
    with progress_bar(len(benchmarks) * len(hold_outs), "adaptive replay", "hold-out") as bar:
        for b in benchmarks:
            X = matrices[b]
            for protocol, s in hold_outs:
                rows = replay_hold_out(
                    X, protocol, s, counts, target_width, policy, out / "calibration"
                )
                rows.insert(0, "benchmark", b)
                rows.insert(1, "protocol", protocol)
                rows.insert(2, "split", s)
                rows.insert(3, "model_name", [panel.model_names[m] for m in rows.model])
                frames.append(rows.drop(columns="model"))
                bar.update(1)
    models = pd.concat(frames, ignore_index=True)
    summary = summarise_adaptive(models)
    spec = {
        "schema": SCHEMA,
        "library": __version__,
        "panel": panel.name,
        "models": len(panel.model_names),
        "benchmarks": benchmarks,
        "skipped": skipped,
        "random_splits": n_splits,
        "seed": seed,
        "random_share": RANDOM_SHARE,
        "frontier_share": FRONTIER_SHARE,
        "items": counts,
        "target_width": target_width,
        "level": ADAPTIVE_LEVEL,
        "policy": asdict(policy),
        "static": {"selector": DEFAULT_SELECTOR, "estimator": DEFAULT_ESTIMATOR},
    }
    # spec.json is the commit point: removed before the other files are replaced, written last —
    # where it is, the files beside it are complete and of the run it describes
    (out / "spec.json").unlink(missing_ok=True)
    atomic_write_text(out / "models.csv", models.to_csv(index=False, float_format="%.6f"))
    atomic_write_text(out / "summary.csv", summary.to_csv(index=False, float_format="%.6f"))
    atomic_write_text(out / "table.md", adaptive_table(summary, spec))
    adaptive_plot(
        summary, out / "mae_vs_items.png", f"{panel.name}: adaptive test against the static suite"
    )
    atomic_write_text(out / "spec.json", canonical_json(spec))
    return summary


def adaptive_table(summary: pd.DataFrame, spec: dict) -> str:
    """``table.md``: what was replayed, and :func:`summarise_adaptive`'s table (three decimals,
    shares in percent)."""
    show = summary.copy()
    for c in ("adaptive_mae", "static_mae", "ratio", "width", "stop_mae"):
        show[c] = show[c].round(3)
    for c in ("cover", "stop_cover"):
        show[c] = [f"{100 * x:.0f} %" for x in show[c]]
    show["stop_items"] = show["stop_items"].round(1)
    skipped = ", ".join(f"{b} ({m} models)" for b, m in spec["skipped"].items()) or "none"
    lines = [
        f"# Adaptive replay on `{spec['panel']}`",
        "",
        f"{spec['models']} models; {spec['random_splits']} random hold-outs of "
        f"{100 * spec['random_share']:.0f} % of the models (seeds {spec['seed']} on) and the "
        f"frontier hold-out (the strongest {100 * spec['frontier_share']:.0f} %). Held-out "
        "models' recorded answers stand in for the model; `ratio` is the adaptive full-score MAE "
        f"over the static default suite's (`{spec['static']['selector']}` + "
        f"`{spec['static']['estimator']}`) at the same number of items; `cover` how often the "
        f"{100 * spec['level']:.0f} % interval held the true full score. The test stops when the "
        f"interval is narrower than {spec['target_width']:g}, or at {max(spec['items'])} items "
        f"(`stop_*`). Not replayed (fewer than {MIN_MODELS} models with an answer): {skipped}.",
        "",
        markdown_table(show),
    ]
    return "\n".join(lines) + "\n"
