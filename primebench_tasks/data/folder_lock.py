"""An exclusive lock on a folder for the whole of one job (a suite refresh, an adaptive run).

``filelock.FileLock`` (``fcntl.flock`` on POSIX) on ``FOLDER/<name>``, taken without waiting:
the kernel releases it when its process dies, so a killed job leaves no stale lock to judge (a
resume takes it at once) and there is no instant at which two processes can both believe they
hold it (a pid file could not promise that). The holder's pid is written beside it
(``<name>.owner``) for the message a rival gets. A folder the lock itself made, left holding
nothing but the lock when the job ends (a refused or failed start), is removed with it."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from primebench_tasks.errors import PrimeBenchError


class FolderLockedError(PrimeBenchError):
    """Another process holds the folder's lock."""


class FolderLock:
    """``with FolderLock(folder, name=..., doing=..., refused=...):`` — the folder is created if
    missing; a rival gets :class:`FolderLockedError`: "<folder> is <doing> (process <pid>);
    <refused>". With ``reentrant``, a ``with`` nested in the holder's own thread (a command
    holding its run folder calls a function that takes the same lock) is a no-op — the outer one
    holds it; without, it is refused like any rival (another thread or process)."""

    _held: dict[tuple[str, int], int] = {}  # (lock path, thread) → nesting depth

    def __init__(
        self, folder: Path, *, name: str, doing: str, refused: str, reentrant: bool = False
    ) -> None:
        from filelock import FileLock

        self.reentrant = reentrant
        self.path = folder / name
        self.owner = folder / f"{name}.owner"
        self.doing, self.refused = doing, refused
        self._lock = FileLock(str(self.path), timeout=0)

    def _key(self) -> tuple[str, int]:
        import threading

        return str(self.path.resolve()), threading.get_ident()

    def __enter__(self) -> FolderLock:
        from filelock import Timeout

        key = self._key()
        if self.reentrant and FolderLock._held.get(key):
            FolderLock._held[key] += 1
            self._nested = True
            return self
        self._made = not self.path.parent.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            try:
                who = f"process {int(self.owner.read_text().strip())}"
            except (OSError, ValueError):
                who = "another process"
            raise FolderLockedError(
                f"{self.path.parent} is {self.doing} ({who}); {self.refused}"
            ) from None
        try:
            self.owner.write_text(str(os.getpid()))
        except OSError:  # a full or read-only disk: give the lock back, leave no owner file
            self.owner.unlink(missing_ok=True)
            self._lock.release()
            raise
        if self.reentrant:
            FolderLock._held[key] = 1
        self._nested = False
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.reentrant:
            key = self._key()
            FolderLock._held[key] -= 1
            if self._nested:
                return
            del FolderLock._held[key]
        self.owner.unlink(missing_ok=True)
        self._lock.release()
        if self._made:  # a folder this lock made and nothing else wrote to: leave no trace
            try:
                if [p.name for p in self.path.parent.iterdir()] == [self.path.name]:
                    self.path.unlink()
                    self.path.parent.rmdir()
            except OSError:
                pass
