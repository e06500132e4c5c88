"""The evaluation layer's defaults, defined once (pure Python: the CLI reads them for ``--help``)."""

DEFAULT_ESTIMATOR = "pirt"
"""The estimator of the predicted full score (``evaluate.estimators``): measured best on the
panels with ≥ 100 models (docs/results.md, "Placement accuracy")."""

ESTIMATOR_NAMES = ("mean", "weighted", "pirt", "gpirt", "aipw")
"""The estimators' names (``evaluate.estimators.ESTIMATORS``' keys, checked by a test), for
``--estimator`` choices without importing the estimators."""

N_BOOT = 1000
"""Bootstrap resamples of a placement's intervals (``place``, ``run``)."""

N_BOOT_VARIANTS = 2000
"""Bootstrap resamples of a variant ranking's pairwise P(A beats B) and of the bootstrap ceiling
(App. I.4), and of PRISM's paired scores."""

RETENTIONS = (0.01, 0.02, 0.05, 0.10, 0.20, 0.50)
"""The retentions ``validate`` sweeps when no ``--budgets`` are given."""

ADAPTIVE_BATCH = 5
"""Adaptive evaluation: items per benchmark per round (Fluid Benchmarking asks one at a time; a
round is one engine batch per model, so adaptivity does not cost the engine's batching)."""

ADAPTIVE_LEVEL = 0.90
"""Adaptive evaluation: the level of the predicted full score's interval."""

ADAPTIVE_TARGET_WIDTH = 0.10
"""Adaptive evaluation: a benchmark's test stops when its interval is narrower than this."""

ADAPTIVE_MAX_ITEMS = 100
"""Adaptive evaluation: items per benchmark at most."""
