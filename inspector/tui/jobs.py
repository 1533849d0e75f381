"""Jobs: per-job coalescing of the app's background reloads ("events", "status", "plan").

A request while the job's worker runs marks it dirty, and the worker runs once more when it
finishes, never two at the same time: a burst of file changes costs one read after the one
running, not one read each.
"""

from __future__ import annotations

import threading


class Jobs:
    """Per-job coalescing: at most one worker per job, plus one rerun when asked meanwhile."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[str] = set()
        self._dirty: set[str] = set()

    def claim(self, name: str) -> bool:
        """True: the caller should start a worker; False: one runs and will run again."""
        with self._lock:
            if name in self._running:
                self._dirty.add(name)
                return False
            self._running.add(name)
            return True

    def again(self, name: str) -> bool:
        """Called by the worker when done: True means run once more."""
        with self._lock:
            if name in self._dirty:
                self._dirty.discard(name)
                return True
            self._running.discard(name)
            return False

    def busy(self) -> bool:
        with self._lock:
            return bool(self._running)


__all__ = ["Jobs"]
