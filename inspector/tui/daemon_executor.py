"""The TUI's thread workers on daemon threads that quitting never waits for.

Textual runs `@work(thread=True)` workers through the event loop's default executor, and
`asyncio.run` joins that executor's threads on the way out (Python 3.11 without a timeout):
a worker stuck on a file (a FIFO planted as a store file, a hung network mount) made `q`
unquittable. Here each job gets a daemon thread and `shutdown` returns at once, so the app
exits whatever a worker is doing; the OS releases any lock such a thread held.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class DaemonExecutor(concurrent.futures.ThreadPoolExecutor):
    """One daemon thread per job; never waited for (asyncio wants a ThreadPoolExecutor)."""

    def __init__(self) -> None:
        super().__init__(max_workers=1, thread_name_prefix="inspector-worker")
        self._closed = False

    def submit(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        if self._closed:
            raise RuntimeError("cannot schedule new work after shutdown")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=run, name="inspector-worker", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._closed = True


__all__ = ["DaemonExecutor"]
