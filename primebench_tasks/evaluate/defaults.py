"""The evaluation layer's defaults, defined once (pure Python: the CLI reads them for ``--help``)."""

DEFAULT_ESTIMATOR = "pirt"
"""The estimator of the predicted full score (``evaluate.estimators``): measured best on the
panels with ≥ 100 models (docs/results.md, "Placement accuracy")."""

ESTIMATOR_NAMES = ("mean", "weighted", "pirt", "gpirt", "aipw")
"""The estimators' names (``evaluate.estimators.ESTIMATORS``' keys, checked by a test), for
``--estimator`` choices without importing the estimators."""

RETENTIONS = (0.01, 0.02, 0.05, 0.10, 0.20, 0.50)
"""The retentions ``validate`` sweeps when no ``--budgets`` are given."""
