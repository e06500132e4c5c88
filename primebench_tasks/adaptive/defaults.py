"""The adaptive test's defaults, defined once (pure Python: the CLI reads them for ``--help``)."""

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
of :meth:`~primebench_tasks.adaptive.benchmark.AdaptiveBenchmark.interval` by leave-one-panel-out
(``research/adaptive/adaptive_interval_choice.py``)."""

ADAPTIVE_NEAREST_SHIFT: int | None = 80
"""Adaptive evaluation: at the top of the panel or beyond it, the calibrated point moves by the
median error of this many calibration rows — of either kind, random or frontier fold — whose
predictions stood nearest in position among their fitting models
(:func:`~primebench_tasks.place.benchmark.placement_position`); None: by the median error of
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
(:func:`primebench_tasks.adaptive.policy.predict_adaptive`): ``pirt`` (p-IRT at the ability),
``ridge`` (a ridge regression of the reference models' full scores on their answers to the same
items), ``blend`` (the mean of the two), ``regime_blend`` (the blend where p-IRT places the model
inside the reference panel, p-IRT where it places it at the top or beyond), ``local`` (kriging
under the locally weighted linear-Gaussian model of ``adaptive.local_gaussian``), ``local_blend``
(p-IRT and ``local`` mixed, p-IRT's weight the policy's ``pirt_weight``), ``regime_local``
(``local_blend`` where p-IRT places the model inside the reference panel, ``blend`` at the top or
beyond it)."""

ADAPTIVE_CHOICES = ("fisher", "local", "regime")
"""How an adaptive test chooses the next items: ``fisher`` (the 2PL's Fisher information at the
model's ability, Fluid Benchmarking), ``local`` (the items that most reduce the posterior
variance of the full score under ``adaptive.local_gaussian``'s model) or ``regime`` (``local``
where p-IRT places the model inside the reference panel, ``fisher`` at the top or beyond it)."""

ADAPTIVE_SHIFTS = ("all", "outside")
"""Where an adaptive prediction moves by the median calibration error of its placement regime
(:meth:`primebench_tasks.adaptive.benchmark.AdaptiveBenchmark.estimate`), as the choice procedure
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

ADAPTIVE_UNIFORM_SHARE = 0.5
"""Adaptive evaluation: the share ε of each draw's probability spread uniformly over the
remaining items (the rest follows the 2PL's Fisher information at the ability so far;
:func:`primebench_tasks.adaptive.design.draw_probabilities`). Every remaining item keeps a
probability ≥ ε/R, which bounds the design estimate's weights. Chosen with
:data:`ADAPTIVE_GUARD_K` by ``research/adaptive/adaptive_guard.py``."""

ADAPTIVE_GUARD_K = 0.5
"""Adaptive evaluation: the reported score stays within this many design standard errors of the
design-unbiased estimate (:func:`primebench_tasks.adaptive.design.guard`), which bounds its bias by
k·SE whatever the item model's. Chosen with :data:`ADAPTIVE_UNIFORM_SHARE` by
``research/adaptive/adaptive_guard.py``."""
