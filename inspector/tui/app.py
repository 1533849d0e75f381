"""The inspector App: the live memory of a session, drivable by keyboard, safe over SSH.

`create_app(...)` builds the app for the CLI and the tests; `run_app(...)` runs it and returns
the exit status. The app only composes; each concern lives beside it:

- `session.DisplayedSession`: the session on display (manager, archive id, hot-window model,
  status, plan, runs history), swapped by `b`, the Archive tab and the Timeline's `g`.
- `reloader.Reloader`: the coalesced reloads ("events", "status", "plan") in thread workers,
  the watcher's thread and the plan's child process. Workers post messages; the handlers here
  apply them on the UI thread. With `watch=False` (tests, snapshots) views reload after each
  action instead of on a file change.
- `refusal`: which actions are refused when (pure); `write_actions.WriteActions`: the writes.
- `keys.KeyRouter`: key routing and tab focus; `layout`: the tabs, size classes, footer keys.
- `budget`: the budget gauge's verdict (pure); the help table is `screens.help_screen`'s.

Tabs that are not on screen reload when shown (their data is marked stale), so a busy agent
appending events costs the hot window and header only.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.css.query import NoMatches
from textual.widgets import Static, TabbedContent
from textual.worker import Worker, WorkerState

from core.compaction.headroom import Headroom
from core.compaction.trigger import PromptSize, TriggerDecision
from core.config import CompactionConfig, load_config
from core.manager import MemoryManager
from inspector.safe_text import one_line
from inspector.tui.actions import ACTIONS, ActionSpec
from inspector.tui.app_part import AppWiring
from inspector.tui.daemon_executor import DaemonExecutor
from inspector.tui.display import SessionDisplay
from inspector.tui.first_launch import HINT as FIRST_LAUNCH_HINT
from inspector.tui.hot_tab import HotTab
from inspector.tui.hot_window_model import CutPreview, HotWindowModel, LightStatus
from inspector.tui.keys import APP_BINDINGS, KeyRouter
from inspector.tui.layout import (
    TABS,
    VIEW_WIDGETS,
    compose_tabs,
    refresh_footer,
    update_size_class,
)
from inspector.tui.layout import footer_hidden as layout_footer_hidden
from inspector.tui.messages import (
    ActionFinished,
    EventsPolled,
    FilesChanged,
    PlanMade,
    StatusRead,
    WatchError,
)
from inspector.tui.palette import InspectorCommands
from inspector.tui.plan_process import PlanProcess
from inspector.tui.probe import AppProbe
from inspector.tui.refusal import WRITE_ACTIONS, Gate, refusal, shown
from inspector.tui.reloader import Reloader
from inspector.tui.screens import HelpScreen
from inspector.tui.screens.help_screen import help_keys
from inspector.tui.screenshot import fix_leading_blanks
from inspector.tui.session import DisplayedSession, OnDisplay, Runs
from inspector.tui.stylesheets import STYLESHEETS
from inspector.tui.views.archive_view import ArchiveView
from inspector.tui.views.recall_view import RecallView
from inspector.tui.views.timeline_view import TimelineView
from inspector.tui.watch import VIEWS
from inspector.tui.widgets.activity_log import ActivityLog
from inspector.tui.widgets.budget_gauge import BudgetGauge
from inspector.tui.widgets.demo_controls import DemoControls, DemoPlayerLike, ending_line
from inspector.tui.widgets.event_detail import EventDetail
from inspector.tui.widgets.footer import InspectorFooter
from inspector.tui.widgets.hot_window import HotWindow
from inspector.tui.widgets.plan_panel import PlanPanel, WhatIf
from inspector.tui.widgets.status_header import StatusHeader
from inspector.tui.write_actions import WriteActions

ARCHIVE_BANNER = " ARCHIVED — not part of any prompt "


class InspectorApp(App[int]):
    """session-inspector's TUI."""

    TITLE = "session-inspector"
    CSS_PATH = STYLESHEETS
    COMMANDS: ClassVar[set[Any]] = App.COMMANDS | {InspectorCommands}
    ENABLE_COMMAND_PALETTE = True

    BINDINGS: ClassVar[list[BindingType]] = APP_BINDINGS

    manager: OnDisplay[MemoryManager] = OnDisplay()
    archive_id: OnDisplay[str | None] = OnDisplay()
    hot_model: OnDisplay[HotWindowModel] = OnDisplay()
    status: OnDisplay[LightStatus] = OnDisplay()
    preview: OnDisplay[CutPreview | None] = OnDisplay()
    trigger: OnDisplay[TriggerDecision | None] = OnDisplay()
    real_trigger: OnDisplay[TriggerDecision | None] = OnDisplay()
    prompt_size: OnDisplay[PromptSize | None] = OnDisplay()
    prompt_history: OnDisplay[Runs] = OnDisplay()
    full_load_ms: OnDisplay[float | None] = OnDisplay()

    first_launch_hint = False
    """Show the `?` legend hint at mount (run_app: the first time this user opens the TUI)."""

    def __init__(
        self,
        memory_dir: Path | str,
        *,
        read_only: bool = False,
        poll: bool = False,
        config: CompactionConfig | None = None,
        demo: DemoPlayerLike | None = None,
        watch: bool = True,
        display_root: str | None = None,
        clock: Callable[[], str] | None = None,
        demo_pace: float | None = None,
        demo_autoplay: bool = True,
        probe: AppProbe | None = None,
    ) -> None:
        super().__init__()
        self.probe = probe if probe is not None else AppProbe()
        """Where the app reports what tests and the bench measure (never read back)."""
        self.memory_dir = Path(memory_dir)
        self.read_only = read_only
        self.poll = poll
        self.config = config if config is not None else load_config(memory_dir=memory_dir).config
        self.demo = demo
        self.demo_pace = demo_pace
        self.demo_autoplay = demo_autoplay
        self.watch_files = watch
        self.display_root = display_root if display_root is not None else str(memory_dir)
        self.clock = clock
        self.active_manager = MemoryManager(self.memory_dir, self.config, read_only=read_only)
        self.session = DisplayedSession(self.active_manager)
        self.what_if = WhatIf()
        wiring = AppWiring(
            self, self.session, self.config, self.probe, self.log_activity, lambda: self.what_if
        )
        self.reloader = Reloader(wiring)
        self.writes = WriteActions(wiring, display_root=self.display_root)
        self.keys = KeyRouter(
            self,
            self.BINDINGS,
            shown=lambda a: self.check_action(a, ()) is True,
            refuse=self._refuse,
        )
        self.drawing = SessionDisplay(
            wiring,
            show_error=self.show_error,
            request=self.reloader.request,
            header=lambda: (self.display_root, self.read_only, self._watch_mode()),
        )
        self.hot_tab = HotTab(
            wiring, self.drawing, show_tab=self.action_show_tab, request=self.request
        )
        self._last_error: dict[str, str] = {}

    @property
    def _plan_process(self) -> PlanProcess | None:
        return self.reloader.plan_process

    def _headroom(self, config: CompactionConfig) -> Headroom | None:
        return self.session.headroom(config)

    def export_screenshot(self, *, title: str | None = None, simplify: bool = False) -> str:
        """Textual's SVG screenshot, with no text run starting with blanks (rsvg drops them):
        every export (save_screenshot, snapshot tests) goes through here."""
        svg = super().export_screenshot(title=title, simplify=simplify)
        return fix_leading_blanks(svg)

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusHeader(self.drawing.header_info(), id="status")
        yield Static(Text(ARCHIVE_BANNER, style="bold reverse"), id="archive-banner", markup=False)
        yield BudgetGauge(id="budget")
        if self.demo is not None:
            yield DemoControls(
                self.demo, pace=self.demo_pace, autoplay=self.demo_autoplay, id="demo"
            )
        yield from compose_tabs(self.clock)
        yield InspectorFooter(compact=True)

    def on_mount(self) -> None:
        # Workers on daemon threads: `q` must quit whatever a worker is stuck on.
        asyncio.get_running_loop().set_default_executor(DaemonExecutor())
        self.query_one("#archive-banner").display = False
        self.query_one("#plan", PlanPanel).display = False
        self.query_one(HotWindow).focus()
        self.log_activity(
            f"inspector on {self.display_root} ({'read-only' if self.read_only else 'read-write'}"
            f", files {self._watch_mode()})",
            "info",
        )
        self.drawing.attach_views()
        if self.watch_files:
            self.reloader.start_watcher(self.memory_dir, poll=self.poll)
        self.request("events")
        self.request("status", archives=True)
        self.drawing.mark_stale(VIEW_WIDGETS)
        self.drawing.refresh_visible_view()
        update_size_class(self)
        if self.first_launch_hint:
            self.notify(FIRST_LAUNCH_HINT, title="Legend: ?", timeout=8, markup=False)

    def on_key(self, event: events.Key) -> None:
        self.keys.on_key(event)

    def on_resize(self, event: events.Resize) -> None:
        update_size_class(self, event.size.width, event.size.height)

    def footer_hidden(self) -> frozenset[str]:
        return layout_footer_hidden(self)

    # -- activity / errors ------------------------------------------------------------------

    def log_activity(self, text: str, level: str = "info") -> None:
        with contextlib.suppress(NoMatches):
            self.query_one("#log", ActivityLog).record(text, level)

    def show_error(self, where: str, text: str, *, repeat: bool = True) -> None:
        """Activity log + one-line notification, untrusted text shown literally. With
        `repeat=False` (background reads) the same error is not shown again until it changes."""
        line = one_line(f"{where}: {text}", 300)
        if not repeat and self._last_error.get(where) == line:
            return
        self._last_error[where] = line
        self.probe.error(line)
        self.log_activity(line, "error")
        self.notify(line, severity="error", markup=False, timeout=8)

    # -- reloads and their results (UI thread) ----------------------------------------------

    def request(self, job: str, *, archives: bool = False) -> None:
        """Reload "events", "status" or "plan" in a thread worker, coalesced (`Reloader`)."""
        self.reloader.request(job, archives=archives)

    def reload_all(self) -> None:
        self.request("events")
        self.request("status", archives=True)
        self.drawing.mark_stale(VIEW_WIDGETS)
        self.drawing.refresh_visible_view()

    @on(EventsPolled)
    def _on_events_polled(self, message: EventsPolled) -> None:
        self.drawing.events_polled(message)

    @on(StatusRead)
    def _on_status_read(self, message: StatusRead) -> None:
        self.drawing.status_read(message)

    @on(PlanMade)
    def _on_plan_made(self, message: PlanMade) -> None:
        self.drawing.plan_made(message)

    @on(FilesChanged)
    def _on_files_changed(self, message: FilesChanged) -> None:
        self.drawing.files_changed(message, self.reloader.file_sizes)

    @on(ActionFinished)
    def _on_action_finished(self, message: ActionFinished) -> None:
        if message.ok:
            self.log_activity(f"{message.name}: {message.text}", "action")
            self.notify(one_line(f"{message.name}: {message.text}", 200), markup=False)
        else:
            self.show_error(message.name, message.text, repeat=message.refresh)
        if message.refresh and not self.watch_files:
            self.reload_all()
        self.refresh_bindings()

    @on(WatchError)
    def _on_watch_error(self, message: WatchError) -> None:
        self.poll = True
        self.show_error("watcher", message.text)
        self.drawing.update_header()

    def _watch_mode(self) -> str:
        return "off" if not self.watch_files else "polled" if self.poll else "watched"

    @on(TabbedContent.TabActivated)
    def _on_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.drawing.refresh_visible_view()
        refresh_footer(self)

    @on(HotWindow.RowHighlighted)
    def _on_row_highlighted(self, message: HotWindow.RowHighlighted) -> None:
        self.query_one(EventDetail).show_row(message.row, message.snapshot)

    @on(HotWindow.FollowChanged)
    def _on_follow_changed(self, message: HotWindow.FollowChanged) -> None:
        self.refresh_bindings()
        self.drawing.update_header()

    @on(PlanPanel.WhatIfChanged)
    def _on_what_if(self, message: PlanPanel.WhatIfChanged) -> None:
        self.what_if = message.what_if
        self.request("plan")

    def stop_background(self) -> None:
        self.reloader.stop()
        with contextlib.suppress(NoMatches):
            self.query_one(DemoControls).stop()

    async def action_quit(self) -> None:
        self.stop_background()
        self.exit(0)

    def on_unmount(self) -> None:
        self.stop_background()

    # -- action gating (inspector.tui.refusal) ----------------------------------------------

    def _gate(self) -> Gate:
        controls = self.query(DemoControls)
        finished = bool(controls) and bool(getattr(controls.first(), "finished", False))
        return Gate(self.read_only, self.session.archived, self.demo is not None, finished)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide what cannot run here: writes when read-only or viewing an archive, demo keys
        without a demo, the way back when not in an archive."""
        gate = Gate(self.read_only, self.session.archived, self.demo is not None)
        return shown(action, gate)

    def available_actions(self) -> list[ActionSpec]:
        """What the command palette lists (same gate as the footer)."""
        return [spec for spec in ACTIONS if self.check_action(spec.action, ()) is True]

    def refusal(self, action: str) -> str | None:
        """Why an action cannot run here (None: it can), in words a person can act on."""
        return refusal(action, self._gate())

    def _refuse(self, action: str) -> bool:
        why = self.refusal(action)
        if why is None and self.check_action(action, ()) is not True:
            why = "not available here"
        if why is None:
            return False
        # Named as the palette names it, with its key ("Demo play/pause (space)").
        spec = next((a for a in ACTIONS if a.action == action), None)
        name = f"{spec.title} ({spec.key})" if spec is not None else action
        self.log_activity(f"{name}: {why}", "info")
        self.notify(f"{name}: {why}", severity="warning", markup=False, timeout=4)
        return True

    # -- actions ----------------------------------------------------------------------------

    def action_maintenance(self) -> None:
        if not self._refuse("maintenance"):
            self.writes.maintenance()

    async def action_compact(self) -> None:
        if not self._refuse("compact"):
            await self.writes.compact()

    async def action_rotate(self) -> None:
        if not self._refuse("rotate"):
            await self.writes.rotate()

    async def action_append(self) -> None:
        if not self._refuse("append"):
            await self.writes.append()

    async def action_repair(self) -> None:
        if not self._refuse("repair"):
            await self.writes.repair()

    def action_recall(self) -> None:
        self.probe.action("recall")
        self.action_show_tab("recall")
        try:
            view = self.query_one("#recall-view", RecallView)
        except NoMatches:
            return
        view.action_focus_search()

    def action_toggle_preview(self) -> None:
        self.hot_tab.toggle_preview()

    def action_what_if(self) -> None:
        self.hot_tab.what_if()

    def action_focus_detail(self) -> None:
        self.hot_tab.focus_detail()

    def action_toggle_follow(self) -> None:
        self.hot_tab.toggle_follow()

    def action_demo_toggle(self) -> None:
        if not self._refuse("demo_toggle"):
            self.probe.action("demo_toggle")
            self.query_one(DemoControls).toggle()

    def action_demo_step(self) -> None:
        if not self._refuse("demo_step"):
            self.probe.action("demo_step")
            self.query_one(DemoControls).step_once()

    @on(DemoControls.Stepped)
    def _on_demo_stepped(self, message: DemoControls.Stepped) -> None:
        self.log_activity(DemoControls.describe(message), "action")
        if message.done and (ending := ending_line(message.detail)):
            # The demo ends saying what happened and where to see it.
            self.log_activity(f"demo ended: {ending}", "ok")
            self.notify(ending, title="demo ended", markup=False, timeout=15)
        if message.compaction is not None:
            self.log_activity(message.compaction, "ok")
            self.notify(message.compaction, title="demo", markup=False, timeout=3)
        if not self.watch_files:
            self.reload_all()

    @on(DemoControls.Failed)
    def _on_demo_failed(self, message: DemoControls.Failed) -> None:
        self.show_error("demo", message.error)

    def action_show_tab(self, tab: str) -> None:
        self.keys.show_tab(tab)

    def action_next_tab(self) -> None:
        self.keys.tab_step(1)

    def action_prev_tab(self) -> None:
        self.keys.tab_step(-1)

    def action_escape(self) -> None:
        self.keys.escape()

    def help_keys(self) -> list[tuple[str, str, str]]:
        """(where, key, what) for every binding of the app and of each view."""
        return help_keys(self.BINDINGS)

    def action_timeline(self) -> None:
        """`T`: the Timeline tab (8), every model call and pass of the session on display."""
        self.action_show_tab("timeline")

    def action_timeline_go(self) -> None:
        self.action_show_tab("timeline")
        self.query_one(TimelineView).action_go()

    def action_timeline_recall(self) -> None:
        self.action_show_tab("timeline")
        self.query_one(TimelineView).action_recall_fact()

    @on(TimelineView.MomentReady)
    def _on_moment_ready(self, message: TimelineView.MomentReady) -> None:
        self.open_moment(message.root, message.label)

    @on(TimelineView.RecallFact)
    def _on_recall_fact(self, message: TimelineView.RecallFact) -> None:
        """A fact a pass dropped: Recall searches for it; the events that hold it are named."""
        self.action_show_tab("recall")
        self.query_one("#recall-view", RecallView).search_for(message.text)
        ids = ", ".join(message.event_ids[:5]) + (" …" if len(message.event_ids) > 5 else "")
        line = one_line(f"dropped by {message.chunk_id}: {message.text} — held by {ids}", 240)
        self.log_activity(f"recall {line}", "action")
        self.notify(line, title="recall dropped fact", markup=False, timeout=6)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.help_keys()))

    @on(RecallView.Searched)
    def _on_recall_searched(self, message: RecallView.Searched) -> None:
        if message.error:
            self.show_error("recall", message.error)
            return
        took = f", {message.elapsed_ms:.0f} ms" if message.elapsed_ms is not None else ""
        results = f"{message.result_count} result{'s' if message.result_count != 1 else ''}"
        self.log_activity(
            f"recall {one_line(message.query, 80)!r}: {results}, "
            f"{message.pending_chunks_recalled} pending{took}",
            "action",
        )

    # -- the session on display -------------------------------------------------------------

    @on(ArchiveView.OpenArchive)
    def _on_open_archive(self, message: ArchiveView.OpenArchive) -> None:
        self.open_archive(message.path, message.session_id)

    def open_archive(self, session_dir: Path, session_id: str | None = None) -> None:
        """Show a closed session in the same views, read-only."""
        archive_id = session_id or Path(session_dir).name
        manager = MemoryManager(
            self.memory_dir, self.config, session_dir=Path(session_dir), read_only=True
        )
        self._switch(manager, archive_id, ARCHIVE_BANNER)
        self.log_activity(f"viewing archived session {archive_id}", "action")

    def open_moment(self, moment_root: Path, label: str) -> None:
        """Every tab as it was at a past model call, read-only (core.timeline.materialize_moment
        laid it out under `moment_root`); `b` comes back to now."""
        manager = MemoryManager(moment_root, self.config, read_only=True)
        self._switch(manager, label, f" PAST — {label} · read-only · b: back to now ", moment_root)
        self.log_activity(f"viewing the past: {label}", "action")

    def action_back_to_active(self) -> None:
        if self.session.archive_id is not None:
            self._switch(self.active_manager, None, ARCHIVE_BANNER)
            self.log_activity("back to the active session", "action")

    def _switch(
        self,
        manager: MemoryManager,
        archive_id: str | None,
        banner: str,
        moment_root: Path | None = None,
    ) -> None:
        self.drawing.show_session(
            manager, archive_id, Text(banner, style="bold reverse"), moment_root
        )
        self.reload_all()
        self.refresh_bindings()
        self.action_show_tab("hot")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that raised despite its own handler: report, never crash."""
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.show_error(event.worker.name or "worker", f"{type(error).__name__}: {error}")


__all__ = [
    "ACTIONS",
    "TABS",
    "VIEWS",
    "WRITE_ACTIONS",
    "ActionSpec",
    "InspectorApp",
    "InspectorFooter",
]
