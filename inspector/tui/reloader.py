"""The app's reloads as one reloader: three coalesced jobs ("events", "status", "plan") run
in thread workers, the watcher's thread, and the plan's child process.

Workers never touch widgets: they post messages (`post_message` is thread-safe) that the app's
handlers apply on the UI thread. A request while a job runs marks it dirty, and it runs once
more afterwards, never twice at the same time (`inspector.tui.jobs.Jobs`). Each worker reads
the session on display when it was requested (its hot-window model, its manager), so a result
that lands after a switch is recognised as stale and dropped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from core.manager import MemoryManager
from inspector.tui.app_part import AppPart, AppWiring
from inspector.tui.hot_window_model import (
    HotWindowModel,
    Planner,
    plan_now,
    read_light_status,
    what_if_config,
)
from inspector.tui.jobs import Jobs
from inspector.tui.messages import (
    ActionFinished,
    EventsPolled,
    FilesChanged,
    PlanMade,
    StatusRead,
    WatchError,
)
from inspector.tui.plan_process import PlanProcess, PlanProcessError
from inspector.tui.watch import Change, MemoryWatcher, file_sizes, initial_sizes

PLAN_PROCESS_MIN_EVENTS = 20_000
"""From this many events on, the cut preview is planned in a child process (see
`inspector.tui.plan_process`); below, a plan is a few ms and runs in the plan worker's thread."""


class Reloader(AppPart):
    """Runs the app's reloads for the session on display (see the module docstring)."""

    def __init__(self, wiring: AppWiring) -> None:
        super().__init__(wiring)
        self._jobs = Jobs()
        self._want_archives = False
        self._stopping = threading.Event()
        self.plan_process: PlanProcess | None = PlanProcess()
        self.watcher: MemoryWatcher | None = None
        self.file_sizes: dict[str, int | None] = {}
        """The last size seen of each file under the root (for the activity log's deltas)."""

    def request(self, job: str, *, archives: bool = False) -> None:
        """Run a reload job in a thread worker, coalesced."""
        if job == "status" and archives:
            self._want_archives = True
        if not self._jobs.claim(job):
            return
        session = self._session
        if job == "events":
            self._start(self._events, "_events_worker", "events", session.hot_model)
        elif job == "status":
            self._start(self._status, "_status_worker", "status", session.manager)
        elif job == "plan":
            self._start(self._plan, "_plan_worker", "plan", session.hot_model)

    def _start(self, loop: Callable[[Any], None], name: str, group: str, arg: object) -> None:
        self._app.run_worker(
            partial(loop, arg),
            name=name,
            group=group,
            description=f"{name}({arg!r})",
            thread=True,
            exit_on_error=False,
        )

    def _events(self, model: HotWindowModel) -> None:
        post = self._app.post_message
        try:
            peek = model.peek()
        except Exception:
            peek = None
        if peek is not None:
            post(EventsPolled(peek, model))
        while True:
            try:
                update = model.poll()
            except Exception as exc:
                post(ActionFinished("read events", f"{exc}", ok=False, refresh=False))
            else:
                post(EventsPolled(update, model))
            if not self._jobs.again("events"):
                return

    def _status(self, manager: MemoryManager) -> None:
        while True:
            archives = self._want_archives
            self._want_archives = False
            try:
                status = read_light_status(manager, include_archives=archives)
            except Exception as exc:
                self._app.post_message(
                    ActionFinished("read status", f"{exc}", ok=False, refresh=False)
                )
            else:
                self._app.post_message(StatusRead(status, manager))
            if not self._jobs.again("status"):
                return

    def _plan(self, model: HotWindowModel) -> None:
        """Plans on the newest rows; on a big session re-plans at most every 2x its own cost
        (capped at 2 s), so a busy agent does not keep a core planning. From
        `PLAN_PROCESS_MIN_EVENTS` events on, the plan itself is worked out in a child process
        (`inspector.tui.plan_process`): in this thread it would hold the GIL against the event
        loop for ~0.3 s a plan at 100k events."""
        session, post = self._session, self._app.post_message
        while True:
            start = time.perf_counter()
            what_if = self._what_if()
            try:
                config = what_if_config(
                    self._config, what_if.keep_recent_tokens, what_if.hot_window_events
                )
                snapshot = model.snapshot()
                plan = plan_now(
                    snapshot,
                    session.status,
                    self._config,
                    config,
                    what_if.prompt_tokens,
                    planner=self._planner_for(snapshot.n_events),
                    entry_extra=session.entry_extra,
                    headroom=session.headroom(config),
                )
            except PlanProcessError as exc:
                if self._stopping.is_set():
                    return
                failed, self.plan_process = self.plan_process, None
                if failed is not None:
                    failed.close()  # plan in this thread from now on
                post(
                    ActionFinished(
                        "plan", f"{exc}; planning in the app instead", ok=False, refresh=False
                    )
                )
                self._jobs.claim("plan")  # run again, here
            except Exception as exc:
                post(ActionFinished("plan", f"{exc}", ok=False, refresh=False))
            else:
                elapsed = (time.perf_counter() - start) * 1000
                post(
                    PlanMade(
                        plan.preview, plan.trigger, plan.real_trigger, model, elapsed, plan.size
                    )
                )
            if not self._jobs.again("plan"):
                return
            pause = min(2.0, 2 * (time.perf_counter() - start))
            if pause > 0.05 and self._stopping.wait(pause):
                return

    def _planner_for(self, n_events: int) -> Planner | None:
        """The child process's planner for a big session (started on first use), else None."""
        if n_events < PLAN_PROCESS_MIN_EVENTS or self.plan_process is None:
            return None
        return self.plan_process.plan

    def start_watcher(self, root: Path, *, poll: bool) -> None:
        """The watcher runs until quit, so it gets its own daemon thread, not a pool worker."""
        post = self._app.post_message

        def changed(change: Change) -> None:
            post(FilesChanged(change, file_sizes(root, change.paths)))

        def failed(text: str) -> None:
            post(WatchError(text))

        self.watcher = MemoryWatcher(root, changed, poll=poll, on_error=failed)
        threading.Thread(
            target=self._watch, args=(self.watcher, root), name="inspector-watch", daemon=True
        ).start()

    def _watch(self, watcher: MemoryWatcher, root: Path) -> None:
        # Sizes before any change, so the first change of a file shows its delta too (the
        # loop reads them only after a change, posted after this).
        self.file_sizes.update(initial_sizes(root))
        try:
            watcher.run()
        except Exception as exc:
            self._app.post_message(WatchError(f"{type(exc).__name__}: {exc}"))

    def stop(self) -> None:
        self._stopping.set()
        if self.plan_process is not None:
            self.plan_process.close()
        if self.watcher is not None:
            self.watcher.stop()
