"""The harness protocol: what an evaluation harness plugs into PRIMEBench, discovered by entry
point (group ``primebench.harnesses``; the library never imports a harness).

A harness is one folder of ``harness_adapters`` (or of any installed package) and one entry point
naming an object that satisfies :class:`Harness`:

- ``name``, ``summary``: how users name it (``primebench place --harness NAME``) and one line on it;
- ``detect(output)``: whether ``output`` (a folder the harness wrote) holds a run of a PRIMEBench
  suite made with this harness — ``primebench place`` picks the harness by it;
- ``read_run(output, model)``: the run's item scores as records (``model, benchmark, item_id,
  score``; score in [0, 1], as the suite's benchmarks score an item) and the suite version the run
  was made with; :func:`harness_adapters.run.report.write_placement` does the rest for every
  harness, so placement has one code path;
- ``add_commands(tree)``: its ``primebench`` sub-commands (export of a suite into the harness's
  task format, runs, ingest) through :class:`primebench_tasks.cli.plugin.CommandTree`;
- ``prism_export(prism, out, axes)`` / ``prism_ingest(output, prism, run, model)``: PRISM's
  single-turn axes as the harness's tasks, and its answers back into PRISM run records (``None``
  when the harness cannot run them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from primebench_tasks.errors import InputError, PrimeBenchError

if TYPE_CHECKING:
    import pandas as pd

HARNESS_GROUP = "primebench.harnesses"
RECORD_COLUMNS = ("model", "benchmark", "item_id", "score")


@dataclass(frozen=True)
class HarnessRun:
    """A harness run of one suite: ``records`` (at least the columns :data:`RECORD_COLUMNS`, one
    row per model and item), the ``suite_version`` the run's tasks were made from, and the
    ``conditions`` it was made under as the harness recorded them (harness and version, model
    backend, decoding, prompt task, ...: JSON values, shown in the placement report beside the
    reference runs'), and whether it asked through lmms-eval's task code."""

    records: pd.DataFrame
    suite_version: str
    conditions: Mapping[str, Any] = field(default_factory=dict)
    lmms_eval_tasks: bool = False
    """The run asked its items through lmms-eval's task code: a suite benchmark with no lmms-eval
    task (``no_lmms_eval_task`` in the manifest) is missing with its reason, not an error."""


@runtime_checkable
class Harness(Protocol):
    """See the module docstring."""

    name: str
    summary: str

    def detect(self, output: Path) -> bool: ...

    def read_run(self, output: Path, model: str | None = None) -> HarnessRun: ...

    def add_commands(self, tree: Any) -> None: ...

    prism_export: Callable[[Path, Path, Sequence[str] | None], Mapping[str, Path]] | None
    prism_ingest: Callable[[Path, Path, Path, str], int] | None


def harnesses(entry_points: Sequence[Any] | None = None) -> dict[str, Harness]:
    """Every installed harness by name (``entry_points``: the ones to load instead of the
    installed group, for tests). An object that is not a :class:`Harness`, or two harnesses of one
    name, are errors naming the entry point."""
    if entry_points is None:
        from importlib.metadata import entry_points as installed

        # one entry point seen twice (an editable install's metadata beside the checkout's) once
        unique = {(e.name, e.value): e for e in installed(group=HARNESS_GROUP)}
        entry_points = [unique[k] for k in sorted(unique)]
    out: dict[str, Harness] = {}
    for ep in entry_points:
        obj = ep.load()
        if not isinstance(obj, Harness):
            raise PrimeBenchError(
                f"entry point {ep.name} = {ep.value} (group {HARNESS_GROUP}) is not a harness: "
                "it needs name, summary, detect, read_run, add_commands, prism_export and "
                "prism_ingest (primebench_tasks.suite.harness)"
            )
        if obj.name in out:
            raise PrimeBenchError(f"two harnesses are named {obj.name!r} (entry point {ep.value})")
        out[obj.name] = obj
    return out


def harness_for(
    output: str | Path, name: str | None = None, available: Mapping[str, Harness] | None = None
) -> Harness:
    """The harness named ``name``, or the one harness that recognises ``output``."""
    found = harnesses() if available is None else dict(available)
    if name is not None:
        if name not in found:
            raise InputError(f"no harness {name!r}; installed: {sorted(found)}", field="--harness")
        return found[name]
    path = Path(output)
    if not path.exists():
        raise InputError("no such folder", file=str(path))
    hits = [h for h in found.values() if h.detect(path)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise InputError(
            f"{[h.name for h in hits]} all recognise this folder as a run of a PRIMEBench "
            f"suite; name the harness with --harness (installed: {sorted(found)})",
            file=str(path),
        )
    raise InputError(not_a_run_because(path, sorted(found)), file=str(path))


def not_a_run_because(path: Path, installed: list[str]) -> str:
    """Why no harness recognises ``path``, in the words that help: an empty folder (the harness
    wrote nothing: a run that stopped before its end), a ``primebench run`` folder (already
    placed by the run), else the harnesses installed and ``--harness``."""
    files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else []
    if path.is_dir() and not files:
        return (
            "the folder holds no files: the harness wrote no output there (lmms-eval writes its "
            "results and samples only when a run finishes — see the run's own log for why it "
            "stopped, then run it again)"
        )
    if (path / "run_spec.json").exists() and (path / "records.jsonl").exists():
        return (
            "this is a `primebench run` folder, placed by the run itself (report.md, "
            "report.json); `primebench run ... --out` on it again resumes and places it anew"
        )
    return (
        "no installed harness recognises this folder as a finished run of a PRIMEBench suite "
        f"(installed: {installed}); if the run finished, name its harness with --harness"
    )


def check_records(run: HarnessRun, harness: str) -> HarnessRun:
    """``run``, refused unless its records have the columns :data:`RECORD_COLUMNS` (others, e.g.
    ``condition``, may follow; the scores themselves are checked where every harness's records
    are placed: :func:`harness_adapters.run.report.score_frame`)."""
    cols = list(run.records.columns)
    if not set(RECORD_COLUMNS) <= set(cols):
        raise PrimeBenchError(
            f"harness {harness!r} returned records with columns {cols}; expected "
            f"{list(RECORD_COLUMNS)}"
        )
    return run
