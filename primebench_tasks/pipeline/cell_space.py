"""Which embedding space the Stage 2 cells use (a leaf module: the parameters and the stages both
read it, and it reads neither)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from primebench_tasks.errors import NotFoundError

if TYPE_CHECKING:
    from primebench_tasks.data.panel import Panel


def resolve_cell_space(panel: Panel, cell_space: str) -> str | None:
    """``"auto"`` → ``vl`` if the panel has vision-text embeddings, else ``text``, else None
    (no cells); an explicit space must exist."""
    if cell_space == "auto":
        for s in ("vl", "text"):
            if s in panel.embedding_spaces:
                return s
        return None
    if cell_space == "none":
        return None
    if cell_space not in panel.embedding_spaces:
        raise NotFoundError(
            f"panel {panel.name!r} has no {cell_space!r} embeddings (has {panel.embedding_spaces})"
        )
    return cell_space
