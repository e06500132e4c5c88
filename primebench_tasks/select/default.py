"""The default Stage 2 selector, defined once (pipeline, CLI, fidelity protocols and reports read
it from here)."""

ALPHA = 0.187
"""VAW's vision-dependence weight α = 0.05·√14 (paper default, not tuned on held-out splits)."""

DEFAULT_SELECTOR = "stratified"
"""A probability design (:mod:`primebench_tasks.select.stratified`): items drawn at random within
strata of difficulty, each with a known inclusion probability, so that the model-assisted
estimator (``place.estimators.GREG``) is unbiased for any model and its design interval holds
beyond the reference panel. Chosen by ``research/placement/design_comparison.py`` (docs/results.md,
"Never worse than a random sample"): the one pair never worse than random items in any cell
whose 90 % interval covers 85–95 % in every hold-out; at 100 items per benchmark its error equals
the better of random + mean and random + p-IRT. Before: ``cross_validated`` (cross-validation
between ``vaw_dc`` and three other arms, :mod:`primebench_tasks.select.cross_validated`), whose
predicted score was worse than random items' in 11 of 12 cells."""

TOP_SHARE = 0.0
"""Share of each benchmark's Stage 2 budget reserved for the items that separate the strongest
build models (:mod:`primebench_tasks.select.headroom`; 0 = none). The probability design
reserves none: chosen items have no inclusion probability, and the design's ranking of held-out
models is measured no worse than random items' (``research/placement/design_comparison.py``).
Before: 0.25 with ``TOP_FRACTION`` 0.10 for ``cross_validated`` (docs/results.md, "Headroom")."""
TOP_FRACTION = 0.10
"""The strongest share of the build models (at least 8) whose responses rank the reserved items."""

RETENTION = 0.05
"""Stage 2: share of each category pool kept (the pipeline's default, defined here because the
selectors' budget rule needs it below the pipeline)."""

FLOOR = 100
"""Stage 2: minimum items per category pool (K = max(⌊r·n⌋, min(n, FLOOR)))."""
