"""A suite directory: published versions that are never overwritten, and a lock.

Layout::

    DIR/versions/v0001/manifest.json   (+ report.md, diff.md, frontier.json, exploration.json)
    DIR/versions/v0002/...
    DIR/panels/<content hash>/          the panel each version was checked or built on
    DIR/.lock                           held by a running refresh (pid inside)

A version directory is written under a temporary name and renamed into place, so it appears
whole or not at all; a killed refresh leaves every published version intact.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from primebench_tasks.errors import PrimeBenchError
from primebench_tasks.pipeline.manifest import read_manifest


class LockedError(PrimeBenchError):
    """Another refresh holds the suite directory."""


class SuiteLock:
    """An exclusive lock file (O_CREAT | O_EXCL). A lock whose process is gone is taken over."""

    def __init__(self, root: Path) -> None:
        self.path = root / ".lock"

    def __enter__(self) -> SuiteLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                try:
                    pid = int(self.path.read_text().strip() or "0")
                except (OSError, ValueError):
                    pid = 0
                if pid and _alive(pid):
                    raise LockedError(
                        f"{self.path.parent} is being refreshed by process {pid}; concurrent "
                        "refreshes of one suite directory are refused (wait for it, or remove "
                        f"{self.path} if that process is not a refresh)") from None
                self.path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(str(os.getpid()))
            return self
        raise LockedError(f"could not take {self.path}")

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno == errno.EPERM
    return True


def versions(root: Path) -> list[Path]:
    """Published version directories, oldest first (temporary and broken ones are ignored)."""
    vdir = root / "versions"
    if not vdir.is_dir():
        return []
    return sorted(p for p in vdir.iterdir()
                  if p.is_dir() and p.name.startswith("v") and p.name[1:].isdigit()
                  and (p / "manifest.json").exists())


def latest_manifest(root: Path) -> dict | None:
    vs = versions(root)
    return read_manifest(vs[-1] / "manifest.json") if vs else None


def publish(root: Path, fill: Callable[[Path], None]) -> Path:
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
