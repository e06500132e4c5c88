"""Selector names for the CLI and the fidelity protocols: name → factory(k, random_state, ctx)."""

from __future__ import annotations

from primebench_tasks.errors import ConfigError
from primebench_tasks.select.arms import ARMS, Factory, SelectorContext  # noqa: F401 (re-exported)
from primebench_tasks.select.cross_validated import CrossValidatedSelector

SELECTORS: dict[str, Factory] = {
    "vaw_dc": ARMS["vaw_dc"],
    "cross_validated": lambda k, rs, c: CrossValidatedSelector(k, random_state=rs),
    **{name: f for name, f in ARMS.items() if name != "vaw_dc"},
}
"""Every selector by name (the CLI's and the protocols' table): the fixed arms and the
cross-validated choice among them."""


NEEDS_EMBEDDINGS = frozenset({"vaw", "vaw_random_cells", "vaw_alpha0", "vaw_dpp", "fps", "kcenter"})
"""Arms that differ from another arm only through embeddings (``vaw`` without embeddings is
``vaw_shares_only``), or that cannot run without them."""

WEIGHTED = frozenset({"irt", "anchor_points"})
"""Selectors whose ``weights_`` are not uniform: they also get the weighted-mean estimator."""


EQUAL_ON_BINARY = {"disco": "variance"}
"""Arms that select exactly what another arm selects when every score is 0 or 1: DISCO needs
class probabilities; on correctness alone its disagreement ranks items as the variance does."""


def resolve(
    names: str | list[str], has_embeddings: bool, binary: bool = False
) -> tuple[list[str], list[str]]:
    """``"all"`` or a comma list → (runnable names, skipped names). ``"all"`` on a binary panel
    leaves out the arms of :data:`EQUAL_ON_BINARY` (a duplicate of another arm there)."""
    wanted = (
        list(SELECTORS)
        if names == "all"
        else (names.split(",") if isinstance(names, str) else list(names))
    )
    if names == "all" and binary:
        wanted = [n for n in wanted if n not in EQUAL_ON_BINARY]
    unknown = [n for n in wanted if n not in SELECTORS]
    if unknown:
        raise ConfigError(f"unknown selector(s) {unknown}; known: {', '.join(SELECTORS)}")
    if has_embeddings:
        return wanted, []
    return [n for n in wanted if n not in NEEDS_EMBEDDINGS], [
        n for n in wanted if n in NEEDS_EMBEDDINGS
    ]
