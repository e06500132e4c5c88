"""A suite directory: published versions that are never overwritten, and a lock.

Layout::

    DIR/versions/v0001/manifest.json   (+ report.md, diff.md, frontier.json, exploration.json)
    DIR/versions/v0002/...
    DIR/panels/<content hash>/          the panel each version was checked or built on
    DIR/.lock                           flock held by a running refresh (.lock.owner: its pid)

A version directory is written under a temporary name and renamed into place, so it appears
whole or not at all; a killed refresh leaves every published version intact.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from primebench_tasks.data.folder_lock import FolderLock, FolderLockedError
from primebench_tasks.pipeline.manifest import read_manifest
from primebench_tasks.suite.manifest import SuiteManifest

LockedError = FolderLockedError
"""Another refresh holds the suite directory."""


class SuiteLock(FolderLock):
    """An exclusive lock on the suite directory for the whole refresh (``DIR/.lock``, its
    holder's pid in ``DIR/.lock.owner``; :class:`~primebench_tasks.data.folder_lock.FolderLock`)."""

    def __init__(self, root: Path) -> None:
        super().__init__(
            root,
            name=".lock",
            doing="being refreshed",
            refused="concurrent refreshes of one suite directory are refused (wait for it to "
            "finish)",
        )


def versions(root: Path) -> list[Path]:
    """Published version directories, oldest first (temporary and broken ones are ignored)."""
    vdir = root / "versions"
    if not vdir.is_dir():
        return []
    return sorted(
        p
        for p in vdir.iterdir()
        if p.is_dir()
        and p.name.startswith("v")
        and p.name[1:].isdigit()
        and (p / "manifest.json").exists()
    )


def latest_manifest(root: Path) -> SuiteManifest | None:
    vs = versions(root)
    return read_manifest(vs[-1] / "manifest.json") if vs else None


def publish(root: Path, fill: Callable[[Path], object]) -> Path:
    """Create the next version directory: ``fill(tmp_dir)`` writes its files, then the directory
    is fsynced and renamed to ``versions/vNNNN``."""
    vdir = root / "versions"
    vdir.mkdir(parents=True, exist_ok=True)
    n = len(versions(root)) + 1
    target = vdir / f"v{n:04d}"
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=vdir))
    try:
        fill(tmp)
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        os.rename(tmp, target)
        fd = os.open(vdir, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def clean_temporaries(root: Path) -> None:
    """Remove what killed refreshes left behind (never a published version)."""
    for sub in ("versions", "panels"):
        d = root / sub
        if d.is_dir():
            for p in d.iterdir():
                if p.name.startswith(".tmp-"):
                    shutil.rmtree(p, ignore_errors=True)
