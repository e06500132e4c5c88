"""Adaptive testing (its policy and predictors: :mod:`.policy`; one test's procedure and
calibration runs: :mod:`.procedure`; a benchmark's test and stopping rule: :mod:`.benchmark`;
the draws, the design estimate and the guard: :mod:`.design`; the run's draws: :mod:`.ledger`;
:mod:`.replay`; :mod:`.race`; defaults in :mod:`.defaults`). Adaptive evaluation: ask each model the items that tell the most about it, stop when its
predicted full score is known well enough (after Fluid Benchmarking's 2PL + maximum Fisher
information, COLM 2025, and the stopping rule of "Stop Guessing When to Stop Testing", 2026).

Per benchmark, a 2PL (P(correct) = σ(a_i·θ − b_i)) is fitted on the reference models' binarised
responses (:func:`~primebench_tasks.select.irt.fit_2pl_cached`). A model is asked in rounds of
``batch`` items; its MAP ability θ̂ (N(0, 1) prior) is re-estimated from every answer so far. The
policy (:class:`AdaptivePolicy`; the default chosen by leave-one-panel-out in
``research/adaptive/adaptive_choice.py``) says which items a round asks and what the answers predict:

- ``regime`` / ``regime_local`` (the default): while p-IRT's prediction, (Σ answers +
  Σ_{unasked} P_i(θ̂)) / n, places the model inside the reference panel, the locally weighted
  linear-Gaussian model of :mod:`~primebench_tasks.adaptive.local_gaussian` chooses the items
  (those that most reduce the full score's posterior variance) and predicts (its kriging and
  p-IRT, weighted ¾ and ¼ by default); at the top of the panel or beyond it, maximum Fisher
  information a_i²·P_i(θ̂)·(1 − P_i(θ̂)) and the mean of p-IRT and a ridge regression of the
  reference full scores on the asked items (``blend``), because the 2PL extrapolates where
  neighbours cannot — above every reference model p-IRT weighted ``beyond_weight`` (0.6 by
  default; the ridge under-predicts there, p-IRT errs less; chosen in
  ``research/adaptive/adaptive_outside_weight.py``);
- ``fisher`` with ``pirt``/``ridge``/``blend``/``regime_blend``, or ``local`` with ``local`` /
  ``local_blend``: one rule everywhere.

**The guard (#71).** The runner's test does not ask the policy's items outright: each round
draws its items at random (:mod:`.design`), with probability ε/R + (1 − ε)·(Fisher information at
θ̂)/Σ over the R items left (ε = 0.5), and keeps each draw's probability and the 2PL's prediction
of its answer (``draws.json`` beside the records: :mod:`.ledger`). Those draws give a
design-unbiased estimate of the full score — the sequential augmented inverse-probability-
weighted estimate of active inference — whatever the item model's error; the reported score is
the policy's prediction moved toward it as far as they differ by more than k = 0.5 design
standard errors, so its bias is at most k·SE for a model unlike every reference model, and its
interval is the policy's widened by that bound (the design's own interval held where the two
disagree). Chosen in ``research/adaptive/adaptive_guard.py``.

The interval is conformal: the point plus quantiles of the errors that the same procedure made,
at the same number of items, on reference models held out of the 2PL fit (:func:`calibration_runs`;
``folds``-fold over the reference models, and frontier folds) — so it holds the 2PL's misfit,
not only the ability's posterior spread; :meth:`AdaptiveBenchmark.stop_reason` ends a test when
it is narrow enough. :func:`race_variants` compares variants on the same items, drawn with
known probabilities so the comparison is of their full scores.

:func:`replay` is the measurement protocol: held-out models' recorded answers stand in for the
model, so the policy is scored without running one (``benchmarks/adaptive_replay.py``).
"""
