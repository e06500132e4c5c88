"""Upstream lmms-eval tasks: find a task's YAML among the installed lmms-eval's tasks (and any
extra folders), and read its configuration with ``include:`` resolved and ``!function`` tags kept
as references (nothing is imported; lmms-eval itself is not imported either).

A generated suite task ``include:`` s the upstream YAML, so lmms-eval uses its dataset, prompt,
filters and generation settings; the suite's own ``process_docs`` / ``process_results`` call the
upstream functions through :func:`load_function` and keep exactly the manifest's items.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from primebench_tasks.errors import InputError

_TASK_LINE = re.compile(r"^task:\s*['\"]?([^'\"\s#]+)", re.M)


@dataclass(frozen=True)
class FunctionRef:
    """``!function module.name`` in the YAML at ``directory``."""

    ref: str
    directory: str


def lmms_eval_tasks_dir() -> Path | None:
    """The installed lmms-eval's ``tasks`` folder (found without importing lmms-eval)."""
    spec = importlib.util.find_spec("lmms_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "tasks"


def find_task_yaml(task: str, extra: Iterable[str | Path] = ()) -> Path:
    """The YAML that defines ``task:`` ``task`` in ``extra`` folders, then lmms-eval's tasks."""
    roots = [Path(p) for p in extra]
    installed = lmms_eval_tasks_dir()
    if installed is not None:
        roots.append(installed)
    for root in roots:
        for path in sorted(root.rglob("*.yaml")):
            try:
                text = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if task in _TASK_LINE.findall(text):
                return path
    where = ", ".join(map(str, roots)) or "nowhere (lmms-eval is not installed)"
    raise InputError(f"upstream lmms-eval task {task!r} is not installed (searched {where}); "
                     "install lmms-eval (pip install 'primebench[lmms]') or pass its folder "
                     "with --upstream-path")


def load_task_config(path: str | Path) -> dict[str, Any]:
    """The task's configuration, ``include:`` resolved as lmms-eval does (later keys win),
    ``!function`` values as :class:`FunctionRef`."""
    import yaml

    path = Path(path)

    class Loader(yaml.SafeLoader):
        pass

    def function(loader: yaml.SafeLoader, node: yaml.Node) -> FunctionRef:
        return FunctionRef(str(loader.construct_scalar(node)), str(path.parent))  # type: ignore[arg-type]

    Loader.add_constructor("!function", function)
    with open(path, "rb") as fh:
        cfg = yaml.load(fh, Loader=Loader) or {}  # noqa: S506 - SafeLoader subclass
    includes = cfg.pop("include", None)
    if includes is None:
        return cfg
    merged: dict[str, Any] = {}
    for inc in [includes] if isinstance(includes, str) else list(includes):
        p = Path(inc)
        merged.update(load_task_config(p if p.is_file() else path.parent / inc))
    merged.update(cfg)
    return merged


def load_function(ref: FunctionRef | tuple[str, str]) -> Callable[..., Any]:
    """Import ``module.name`` from ``module.py`` in the YAML's folder (lmms-eval's rule), else as
    a normal import."""
    r = ref if isinstance(ref, FunctionRef) else FunctionRef(*ref)
    module, _, name = r.ref.rpartition(".")
    local = Path(r.directory) / f"{module.replace('.', '/')}.py"
    if local.exists():
        key = f"_primebench_upstream_{abs(hash(str(local)))}"
        mod = sys.modules.get(key)
        if mod is None:
            spec = importlib.util.spec_from_file_location(key, local)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            sys.modules[key] = mod
            spec.loader.exec_module(mod)
    else:
        mod = importlib.import_module(module)
    return getattr(mod, name)
