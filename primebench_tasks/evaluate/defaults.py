"""The evaluation layer's defaults, defined once (pure Python: the CLI reads them for ``--help``)."""

DEFAULT_ESTIMATOR = "greg"
"""The estimator of the predicted full score (``evaluate.estimators``): the model-assisted one
(the 2PL's prediction over all items plus the design-weighted residual on the drawn items), with
its design interval on a suite drawn by a probability design (docs/results.md, "Never worse than
a random sample"). Before: ``pirt`` (measured best on the panels with ≥ 100 models for the
chosen suites: docs/results.md, "Placement accuracy")."""

ESTIMATOR_NAMES = ("mean", "weighted", "pirt", "gpirt", "aipw", "greg")
"""The estimators' names (``evaluate.estimators.ESTIMATORS``' keys, checked by a test), for
``--estimator`` choices without importing the estimators."""

N_BOOT = 1000
"""Bootstrap resamples of a placement's intervals (``place``, ``run``)."""

N_BOOT_VARIANTS = 2000
"""Bootstrap resamples of a variant ranking's pairwise P(A beats B) and of the bootstrap ceiling
(App. I.4), and of PRISM's paired scores."""

RETENTIONS = (0.01, 0.02, 0.05, 0.10, 0.20, 0.50)
"""The retentions ``validate`` sweeps when no ``--budgets`` are given."""

FRONTIER_SHARE = 0.15
"""The share of the models, the strongest by full score, that a frontier hold-out holds out —
the user's new model stands above its reference panel: the ``frontier`` validation protocol,
the calibration's frontier folds, the adaptive replay's frontier hold-out."""

ADAPTIVE_BATCH = 5
"""Adaptive evaluation: items per benchmark per round (Fluid Benchmarking asks one at a time; a
round is one engine batch per model, so adaptivity does not cost the engine's batching)."""

ADAPTIVE_LEVEL = 0.90
"""Adaptive evaluation: the level of the predicted full score's interval."""

ADAPTIVE_TARGET_WIDTH = 0.10
"""Adaptive evaluation: a benchmark's test stops when its interval is narrower than this."""

ADAPTIVE_MAX_ITEMS = 100
"""Adaptive evaluation: items per benchmark at most."""

ADAPTIVE_FOLDS = 10
"""Adaptive evaluation: the random folds of the intervals' calibration (each fits the 2PL on
(k − 1)/k of the reference models and replays the rest). With 5 folds each fit had 80 % of the
panel where the deployed test fits on all of it, so the calibration's errors were larger than the
test's and its 90 % intervals covered 93 % of random hold-outs at stop on three of five replay
panels; with 10 folds, 90–92 % (``benchmarks/adaptive_replay.py``). Chosen with the frontier hull
of :meth:`~primebench_tasks.evaluate.adaptive.AdaptiveBenchmark.interval` by leave-one-panel-out
(``research/adaptive/adaptive_interval_choice.py``)."""

ADAPTIVE_NEAREST_SHIFT: int | None = 80
"""Adaptive evaluation: at the top of the panel or beyond it, the calibrated point moves by the
median error of this many calibration rows — of either kind, random or frontier fold — whose
predictions stood nearest in position among their fitting models
(:func:`~primebench_tasks.evaluate.placement.placement_position`); None: by the median error of
the regime's rows (every row at the top, the frontier folds' beyond it), the earlier rule.
Chosen by leave-one-panel-out among the nearest 20, 40 or 80 rows, the earlier rule and two
others (``research/adaptive/adaptive_top_shift.py``)."""

ADAPTIVE_PREDICTORS = (
    "pirt",
    "ridge",
    "blend",
    "regime_blend",
    "local",
    "local_blend",
    "regime_local",
)
"""How an adaptive test predicts the full score from the answers so far
(:func:`primebench_tasks.evaluate.adaptive.predict_adaptive`): ``pirt`` (p-IRT at the ability),
``ridge`` (a ridge regression of the reference models' full scores on their answers to the same
items), ``blend`` (the mean of the two), ``regime_blend`` (the blend where p-IRT places the model
inside the reference panel, p-IRT where it places it at the top or beyond), ``local`` (kriging
under the locally weighted linear-Gaussian model of ``evaluate.local_gaussian``), ``local_blend``
(p-IRT and ``local`` mixed, p-IRT's weight the policy's ``pirt_weight``), ``regime_local``
(``local_blend`` where p-IRT places the model inside the reference panel, ``blend`` at the top or
beyond it)."""

ADAPTIVE_CHOICES = ("fisher", "local", "regime")
"""How an adaptive test chooses the next items: ``fisher`` (the 2PL's Fisher information at the
model's ability, Fluid Benchmarking), ``local`` (the items that most reduce the posterior
variance of the full score under ``evaluate.local_gaussian``'s model) or ``regime`` (``local``
where p-IRT places the model inside the reference panel, ``fisher`` at the top or beyond it)."""

ADAPTIVE_SHIFTS = ("all", "outside")
"""Where an adaptive prediction moves by the median calibration error of its placement regime
(:meth:`primebench_tasks.evaluate.adaptive.AdaptiveBenchmark.estimate`), as the choice procedure
tries: ``all`` (everywhere) or ``outside`` (only at the top of the reference panel or beyond
it, where the frontier folds' shortfall is the predictor's bias; inside it the random folds'
median error is of the size of its own noise)."""

ADAPTIVE_PREDICTOR = "regime_local"
"""The default predictor, chosen with :data:`ADAPTIVE_RIDGE_ALPHA` by
``research/adaptive/adaptive_choice.py`` (leave-one-panel-out over the replay panels; docs/results.md)."""

ADAPTIVE_RIDGE_ALPHA = 30.0
"""The default predictor's ridge penalty — the local model's noise variance α (chosen with it;
10 before α itself was in the choice's grid)."""

ADAPTIVE_CHOICE = "regime"
"""The default item choice (chosen with :data:`ADAPTIVE_PREDICTOR`)."""

ADAPTIVE_BANDWIDTH = 0.5
"""The local model's ability bandwidth h (chosen with :data:`ADAPTIVE_PREDICTOR`)."""

ADAPTIVE_AGREEMENT = 0.15
"""The local model's weight λ per shared answer (chosen with :data:`ADAPTIVE_PREDICTOR`)."""

ADAPTIVE_PIRT_WEIGHT = 0.25
"""p-IRT's weight in the local blend, ``local_blend`` and ``regime_local`` inside the panel
(chosen with :data:`ADAPTIVE_PREDICTOR`)."""

ADAPTIVE_SHIFT = "all"
"""Where the prediction moves by its regime's median calibration error (one of
:data:`ADAPTIVE_SHIFTS`; chosen with :data:`ADAPTIVE_PREDICTOR`)."""

ADAPTIVE_BEYOND_WEIGHT = 0.6
"""p-IRT's weight in ``regime_local``'s point where p-IRT places the model above every
reference model (the ridge regression has the rest; at the top of the panel both have ½). Beyond
the panel the ridge regression under-predicts on every replay panel (it shrinks toward the
panel's mean) and p-IRT errs less, either way (over where the 2PL's logistic tail carries the
ability onto every unasked item); chosen by leave-one-panel-out among ½ and
0.6, 0.75 and 1.0 (``research/adaptive/adaptive_outside_weight.py``; ½ before)."""

MISFIT_LEVEL = 0.02
"""A placement is flagged as not looking like the reference runs when its person-fit p-value
(its lz*'s conformal rank among held-out reference models') is at most this
(:mod:`~primebench_tasks.evaluate.person_fit`); chosen by ``benchmarks/misfit_replay.py``."""

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
models whose missing benchmarks are imputed (``evaluate.suite_imputation``) — never among a
handful."""

IMPUTE_FOLDS = 5
"""Cross-validation folds that measure a benchmark's imputation error."""

IMPUTE_MIN_MODELS = 20
"""A benchmark's scores are imputed for a suite rank only when at least this many reference
models have it (its error is measured on them)."""

IMPUTE_MAX_ERROR_RATIO = 0.8
"""…and when its cross-validated imputation error (MAE) is at most this share of the error of
imputing the benchmark's mean — an imputation no better than the mean says nothing of the model."""
