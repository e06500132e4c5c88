"""Upstream lmms-eval tasks: which ones a benchmark of the panels maps onto (with a verified row
key), where their YAML is, their configuration with ``include:`` resolved, and their functions.

Nothing here imports lmms-eval: YAML files are found through ``importlib.util.find_spec``, and
``!function`` tags are kept as :class:`FunctionRef`. A generated suite task is a *flattened*
copy of the upstream configuration whose functions are referenced portably: upstream functions of
the installed lmms-eval by their module path (``lmms_eval.tasks.mmmu.utils.fn``, which
lmms-eval imports when no file lies beside the YAML), others by a path relative to the generated
folder. No absolute path of the machine that generated the task is written.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from primebench_tasks.data.cards import LmmsEvalEntry, benchmark_cards
from primebench_tasks.errors import InputError

_TASK_LINE = re.compile(r"^task:\s*['\"]?([^'\"\s#]+)", re.M)
_GROUP_LINE = re.compile(r"^group:\s*['\"]?([^'\"\s#]+)", re.M)


@dataclass(frozen=True)
class FunctionRef:
    """``!function module.name`` in the YAML at ``directory``."""

    ref: str
    directory: str


UpstreamBenchmark = LmmsEvalEntry
"""How a benchmark maps onto an upstream lmms-eval task, with a checked row key (a benchmark
card's ``[lmms_eval]`` table). ``task``: the catalogue's ``lmms_eval_task`` (a task or a group).
``key``: the dataset field that holds the panel's item ids. ``scorer``: the name of the item scorer
(:mod:`harness_adapters.lmms_eval_upstream.item_scorers`) that turns the upstream per-item value into a
score in [0, 1]. ``variant``: for a group of alternative variants, the member task used.
``subtask_pattern``: for a group of disjoint subtasks, a regex whose first group, applied to an
item id, gives the member's ``dataset_name``. ``evidence``: how the key was checked."""


VERIFIED_UPSTREAM: dict[str, UpstreamBenchmark] = {
    c.lmms_eval.task: c.lmms_eval for c in benchmark_cards() if c.lmms_eval is not None
}
"""Catalogue ``lmms_eval_task`` → its verified mapping: the ``[lmms_eval]`` tables of the
benchmark cards (``primebench_tasks/data/cards/``). AI2D (no id in lmms-eval's rows) and the
AutoJudger MMMU (VLMEvalKit row indexes) are not here: they need a mapping built by content."""


@dataclass(frozen=True)
class UpstreamMember:
    """One upstream task that a generated task wraps: its name, YAML, and (for subtasks) the
    ``dataset_name`` whose items it runs."""

    task: str
    path: Path
    dataset_name: str | None = None


def lmms_eval_tasks_dir() -> Path | None:
    """The installed lmms-eval's ``tasks`` folder (found without importing lmms-eval)."""
    spec = importlib.util.find_spec("lmms_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "tasks"


def _roots(extra: Iterable[str | Path]) -> list[Path]:
    roots = [Path(p) for p in extra]
    installed = lmms_eval_tasks_dir()
    if installed is not None:
        roots.append(installed)
    return roots


def _find(name: str, pattern: re.Pattern[str], extra: Iterable[str | Path], what: str) -> Path:
    roots = _roots(extra)
    for root in roots:
        for path in sorted(root.rglob("*.yaml")):
            try:
                text = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if name in pattern.findall(text):
                return path
    where = ", ".join(map(str, roots)) or "nowhere (lmms-eval is not installed)"
    raise InputError(
        f"upstream lmms-eval {what} {name!r} is not installed (searched {where}); "
        "install lmms-eval (pip install -e '.[lmms]' in the PRIMEBench checkout) or pass its folder "
        "with --upstream-path"
    )


def find_task_yaml(task: str, extra: Iterable[str | Path] = ()) -> Path:
    """The YAML that defines ``task:`` ``task`` in ``extra`` folders, then lmms-eval's tasks."""
    return _find(task, _TASK_LINE, extra, "task")


def find_group_yaml(group: str, extra: Iterable[str | Path] = ()) -> Path:
    """The YAML that defines ``group:`` ``group``."""
    return _find(group, _GROUP_LINE, extra, "group")


def load_task_config(path: str | Path) -> dict[str, Any]:
    """The task's configuration, ``include:`` resolved as lmms-eval does (later keys win),
    ``!function`` values as :class:`FunctionRef`."""
    import yaml

    path = Path(path)

    class Loader(yaml.SafeLoader):
        pass

    def function(loader: yaml.SafeLoader, node: yaml.Node) -> FunctionRef:
        return FunctionRef(str(loader.construct_scalar(node)), str(path.parent))

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


def resolve_members(
    up: UpstreamBenchmark, item_ids: list[str], extra: Iterable[str | Path] = ()
) -> dict[UpstreamMember, list[str]]:
    """The upstream task(s) that run ``item_ids``: the task itself, the group's chosen variant,
    or, for a group of subtasks, each subtask with its items (an item whose subtask has no
    upstream task is an error)."""
    extra = list(extra)
    if up.subtask_pattern is None:
        task = up.variant or up.task
        return {UpstreamMember(task, find_task_yaml(task, extra)): list(item_ids)}
    group = find_group_yaml(up.task, extra)
    by_name: dict[str, UpstreamMember] = {}
    for path in sorted(group.parent.glob("*.yaml")):
        cfg = load_task_config(path)
        if isinstance(cfg.get("task"), str) and cfg.get("dataset_name"):
            by_name[str(cfg["dataset_name"])] = UpstreamMember(
                cfg["task"], path, str(cfg["dataset_name"])
            )
    out: dict[UpstreamMember, list[str]] = {}
    pattern = re.compile(up.subtask_pattern)
    for i in item_ids:
        m = pattern.match(i)
        if m is None or m.group(1) not in by_name:
            raise InputError(
                f"item {i!r}: no subtask of upstream group {up.task!r} "
                f"({group}) runs it (subtasks: {sorted(by_name)})",
                field="item_id",
            )
        out.setdefault(by_name[m.group(1)], []).append(i)
    return out


def portable_ref(ref: FunctionRef) -> str | None:
    """``lmms_eval.tasks.<folder>.<module>.<name>`` for a function of the installed lmms-eval's
    tasks (importable wherever lmms-eval is installed); None for a function elsewhere."""
    installed = lmms_eval_tasks_dir()
    if installed is None:
        return None
    try:
        rel = Path(ref.directory).resolve().relative_to(installed.resolve())
    except ValueError:
        return None
    parts = [p for p in rel.parts if p]
    if not all(re.fullmatch(r"[A-Za-z_]\w*", p) for p in parts):
        return None
    return ".".join(["lmms_eval", "tasks", *parts, ref.ref])


def relative_ref(ref: FunctionRef, base: Path) -> tuple[str, str]:
    """(``module.name``, the folder relative to ``base``) of a function outside lmms-eval."""
    return ref.ref, os.path.relpath(Path(ref.directory).resolve(), base.resolve())


def upstream_function(
    ref: str, folder: str | None = None, base: str | Path | None = None
) -> Callable[..., Any]:
    """Resolve an upstream function at run time: ``module.name`` from ``module.py`` in
    ``folder`` (relative to ``base``, e.g. the generated task folder), else ``ref`` as a full
    module path (``lmms_eval.tasks.mmmu.utils.mmmu_process_results``)."""
    module, _, name = ref.rpartition(".")
    if folder is not None:
        local = (
            (Path(base) if base is not None else Path()) / folder / f"{module.replace('.', '/')}.py"
        )
        key = f"_primebench_upstream_{abs(hash(str(local.resolve())))}"
        mod = sys.modules.get(key)
        if mod is None:
            spec = importlib.util.spec_from_file_location(key, local)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load upstream module {local}")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[key] = mod
            spec.loader.exec_module(mod)
    else:
        mod = importlib.import_module(module)
    return getattr(mod, name)
