"""What stops a run: the engine or harness behind it cannot run at all."""

from __future__ import annotations

from primebench_tasks.errors import PrimeBenchError


class BackendError(PrimeBenchError, RuntimeError):
    """The backend cannot run at all (bad model, bad adapter, server down)."""
