"""The default Stage 2 selector, defined once (pipeline, CLI, fidelity protocols and reports read
it from here)."""

ALPHA = 0.187
"""VAW's vision-dependence weight α = 0.05·√14 (paper default, not tuned on held-out splits)."""

DEFAULT_SELECTOR = "cross_validated"
"""Cross-validation on the build models between ``vaw_dc`` (preferred) and three other arms
(:mod:`primebench_tasks.select.cross_validated`; README, "Which selector")."""
