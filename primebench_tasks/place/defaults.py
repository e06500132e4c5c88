"""The placement's defaults, defined once (pure Python: the CLI reads them for ``--help``)."""

DEFAULT_ESTIMATOR = "greg"
"""The estimator of the predicted full score (``place.estimators``): the model-assisted one
(the 2PL's prediction over all items plus the design-weighted residual on the drawn items), with
its design interval on a suite drawn by a probability design (docs/results.md, "Never worse than
a random sample"). Before: ``pirt`` (measured best on the panels with ≥ 100 models for the
chosen suites: docs/results.md, "Placement accuracy")."""

ESTIMATOR_NAMES = ("mean", "weighted", "pirt", "gpirt", "aipw", "greg")
"""The estimators' names (``place.estimators.ESTIMATORS``' keys, checked by a test), for
``--estimator`` choices without importing the estimators."""

N_BOOT = 1000
"""Bootstrap resamples of a placement's intervals (``place``, ``run``)."""

MIN_N_BOOT = 20
"""Fewest bootstrap resamples a command accepts (``--n-boot``; ``cli.options.LOWER_BOUNDS``, a
test checks they agree): a 95 % percentile interval from fewer is one or two resamples'
extremes, not an interval."""

N_BOOT_VARIANTS = 2000
"""Bootstrap resamples of a variant ranking's pairwise P(A beats B) and of the bootstrap ceiling
(App. I.4), and of PRISM's paired scores."""

FRONTIER_SHARE = 0.15
"""The share of the models, the strongest by full score, that a frontier hold-out holds out —
the user's new model stands above its reference panel: the ``frontier`` validation protocol,
the calibration's frontier folds, the adaptive replay's frontier hold-out."""

MISFIT_LEVEL = 0.02
"""A placement is flagged as not looking like the reference runs when its person-fit p-value
(its lz*'s conformal rank among held-out reference models') is at most this
(:mod:`~primebench_tasks.place.misfit`); chosen by ``benchmarks/misfit_replay.py``."""

MISFIT_FOLDS = 5
"""Folds of reference models for the held-out lz* values the misfit check is calibrated on."""

MISFIT_MIN_ITEMS = 10
"""Fewer answered items on a benchmark: no misfit verdict there (too few to tell)."""

MIN_SCORED_ITEMS = 10
"""A benchmark with fewer scored items than this (or than half its suite items, where the suite
holds fewer than 20) gets no score, no predicted full score and no rank, as one with none: a
bootstrap over one or a few items gives an interval of (almost) zero width, and at 10
right/wrong items the mean's standard error is still up to 0.16 — fewer is noise dressed as a
result. ``place`` refuses such a run unless ``--allow-partial``."""


def min_scored_items(n_items: int) -> int:
    """The fewest scored items a benchmark of ``n_items`` suite items is placed on:
    :data:`MIN_SCORED_ITEMS`, or half the suite items (rounded up, at least 1) where that is
    fewer."""
    return max(1, min(MIN_SCORED_ITEMS, -(-n_items // 2)))


MISFIT_MIN_DIRECTED = 10
"""Fewer answered items with a covariate (the gold's position, the question's length): no
directed residual of the misfit check for it."""

MIN_COMPLETE_REFERENCE = 30
"""A suite's rank is taken among the reference models that have every benchmark of it when at
least this many do (or when all of them do: a one-panel suite); with fewer, among reference
models whose missing benchmarks are imputed (``place.imputation``) — never among a
handful."""

IMPUTE_FOLDS = 5
"""Cross-validation folds that measure a benchmark's imputation error."""

IMPUTE_MIN_MODELS = 20
"""A benchmark's scores are imputed for a suite rank only when at least this many reference
models have it (its error is measured on them)."""

IMPUTE_MAX_ERROR_RATIO = 0.8
"""…and when its cross-validated imputation error (MAE) is at most this share of the error of
imputing the benchmark's mean — an imputation no better than the mean says nothing of the model."""

MIN_RANK_MODELS = 20
"""Fewer reference models on a benchmark: its report says the rank there rests on few models
(a rank among 13 says little, whatever its interval; #79's newcomer placed a dummy at rank 9
[1, 14] of 14 with no word)."""
