"""The session on display, drawn: what the reloader's results change on screen.

`SessionDisplay` applies each result message on the UI thread (events polled → the hot
window; a status read → the runs history, the plan panel's defaults; a plan made → the cut
preview and the plan panel), keeps the header and the budget gauge up to date, and reloads the
tab views whose data changed when they are on screen (the others are marked stale and reload
when shown). A result for a session no longer on display is dropped.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from rich.text import Text
from textual.css.query import NoMatches
from textual.widgets import Static, TabbedContent

from core.manager import MemoryManager
from inspector.tui.app_part import AppPart, AppWiring
from inspector.tui.budget import budget_info
from inspector.tui.layout import VIEWS_FOR_CHANGE
from inspector.tui.messages import EventsPolled, FilesChanged, PlanMade, StatusRead
from inspector.tui.views.session_view import SessionView, ViewContext
from inspector.tui.watch import describe_file_change
from inspector.tui.widgets.budget_gauge import BudgetGauge
from inspector.tui.widgets.hot_window import HotWindow
from inspector.tui.widgets.plan_panel import PlanPanel
from inspector.tui.widgets.status_header import HeaderInfo, StatusHeader


class SessionDisplay(AppPart):
    """Draws the session on display (see the module docstring)."""

    def __init__(
        self,
        wiring: AppWiring,
        *,
        show_error: Callable[..., None],
        request: Callable[..., None],
        header: Callable[[], tuple[str, bool, str]],
    ) -> None:
        super().__init__(wiring)
        self._show_error = show_error
        self._request = request
        self._header = header
        """(root shown, read-only, watch mode) for the header."""
        self.jump_to_cut = False
        """Bring the cut line into view when the next plan lands (the cut preview opened)."""
        self._stale: set[str] = set()

    # -- results --------------------------------------------------------------------------

    def events_polled(self, message: EventsPolled) -> None:
        session, update = self._session, message.update
        if message.model is not session.hot_model:
            return
        try:
            hot = self._app.query_one(HotWindow)
        except NoMatches:  # shutting down
            return
        snapshot = update.snapshot
        if (
            update.reset
            or update.appended
            or hot.loading_text is not None
            or hot.snapshot.length != snapshot.length
        ):
            hot.set_snapshot(snapshot)
        self._probe.painted(session.t0)
        if session.full_load_ms is None and not snapshot.partial:
            session.full_load_ms = (time.perf_counter() - session.t0) * 1000
            if snapshot.length:
                seconds = session.full_load_ms / 1000
                self._log(
                    f"loaded {snapshot.length:,} lines of events.jsonl in {seconds:.2f} s", "info"
                )
        if snapshot.partial:
            self.update_header()
            return
        self._probe.change_applied()
        took = f"({update.elapsed_ms:.0f} ms)"
        if update.reset:
            self._log(f"events.jsonl reloaded: {snapshot.length} lines {took}", "change")
        elif update.appended:
            lines = f"line{'s' if update.appended != 1 else ''}"
            self._log(f"events.jsonl: +{update.appended} {lines} {took}", "change")
        self.update_header()
        if update.reset or update.appended or session.preview is None:
            self._request("plan")

    def status_read(self, message: StatusRead) -> None:
        session = self._session
        if message.manager is not session.manager:
            return
        for error in message.status.errors:
            self._show_error("status", error, repeat=False)
        prev = session.apply_status(message.status)
        status = session.status
        self.update_header()
        try:
            self._app.query_one(PlanPanel).set_defaults(
                self._config.keep_recent_tokens,
                self._config.hot_window_events,
                status.last_prompt_tokens,
            )
        except NoMatches:  # shutting down
            return
        if (
            prev.last_prompt_tokens != status.last_prompt_tokens
            or prev.model != status.model
            or session.trigger is None
        ):
            self._request("plan")
        self.update_budget()

    def plan_made(self, message: PlanMade) -> None:
        session = self._session
        if message.model is not session.hot_model:
            return
        moved = (
            self._what_if().active
            and session.preview is not None
            and message.preview.cut_row != session.preview.cut_row
        )
        session.preview = message.preview
        session.trigger = message.trigger
        session.real_trigger = message.real_trigger
        session.prompt_size = message.size
        try:
            hot = self._app.query_one(HotWindow)
        except NoMatches:  # shutting down
            return
        hot.set_cut_preview(message.preview)
        if (self.jump_to_cut or moved) and hot.show_cut():
            self.jump_to_cut = False
        self._app.query_one(PlanPanel).show(message.preview.plan, message.trigger)
        self.update_budget()

    def files_changed(self, message: FilesChanged, sizes: dict[str, int | None]) -> None:
        """The activity log's line for each file changed (with its size delta); the reloads
        the change calls for; the views it makes stale."""
        change = message.change
        self._probe.changed(change.at)
        if message.sizes:
            for rel, now in message.sizes.items():
                if now is None and rel.count("/") == 0:
                    continue  # a folder's own entry: its files are listed
                self._log(describe_file_change(rel, sizes.get(rel), now), "change")
                sizes[rel] = now
        else:
            self._log("changed: " + ", ".join(change.paths)[:300], "change")
        views = change.views
        if views & {"events", "session"}:
            self._request("events")
        if views & {"state", "chunks", "session", "archive", "events"}:
            self._request("status", archives=bool(views & {"archive", "session"}))
        for view in views:
            self._stale.update(VIEWS_FOR_CHANGE.get(view, ()))
        self.refresh_visible_view()

    # -- header, gauge, views -------------------------------------------------------------

    def header_info(self) -> HeaderInfo:
        try:
            follow = self._app.query_one(HotWindow).follow
        except NoMatches:
            follow = False
        root, read_only, watch_mode = self._header()
        return self._session.header_info(
            self._config, root=root, read_only=read_only, watch_mode=watch_mode, follow=follow
        )

    def update_header(self) -> None:
        # A worker's result can land while the app is shutting down and its widgets are gone.
        with contextlib.suppress(NoMatches):
            self._app.query_one(StatusHeader).set_info(self.header_info())

    def update_budget(self) -> None:
        session = self._session
        if session.real_trigger is None:
            return
        info = budget_info(
            session.real_trigger,
            session.preview,
            session.prompt_size,
            session.prompt_history,
            session.status.prompt_state,
            running=session.manager.maintenance_running,
            archived=session.archived,
        )
        with contextlib.suppress(NoMatches):  # shutting down
            self._app.query_one(BudgetGauge).set_info(info)

    def show_session(
        self,
        manager: MemoryManager,
        archive_id: str | None,
        banner: Text,
        moment_root: Path | None = None,
    ) -> None:
        """Put another session on display (`archive_id` None: the active one; `moment_root`:
        a past moment's folder, removed when it is left): the banner above the tabs, the hot
        window loading, every view attached to the new manager."""
        self._session.drop_moment()
        self._session.moment_root = moment_root
        self._session.switch(manager, archive_id)
        banner_widget = self._app.query_one("#archive-banner", Static)
        banner_widget.update(banner)
        banner_widget.display = archive_id is not None
        hot = self._app.query_one(HotWindow)
        hot.loading_text = "loading events.jsonl…"
        hot.set_cut_preview(None)
        self.attach_views()

    def view_context(self) -> ViewContext:
        return self._session.view_context(self._config)

    def attach_views(self) -> None:
        """Every view reads through the manager on display (active or archived session)."""
        context = self.view_context()
        for view in self._app.query(SessionView):
            view.attach(context)

    def mark_stale(self, views: Iterable[str]) -> None:
        self._stale.update(views)

    def refresh_visible_view(self) -> None:
        """Reload the view on screen if its data changed since it last read."""
        try:
            active = self._app.query_one(TabbedContent).active
        except NoMatches:
            return
        if active not in self._stale:
            return
        self._stale.discard(active)
        try:
            view = self._app.query_one(f"#{active}-view", SessionView)
        except NoMatches:
            return
        view.attach(self.view_context())
        try:
            view.reload()
        except Exception as exc:
            self._show_error(f"{active} view", f"{type(exc).__name__}: {exc}")
