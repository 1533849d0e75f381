"""The session lock (`M/.session.lock`): one flock per lock file per process, with a thread
RLock in front so threads of one process queue on it and a forked child holds none of them.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import filelock

from core.errors import LockTimeoutError, StoreError

_LOCK_POLL_SECONDS = 0.002


class ProcessLock:
    """One per lock file per process: a thread RLock in front of a flock.

    Threads of one process queue on the RLock (re-entrant for the owner); only the owning
    thread at depth 0 touches the file lock, so filelock's own thread semantics never matter.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rlock = threading.RLock()
        self._depth = 0
        self._owner: int | None = None
        self._file = filelock.FileLock(
            str(path), thread_local=False, poll_interval=_LOCK_POLL_SECONDS
        )

    def held_by_me(self) -> bool:
        return self._owner == threading.get_ident()

    def acquire(self, timeout: float, *, blocking: bool = True) -> bool:
        start = time.monotonic()
        if not self._rlock.acquire(blocking, timeout if blocking else -1):
            if not blocking:
                return False
            raise LockTimeoutError(
                f"could not lock {self.path} within {timeout} s: "
                "another thread of this process holds it"
            )
        try:
            if self._depth == 0:
                remaining = max(0.0, timeout - (time.monotonic() - start)) if blocking else 0.0
                try:
                    self._file.acquire(timeout=remaining)
                except filelock.Timeout:
                    if not blocking:
                        self._rlock.release()
                        return False
                    raise LockTimeoutError(
                        f"could not lock {self.path} within {timeout} s: another process holds it"
                    ) from None
                except OSError as exc:
                    raise StoreError(f"cannot lock {self.path}: {exc.strerror or exc}") from exc
                self._owner = threading.get_ident()
            self._depth += 1
        except BaseException:
            self._rlock.release()
            raise
        return True

    def release(self) -> None:
        self._depth -= 1
        try:
            if self._depth == 0:
                self._owner = None
                self._file.release()
        finally:
            self._rlock.release()


_LOCKS: dict[str, ProcessLock] = {}
_LOCKS_GUARD = threading.Lock()


def process_lock(path: Path) -> ProcessLock:
    """The one lock object of this process for the lock file at `path` (by real path), so
    two stores of one session in one process share it instead of deadlocking on the flock."""
    key = os.path.realpath(path)
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = ProcessLock(path)
        return lock


def _forget_locks_in_child() -> None:
    """A forked child holds none of its parent's locks."""
    global _LOCKS_GUARD
    _LOCKS.clear()
    _LOCKS_GUARD = threading.Lock()


os.register_at_fork(after_in_child=_forget_locks_in_child)


__all__ = ["ProcessLock", "process_lock"]
