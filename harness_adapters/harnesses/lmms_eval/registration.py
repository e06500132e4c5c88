"""Plain ``lmms-eval --tasks primebench`` after ``pip install -e '.[lmms]'`` (from the checkout).

lmms-eval 0.7.3 has no entry point for tasks; its only group is ``lmms_eval.models``, whose
callables run when ``lmms_eval.models`` is imported, before the CLI builds its TaskManager. This
callable registers no model; it extends ``TaskManager.initialize_tasks`` so that the released
suites' directory is searched too. Relies on private behaviour: tested against lmms-eval 0.7.3.
"""

from __future__ import annotations

from typing import Any

SUPPORTED_LMMS_EVAL = ("0.7.3",)


def register() -> list[Any]:
    from lmms_eval import tasks as lmms_tasks

    from harness_adapters.harnesses.lmms_eval import task_path

    manager = lmms_tasks.TaskManager
    original = manager.initialize_tasks
    if getattr(original, "_primebench", False):
        return []

    def initialize_tasks(self: Any, include_path: Any = None, include_defaults: bool = True) -> Any:
        paths = (
            []
            if include_path is None
            else ([include_path] if isinstance(include_path, str) else list(include_path))
        )
        extra = str(task_path())
        if extra not in paths:
            paths.append(extra)
        return original(self, include_path=paths, include_defaults=include_defaults)

    initialize_tasks._primebench = True  # type: ignore[attr-defined]
    manager.initialize_tasks = initialize_tasks
    return []
