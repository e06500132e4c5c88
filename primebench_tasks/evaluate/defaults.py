"""The validation's defaults, defined once (pure Python: the CLI reads them for ``--help``)."""

RETENTIONS = (0.01, 0.02, 0.05, 0.10, 0.20, 0.50)
"""The retentions ``validate`` sweeps when no ``--budgets`` are given."""
