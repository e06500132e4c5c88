"""The evaluation layer's defaults, defined once (pure Python: the CLI reads them for ``--help``)."""

DEFAULT_ESTIMATOR = "aipw"
"""The estimator of the predicted full score (``evaluate.estimators``): measured best on the
panels with ≥ 100 models (README, "Placement accuracy")."""
