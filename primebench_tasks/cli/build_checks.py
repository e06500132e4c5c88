"""What ``primebench build`` checks of the suite it is asked for and says of the suite it built:
a name of its own (never a released suite's), and a warning when the suite is weak (#82)."""

from __future__ import annotations

from typing import Any

from primebench_tasks.errors import PrimeBenchError


def own_suite_name(panel_name: str) -> str:
    """A built suite's default name: ``<panel name>_suite`` (never a released suite's)."""
    return f"{panel_name}_suite"


def refuse_released_name(name: str | None) -> None:
    """A ``--name`` that is a released suite's (:data:`~primebench_tasks.suite.manifest.
    RELEASED_SUITE_NAMES`) is refused before any work: its lmms-eval tasks would shadow the
    released suite's under ``--include_path``."""
    from primebench_tasks.suite.manifest import RELEASED_SUITE_NAMES

    if name is not None and name.lower() in RELEASED_SUITE_NAMES:
        raise PrimeBenchError(
            f"--name {name!r} is a released suite's name: its lmms-eval tasks would shadow the "
            f"released {name!r} under --include_path; give a name of your own (default: "
            "<panel name>_suite)"
        )


MIN_PANEL_MODELS = 30
"""The fewest models a panel should hold for a suite whose fidelity and ranks are measured on
it: below, the held-out check (``validate``: 8 held-out models a split) and a placement's rank
among the panel rest on too few models to say much."""


def weak_suite_warnings(fidelity: float, target: float, n_models: int) -> list[str]:
    """What a build says when its suite is weak: its fidelity short of ``target_rho`` (by how
    much), and a panel of fewer than :data:`MIN_PANEL_MODELS` models."""
    out = []
    if fidelity < target:
        out.append(
            f"the suite's ranking fidelity rho = {fidelity:.3f} misses its target {target:.2f} "
            f"by {target - fidelity:.3f}: its ranks of new models will often be wrong; keep more "
            "items (--retention) or add models, and check it with primebench validate"
        )
    if n_models < MIN_PANEL_MODELS:
        from primebench_tasks.evaluate.protocols import MIN_HELDOUT

        out.append(
            f"the panel holds {n_models} models (fewer than {MIN_PANEL_MODELS}): its fidelity "
            "and the ranks it gives new models rest on too few models to trust"
            + (
                f", and primebench validate needs {2 * MIN_HELDOUT} (half held out, at least "
                f"{MIN_HELDOUT})"
                if n_models < 2 * MIN_HELDOUT
                else ""
            )
            + "; add models (primebench panel import, ingest)"
        )
    return out


WEAK_PERCENTILE = 50.0
"""A built suite whose in-sample fidelity sits below this percentile of random suites of the same
size on the same panel is no better than random items there (the refresh loop's threshold)."""


def random_suites_warning(percentile: float, n_random: int) -> str | None:
    """The warning where a built suite ranks its own panel's models no better than random items
    of the same size (``percentile`` of its ρ among ``n_random`` random suites), else None."""
    if percentile >= WEAK_PERCENTILE:
        return None
    return (
        f"the suite ranks its own panel's models no better than random items of the same size "
        f"(its rho sits at percentile {percentile:.0f} of {n_random} random suites, in sample): "
        "its selection adds nothing over a random sample here; check it on held-out models "
        "with primebench validate --selectors stratified,random"
    )


def suite_checks(panel: Any, res: Any, target: float, seed: int) -> list[str]:
    """What a build says of its suite (``res``: the pipeline's result on ``panel``) after the
    manifest: where it stands among random suites of its size on the same panel, then each
    warning (:func:`weak_suite_warnings`, :func:`random_suites_warning`)."""
    from primebench_tasks.refresh.shelf_life import N_RANDOM, check_frozen

    warnings = weak_suite_warnings(res.fidelity, target, len(panel.model_names))
    if not res.selected:
        return [f"warning: {w}" for w in warnings]
    frozen = check_frozen(panel, res.stage0, res.selected, n_random=N_RANDOM, seed=seed)
    said = (
        f"against random items: rho {frozen.rho:.3f} sits at percentile {frozen.percentile:.0f} "
        f"of {N_RANDOM} random suites of the same size (mean rho {frozen.random_mean:.3f}; in "
        "sample — on held-out models: primebench validate)"
    )
    weak = random_suites_warning(frozen.percentile, N_RANDOM)
    return [said, *(f"warning: {w}" for w in [*warnings, *([weak] if weak else [])])]
