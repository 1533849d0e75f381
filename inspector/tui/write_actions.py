"""The write actions as the app runs them: `m`, `c` (focus text, what-if once), `r` and `R`
(confirmed first), `a` (an event typed in a form). Each becomes an `ActionJob`
(`inspector.tui.actions`) run by one thread worker on the manager on display when it started;
what it did (or why it failed) comes back to the app as an `ActionFinished` message.

Whether an action may run at all is the app's question (`inspector.tui.refusal`), asked first.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from rich.text import Text

from core.manager import MemoryManager
from inspector.safe_text import one_line
from inspector.tui.actions import MAINTENANCE, REPAIR, ROTATE, ActionJob, append_job, compact_job
from inspector.tui.app_part import AppPart, AppWiring
from inspector.tui.hot_window_model import what_if_config
from inspector.tui.messages import ActionFinished
from inspector.tui.screens import AppendEventScreen, ConfirmScreen, FocusPromptScreen
from inspector.tui.widgets.plan_panel import force_values

REPAIR_TEXT = (
    "Finishes or undoes crashed passes, moves an unreadable index.yaml aside and "
    "rebuilds it from the chunk files, and moves corrupt lines of events.jsonl to "
    "corrupt.jsonl."
)


class WriteActions(AppPart):
    """Starts the write actions for the app (see the module docstring)."""

    def __init__(self, wiring: AppWiring, *, display_root: str) -> None:
        super().__init__(wiring)
        self._root = display_root

    def run(self, job: ActionJob[Any], detail: str = "") -> None:
        """Start an action: recorded, logged, and run by the one action worker."""
        self._probe.action(job.name)
        self._log(f"{job.name}: started{detail}", "action")
        manager = self._session.manager
        self._app.run_worker(
            partial(self._work, job, manager),
            name="_action_worker",
            group="actions",
            description=f"_action_worker({job!r}, {manager!r})",
            thread=True,
            exit_on_error=False,
        )

    def _work(self, job: ActionJob[Any], manager: MemoryManager) -> None:
        """Every write action: run it off the loop, then post what it did (or why it failed)
        for the UI thread; the manager is the one on display when the action started."""
        start = time.perf_counter()
        try:
            result = job.run(manager)
        except Exception as exc:
            self._app.post_message(ActionFinished(job.name, f"{exc}", ok=False))
        else:
            ms = (time.perf_counter() - start) * 1000
            self._app.post_message(ActionFinished(job.name, job.describe(result, ms)))

    def _confirmed(self, job: ActionJob[Any], ok: bool) -> None:
        if not ok:
            self._log(f"{job.name} cancelled", "info")
            return
        self.run(job)

    def maintenance(self) -> None:
        self.run(MAINTENANCE)

    async def compact(self) -> None:
        """`c`: the focus text, and the what-if values once when the what-if is on."""
        uses, what_if = force_values(self._config, self._what_if())
        screen = FocusPromptScreen(uses=uses, what_if=what_if)

        def got_focus(focus: str | None) -> None:
            if focus is None:
                self._log("compaction cancelled", "info")
                return
            detail = f" (focus {one_line(focus, 80)!r})" if focus else ""
            config = None
            if screen.use_what_if:
                now = self._what_if()
                config = what_if_config(self._config, now.keep_recent_tokens, now.hot_window_events)
                detail += f" (what-if, once: {what_if})"
            self.run(compact_job(focus or None, config), detail)

        await self._app.push_screen(screen, got_focus)

    async def rotate(self) -> None:
        """`r`, confirmed: what moves where, in figures."""
        snap = self._session.hot_model.snapshot()
        status = self._session.status
        sid = status.session_id or "(unknown id)"
        message = Text()
        message.append("Moves ")
        message.append(f"{self._root}/session/", style="bold")
        message.append(
            f" ({snap.n_events} events, {status.chunk_count} chunks, "
            f"{status.pending_count} pending) to "
        )
        message.append(f"{self._root}/session_archive/", style="bold")
        message.append(one_line(sid, 60), style="bold")
        message.append(
            "/ and starts an empty session. The archived session stays readable "
            "(Archive tab) but is no longer part of any prompt."
        )
        await self._app.push_screen(
            ConfirmScreen("Rotate the session?", message, confirm_label="Rotate"),
            lambda ok: self._confirmed(ROTATE, bool(ok)),
        )

    async def append(self) -> None:
        def got_event(event: dict[str, Any] | None) -> None:
            if event is None:
                self._log("append cancelled", "info")
                return
            self.run(append_job(event))

        await self._app.push_screen(AppendEventScreen(), got_event)

    async def repair(self) -> None:
        await self._app.push_screen(
            ConfirmScreen("Repair the session?", REPAIR_TEXT, confirm_label="Repair"),
            lambda ok: self._confirmed(REPAIR, bool(ok)),
        )
