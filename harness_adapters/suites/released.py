"""The released suites shipped with this package: where they are, a suite by name or file, and
the manifest of a run's suite version (the released ones, then every earlier released version, kept
in ``suites/previous/`` so old runs can still be placed). Harness-neutral: every harness and
runner looks suites up here."""

from __future__ import annotations

from pathlib import Path

from primebench_tasks.errors import InputError
from primebench_tasks.suite.manifest import SuiteManifest


def task_configs_path() -> Path:
    """``task_configs/`` (shipped in the wheel as ``harness_adapters/task_configs``, a symlink in
    the checkout): the released suites and their lmms-eval task folders."""
    return Path(__file__).resolve().parents[1] / "task_configs"


def suites_path() -> Path:
    """The directory of the released suite manifests (``task_configs/suites``)."""
    return task_configs_path() / "suites"


def resolve_suite(spec: str | Path) -> SuiteManifest:
    """A suite manifest: a JSON file, or a released suite by name (``primebench``, ...)."""
    path = Path(spec)
    if path.suffix == ".json" or path.exists():
        return SuiteManifest.read(path)
    released = {}
    for p in sorted(suites_path().glob("*.json")):
        m = SuiteManifest.read(p)
        released[m.name] = m
    if str(spec) not in released:
        import difflib

        near = difflib.get_close_matches(str(spec), list(released), n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise InputError(
            f"no manifest file and no released suite named {str(spec)!r} (released: "
            f"{sorted(released)}){hint}",
            field="--suite",
        )
    return released[str(spec)]


def find_manifest(version: str, suite: str | Path | None = None) -> SuiteManifest:
    """``suite`` — a manifest file or a released suite's name — checked against ``version``,
    else the released suite of that version."""
    if suite is not None:
        m = resolve_suite(suite)
        if m.version != version:
            raise InputError(
                f"the run was made with suite {version}, this manifest is {m.version}",
                file=str(suite),
                field="version",
            )
        return m
    # the released suites, then the earlier released versions (kept readable for old runs)
    for path in [
        *sorted(suites_path().glob("*.json")),
        *sorted(suites_path().glob("previous/*.json")),
    ]:
        m = SuiteManifest.read(path)
        if m.version == version:
            return m
    raise InputError(
        f"suite {version} is not a released suite of this primebench; pass its "
        "manifest with --suite"
    )
