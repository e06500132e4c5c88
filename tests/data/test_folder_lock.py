"""The folder lock: one holder at a time, the holder's pid in a rival's message, released on
exit and by the kernel when its holder is killed (no stale lock)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from primebench_tasks.data.folder_lock import FolderLock, FolderLockedError

HOLD = """
import sys, time
from pathlib import Path
from primebench_tasks.data.folder_lock import FolderLock
with FolderLock(Path(sys.argv[1]), name="job.lock", doing="busy", refused="wait"):
    print("held", flush=True)
    time.sleep(600)
"""


def _lock(folder, reentrant=False):
    return FolderLock(
        folder, name="job.lock", doing="busy", refused="wait for it", reentrant=reentrant
    )


def test_a_rival_is_refused_with_the_holders_pid_and_the_lock_is_released_on_exit(tmp_path):
    folder = tmp_path / "new" / "run"  # created if missing
    with (
        _lock(folder),
        pytest.raises(
            FolderLockedError, match=rf"^{folder} is busy \(process {os.getpid()}\); wait"
        ),
        _lock(folder),
    ):
        pass
    assert not (folder / "job.lock.owner").exists()
    with _lock(folder):  # released on exit
        assert (folder / "job.lock.owner").read_text() == str(os.getpid())


def test_a_reentrant_lock_nests_in_its_thread_and_refuses_another_thread(tmp_path):
    """``reentrant`` (the run folder's lock): the holder's own nested ``with`` (a command holding
    its run folder calling a function that takes the lock) is a no-op that does not release it;
    a rival thread of the same process is refused (as another process is, below)."""
    import threading

    folder = tmp_path / "new" / "run"  # created if missing
    refused: list[BaseException] = []

    def rival() -> None:
        try:
            with _lock(folder, reentrant=True):
                pass
        except FolderLockedError as exc:
            refused.append(exc)

    with _lock(folder, reentrant=True):
        with _lock(folder, reentrant=True):  # nested in the holder's thread
            pass
        assert (folder / "job.lock.owner").read_text() == str(os.getpid())  # still held
        t = threading.Thread(target=rival)
        t.start()
        t.join()
    assert len(refused) == 1
    assert str(refused[0]).startswith(f"{folder} is busy (process {os.getpid()}); wait")
    assert not (folder / "job.lock.owner").exists()
    with _lock(folder, reentrant=True):  # released on exit
        assert (folder / "job.lock.owner").read_text() == str(os.getpid())


def test_a_killed_holder_leaves_no_lock(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(FolderLockedError, match=rf"\(process {holder.pid}\); wait"),
            _lock(tmp_path),
        ):
            pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
    with _lock(tmp_path):  # the kernel released it; the dead holder's pid file is overwritten
        assert (tmp_path / "job.lock.owner").read_text() == str(os.getpid())
