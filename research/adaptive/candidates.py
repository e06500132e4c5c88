"""The candidate values the adaptive investigation compared (the library keeps only the chosen
ones, in ``primebench_tasks/adaptive/defaults.py``; the choice, its table and the command that
reproduces it are in docs/results.md)."""

from __future__ import annotations

ADAPTIVE_NEAREST_SHIFTS = (20, 40, 80)
"""Adaptive evaluation: the numbers of calibration rows compared for the point's move at the top
of the panel or beyond it (``research/adaptive/adaptive_top_shift.py``)."""


ADAPTIVE_BANDWIDTHS = (0.5, 1.0)
"""The ability bandwidths h of the local model that the choice procedure tries."""


ADAPTIVE_AGREEMENTS = (0.0, 0.15)
"""The answer-agreement weights λ of the local model that the choice procedure tries."""


ADAPTIVE_PIRT_WEIGHTS = (0.5, 0.25)
"""p-IRT's weights in the local blend (the rest the local model's kriging) that the choice
procedure tries."""


ADAPTIVE_RIDGE_ALPHAS = (3.0, 10.0, 30.0, 100.0)
"""The ridge penalties / local noise variances α the choice procedure tries (on 0/1 answers,
centred): 10 for every candidate, the others with the local model at h = 0.5, λ = 0.15, w = ¼."""


ADAPTIVE_BEYOND_WEIGHTS = (0.6, 0.75, 1.0)
"""p-IRT's weights beyond the panel that ``research/adaptive/adaptive_outside_weight.py`` tries (with
the same weights at the top and beyond, ½ — the blend — and two weights fitted on the
calibration)."""
