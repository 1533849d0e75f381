"""The inspector App: the live memory of a session, drivable by keyboard, safe over SSH.

`create_app(...)` builds the app for the CLI and the tests; `run_app(...)` runs it and returns
the exit status. Structure:

- Every file read and every action runs in a thread worker. Workers never touch widgets: they
  post messages (`post_message` is thread-safe) that handlers on the UI thread apply.
- Reloads are coalesced per job ("events", "status", "plan", each view): a request while the
  job runs marks it dirty, and it runs once more afterwards, never twice at the same time.
- The watcher (`inspector.watch`) watches the memory root's directories and tells the app which
  views changed; with `watch=False` (tests, snapshots) views reload after each action instead.
- Tabs that are not on screen reload when shown (their data is marked stale), so a busy agent
  appending events costs the hot window and header only.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Input, Static, TabbedContent, TabPane, TextArea
from textual.worker import Worker, WorkerState

from core.catalog import read_catalog
from core.config import CompactionConfig, load_config
from core.errors import SessionMemoryError
from core.headroom import Headroom, headroom_for, pushed_out_summary
from core.manager import MemoryManager
from core.trigger import PromptSize, TriggerDecision
from inspector.actions import (
    ACTIONS,
    MAINTENANCE,
    REPAIR,
    ROTATE,
    ActionJob,
    ActionSpec,
    append_job,
    compact_job,
)
from inspector.commands import InspectorCommands
from inspector.daemon_executor import DaemonExecutor
from inspector.first_launch import HINT as FIRST_LAUNCH_HINT
from inspector.first_launch import first_launch
from inspector.jobs import Jobs
from inspector.messages import (
    ActionFinished,
    EventsPolled,
    FilesChanged,
    PlanMade,
    StatusRead,
    WatchError,
)
from inspector.model import (
    CutPreview,
    HotWindowModel,
    LightStatus,
    Planner,
    plan_now,
    read_light_status,
    what_if_config,
)
from inspector.plan_process import PlanProcess, PlanProcessError
from inspector.probe import AppProbe
from inspector.safe_text import mask_secrets, one_line
from inspector.screens import AppendEventScreen, ConfirmScreen, FocusPromptScreen, HelpScreen
from inspector.screenshot import fix_leading_blanks
from inspector.stylesheets import STYLESHEETS
from inspector.watch import (
    VIEWS,
    Change,
    MemoryWatcher,
    describe_file_change,
    file_sizes,
    initial_sizes,
)
from inspector.widgets.activity_log import ActivityLog
from inspector.widgets.archive_view import ArchiveView
from inspector.widgets.budget_gauge import BudgetGauge, BudgetInfo
from inspector.widgets.chunks_view import ChunksView
from inspector.widgets.demo_controls import DemoControls, DemoPlayerLike, ending_line
from inspector.widgets.event_detail import EventDetail, synthetic_chunk_id
from inspector.widgets.footer import (
    FOOTER_HOT_ONLY,
    FOOTER_WIDE_ONLY,
    NARROW_FOOTER,
    InspectorFooter,
)
from inspector.widgets.hot_window import HotWindow
from inspector.widgets.plan_panel import PlanPanel, WhatIf, force_values
from inspector.widgets.prompt_view import PromptView
from inspector.widgets.recall_view import (
    FOOTER_RECALL_TYPED,
    RECALL_NAVIGATION_KEYS,
    RecallView,
)
from inspector.widgets.session_view import SessionView, ViewContext
from inspector.widgets.status_header import HeaderInfo, StatusHeader
from inspector.widgets.summary_view import SummaryView

TABS: tuple[tuple[str, str], ...] = (
    ("hot", "Hot window"),
    ("chunks", "Chunks"),
    ("summary", "Summary"),
    ("prompt", "Prompt"),
    ("recall", "Recall"),
    ("archive", "Archive"),
    ("activity", "Activity"),
)

TAB_LABELS_NARROW: dict[str, str] = {
    "hot": "Hot",
    "chunks": "Chunks",
    "summary": "Summary",
    "prompt": "Prompt",
    "recall": "Recall",
    "archive": "Archive",
    "activity": "Activity",
}
TAB_LABELS_TINY: dict[str, str] = {
    "hot": "Hot",
    "chunks": "Chnk",
    "summary": "Sum",
    "prompt": "Prm",
    "recall": "Rcl",
    "archive": "Arch",
    "activity": "Act",
}
"""Tab labels below 110 and below 80 columns: every tab stays on screen with its number."""

VIEW_WIDGETS: dict[str, type[SessionView]] = {
    "chunks": ChunksView,
    "summary": SummaryView,
    "prompt": PromptView,
    "recall": RecallView,
    "archive": ArchiveView,
}
"""Tab id -> the view: a SessionView the app attaches the session on display to."""

VIEWS_FOR_CHANGE: dict[str, tuple[str, ...]] = {
    "events": ("prompt",),
    "state": ("prompt",),
    "summary": ("summary", "prompt"),
    "chunks": ("chunks", "recall"),
    "archive": ("archive",),
    "session": ("chunks", "summary", "prompt", "recall", "archive"),
}

WRITE_ACTIONS = frozenset({"maintenance", "compact", "rotate", "append", "repair"})
DEMO_ACTIONS = frozenset({"demo_toggle", "demo_step"})

SPARK_HISTORY = 60
SHORT_SCREEN = 30
"""Below this many rows the event detail under the hot window keeps a few lines (app.tcss)."""

PLAN_PROCESS_MIN_EVENTS = 20_000
"""From this many events on, the cut preview is planned in a child process (see
`inspector.plan_process`); below, a plan is a few ms and runs in the plan worker's thread."""


KEY_NAMES = {
    "slash": "/",
    "question_mark": "?",
    "space": "space",
    "escape": "esc",
    "pageup": "pgup",
    "pagedown": "pgdn",
}

HELP_PLACES: tuple[tuple[str, type[Widget]], ...] = (
    ("hot window (tab 1)", HotWindow),
    ("Chunks tab (2)", ChunksView),
    ("Summary tab (3)", SummaryView),
    ("Prompt tab (4)", PromptView),
    ("Recall tab (5)", RecallView),
    ("Archive tab (6)", ArchiveView),
)
"""Where each view's own keys work, in the help screen."""


def key_display(keys: str) -> str:
    """ "R,ctrl+r" as "R / ctrl+r", "slash" as "/"."""
    return " / ".join(KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(","))


class InspectorTabs(TabbedContent):
    """TabbedContent that ignores a stale "pane got focus" report: when number keys arrive in
    a burst (typed fast, or batched over SSH), the focus given to tab 4 is reported after tab 5
    was shown, and must not switch back to tab 4."""

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        focused = self.screen.focused
        if focused is None or event.tab_pane not in focused.ancestors:
            event.prevent_default()
            event.stop()


class InspectorApp(App[int]):
    """session-inspector's TUI."""

    TITLE = "session-inspector"
    CSS_PATH = STYLESHEETS
    COMMANDS: ClassVar[set[Any]] = App.COMMANDS | {InspectorCommands}
    ENABLE_COMMAND_PALETTE = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "maintenance", "Maintain", id="maintenance"),
        Binding("c", "compact", "Compact", id="compact"),
        Binding("r", "rotate", "Rotate", id="rotate"),
        Binding("a", "append", "Append", id="append"),
        Binding("R,ctrl+r", "repair", "Repair", id="repair"),
        Binding("slash", "recall", "Recall", id="recall"),
        Binding("p", "toggle_preview", "Cut", id="cut_preview"),
        Binding("w", "what_if", "What-if", id="what_if"),
        Binding("f", "toggle_follow", "Follow", id="follow"),
        Binding("space", "demo_toggle", "Play/pause", show=False, id="demo.toggle"),
        Binding("s", "demo_step", "Step", show=False, id="demo.step"),
        Binding("b", "back_to_active", "Active session", id="back_to_active"),
        Binding("T", "timeline", "Timeline", show=False, id="timeline"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit.ctrl"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="quit.ctrl_c"),
        Binding("escape", "escape", "Back", show=False, id="escape"),
        Binding("tab", "next_tab", "Next tab", show=False, priority=True, id="tab.next"),
        Binding("shift+tab", "prev_tab", "Prev tab", show=False, priority=True, id="tab.prev"),
        *[
            Binding(str(i + 1), f"show_tab('{tab}')", title, show=False, id=f"tab.{tab}")
            for i, (tab, title) in enumerate(TABS)
        ],
    ]

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
        self.manager = self.active_manager
        self.archive_id: str | None = None
        self.hot_model = HotWindowModel(self.manager.paths.events)
        self.status = LightStatus()
        self.archives: tuple[Any, ...] = ()
        self.what_if = WhatIf()
        self.prompt_history: list[tuple[int | None, bool]] = []
        self._last_seen_prompt: tuple[int | None, str | None] | None = None
        self._last_chunk_count: int | None = None
        self.preview: CutPreview | None = None
        self.trigger: TriggerDecision | None = None
        self.real_trigger: TriggerDecision | None = None
        self.prompt_size: PromptSize | None = None
        self._jobs = Jobs()
        self._want_archives = False
        self._jump_to_cut = False
        self._stopping = threading.Event()
        self._plan_process: PlanProcess | None = PlanProcess()
        self._last_error: dict[str, str] = {}
        self._file_sizes: dict[str, int | None] = {}
        self._history_key = ""
        self._histories: dict[
            str,
            tuple[list[tuple[int | None, bool]], tuple[int | None, str | None] | None, int | None],
        ] = {}
        self._stale: set[str] = set()
        self._watcher: MemoryWatcher | None = None
        self.full_load_ms: float | None = None
        self._t0 = time.perf_counter()

    def export_screenshot(self, *, title: str | None = None, simplify: bool = False) -> str:
        """Textual's SVG screenshot, with no text run starting with blanks (rsvg drops them):
        every export (save_screenshot, snapshot tests) goes through here."""
        svg = super().export_screenshot(title=title, simplify=simplify)
        return fix_leading_blanks(svg)

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusHeader(self._header_info(), id="status")
        yield Static(
            Text(" ARCHIVED — not part of any prompt ", style="bold reverse"),
            id="archive-banner",
            markup=False,
        )
        yield BudgetGauge(id="budget")
        if self.demo is not None:
            yield DemoControls(
                self.demo, pace=self.demo_pace, autoplay=self.demo_autoplay, id="demo"
            )
        with InspectorTabs(initial="hot", id="tabs"):
            for i, (tab, title) in enumerate(TABS):
                with TabPane(f"{i + 1} {title}", id=tab):
                    yield from self._compose_tab(tab)
        yield InspectorFooter(compact=True)

    def _compose_tab(self, tab: str) -> ComposeResult:
        if tab == "hot":
            with Horizontal(id="hot-split"):
                yield HotWindow(id="hot-window")
                with Vertical(id="side"):
                    yield PlanPanel(id="plan")
                    yield EventDetail(id="detail")
        elif tab == "activity":
            yield ActivityLog(clock=self.clock, id="log")
        else:
            yield self._make_view(tab)

    def _make_view(self, tab: str) -> SessionView:
        return VIEW_WIDGETS[tab](id=f"{tab}-view")

    def on_mount(self) -> None:
        self._t0_mount = time.perf_counter()
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
        self._attach_views()
        if self.watch_files:
            self._start_watcher()
        self.request("events")
        self.request("status", archives=True)
        self._mark_views_stale(tuple(VIEW_WIDGETS))
        self._refresh_visible_view()
        self._update_size_class()
        if self.first_launch_hint:
            self.notify(FIRST_LAUNCH_HINT, title="Legend: ?", timeout=8, markup=False)

    first_launch_hint = False
    """Show the `?` legend hint at mount (run_app: the first time this user opens the TUI)."""

    def on_key(self, event: events.Key) -> None:
        """Keys typed right after a key that opens a text field (`a`, `c`, `/`) were already on
        their way through the widget focused before (Textual routes every key to the focused
        widget first and resolves bindings when it comes back up). A key that comes back up
        here while a text field has the keyboard is typed into that field through its public
        API (a character, a TextArea's enter), in order, so "text + enter" submits the text and
        nothing typed fast (tmux, SSH) is lost; any other key goes on to the bindings where
        the field is (Input's enter submits, a what-if field's down moves on)."""
        focused = self.screen.focused
        if not isinstance(focused, Input | TextArea) or (
            isinstance(focused, TextArea) and focused.read_only
        ):
            if self._type_to_search(event):
                return
            self._explain_refused_key(event.key)
            return
        text = event.character if event.is_printable else None
        if isinstance(focused, TextArea) and event.key == "enter":
            text = "\n"
        active = self.active_bindings.get(event.key)
        if text is None or (active is not None and active.binding.priority):
            return  # takes its usual way: the bindings where the field is (enter submits)
        event.prevent_default()
        event.stop()
        focused.replace(text, *focused.selection)  # typed over the selection, as the field does

    def on_resize(self, event: events.Resize) -> None:
        self._update_size_class(event.size.width, event.size.height)

    def footer_hidden(self) -> frozenset[str]:
        """Footer keys left out: the hot window's own keys on other tabs, and the least used
        ones on a narrow screen."""
        hidden: set[str] = set()
        with contextlib.suppress(NoMatches):
            active = self.query_one(TabbedContent).active
            if active != "hot":
                hidden |= FOOTER_HOT_ONLY
            if active == "recall":  # letters typed there start the search
                hidden |= FOOTER_RECALL_TYPED
        if self.size.width < NARROW_FOOTER:
            hidden |= FOOTER_WIDE_ONLY
        return frozenset(hidden)

    def _refresh_footer(self) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one(InspectorFooter).refresh(recompose=True)

    def _update_size_class(self, width: int | None = None, height: int | None = None) -> None:
        width = self.size.width if width is None else width
        height = self.size.height if height is None else height
        self.screen_stack[0].set_class(width < 160, "-narrow")
        # Small screens (app.tcss): notifications go to the top corner, over the header, not
        # over the hot window; a short one gives the event detail fewer rows.
        self.screen_stack[0].set_class(width < NARROW_FOOTER, "-small")
        self.screen_stack[0].set_class(height < SHORT_SCREEN, "-short")
        self._update_tab_labels(width)
        self._refresh_footer()

    def _update_tab_labels(self, width: int) -> None:
        labels = (
            dict(TABS) if width >= 110 else TAB_LABELS_NARROW if width >= 80 else TAB_LABELS_TINY
        )
        try:
            tabbed = self.query_one(TabbedContent)
            for i, (tab, _) in enumerate(TABS):
                label = f"{i + 1} {labels[tab]}"
                current = tabbed.get_tab(tab)
                if str(current.label) != label:
                    current.label = label
        except NoMatches:
            return

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

    # -- coalesced background jobs ----------------------------------------------------------

    def request(self, job: str, *, archives: bool = False) -> None:
        """Run a reload job in a thread worker, coalesced (see `inspector.jobs.Jobs`)."""
        if job == "status" and archives:
            self._want_archives = True
        if not self._jobs.claim(job):
            return
        if job == "events":
            self._events_worker(self.hot_model)
        elif job == "status":
            self._status_worker(self.manager)
        elif job == "plan":
            self._plan_worker(self.hot_model)

    @work(thread=True, group="events", exit_on_error=False)
    def _events_worker(self, model: HotWindowModel) -> None:
        try:
            peek = model.peek()
        except Exception:
            peek = None
        if peek is not None:
            self.post_message(EventsPolled(peek, model))
        while True:
            try:
                update = model.poll()
            except Exception as exc:
                self.post_message(ActionFinished("read events", f"{exc}", ok=False, refresh=False))
            else:
                self.post_message(EventsPolled(update, model))
            if not self._jobs.again("events"):
                return

    @work(thread=True, group="status", exit_on_error=False)
    def _status_worker(self, manager: MemoryManager) -> None:
        while True:
            archives = self._want_archives
            self._want_archives = False
            try:
                status = read_light_status(manager, include_archives=archives)
            except Exception as exc:
                self.post_message(ActionFinished("read status", f"{exc}", ok=False, refresh=False))
            else:
                self.post_message(StatusRead(status, manager))
            if not self._jobs.again("status"):
                return

    @work(thread=True, group="plan", exit_on_error=False)
    def _plan_worker(self, model: HotWindowModel) -> None:
        """Plans on the newest rows; on a big session re-plans at most every 2x its own cost
        (capped at 2 s), so a busy agent does not keep a core planning. From
        `PLAN_PROCESS_MIN_EVENTS` events on, the plan itself is worked out in a child process
        (`inspector.plan_process`): in this thread it would hold the GIL against the event
        loop for ~0.3 s a plan at 100k events."""
        while True:
            start = time.perf_counter()
            what_if = self.what_if
            try:
                config = what_if_config(
                    self.config, what_if.keep_recent_tokens, what_if.hot_window_events
                )
                snapshot = model.snapshot()
                plan = plan_now(
                    snapshot,
                    self.status,
                    self.config,
                    config,
                    what_if.prompt_tokens,
                    planner=self._planner_for(snapshot.n_events),
                    entry_extra=self._entry_extra,
                    headroom=self._headroom(config),
                )
            except PlanProcessError as exc:
                if self._stopping.is_set():
                    return
                failed, self._plan_process = self._plan_process, None
                if failed is not None:
                    failed.close()  # plan in this thread from now on
                self.post_message(
                    ActionFinished(
                        "plan", f"{exc}; planning in the app instead", ok=False, refresh=False
                    )
                )
                self._jobs.claim("plan")  # run again, here
            except Exception as exc:
                self.post_message(ActionFinished("plan", f"{exc}", ok=False, refresh=False))
            else:
                elapsed = (time.perf_counter() - start) * 1000
                self.post_message(
                    PlanMade(
                        plan.preview, plan.trigger, plan.real_trigger, model, elapsed, plan.size
                    )
                )
            if not self._jobs.again("plan"):
                return
            pause = min(2.0, 2 * (time.perf_counter() - start))
            if pause > 0.05 and self._stopping.wait(pause):
                return

    # -- applying results (UI thread) -------------------------------------------------------

    @on(EventsPolled)
    def _on_events_polled(self, message: EventsPolled) -> None:
        if message.model is not self.hot_model:
            return
        update = message.update
        try:
            hot = self.query_one(HotWindow)
        except NoMatches:  # shutting down
            return
        if (
            update.reset
            or update.appended
            or hot.loading_text is not None
            or hot.snapshot.length != update.snapshot.length
        ):
            hot.set_snapshot(update.snapshot)
        self.probe.painted(self._t0)
        if self.full_load_ms is None and not update.snapshot.partial:
            self.full_load_ms = (time.perf_counter() - self._t0) * 1000
            if update.snapshot.length:
                self.log_activity(
                    f"loaded {update.snapshot.length:,} lines of events.jsonl in "
                    f"{self.full_load_ms / 1000:.2f} s",
                    "info",
                )
        if update.snapshot.partial:
            self._update_header()
            return
        self.probe.change_applied()
        if update.reset:
            self.log_activity(
                f"events.jsonl reloaded: {update.snapshot.length} lines "
                f"({update.elapsed_ms:.0f} ms)",
                "change",
            )
        elif update.appended:
            self.log_activity(
                f"events.jsonl: +{update.appended} line{'s' if update.appended != 1 else ''} "
                f"({update.elapsed_ms:.0f} ms)",
                "change",
            )
        self._update_header()
        if update.reset or update.appended or self.preview is None:
            self.request("plan")

    @on(StatusRead)
    def _on_status_read(self, message: StatusRead) -> None:
        if message.manager is not self.manager:
            return
        status = message.status
        if status.archives is None:
            status = LightStatus(**{**status.__dict__, "archives": self.status.archives})
        for error in status.errors:
            self.show_error("status", error, repeat=False)
        prev = self.status
        self.status = status
        if prev.session_id and status.session_id and prev.session_id != status.session_id:
            # A rotation: the new session's runs start fresh (the old ones are its archive's).
            self.prompt_history = []
            self._last_chunk_count = None
        key = (status.last_prompt_tokens, status.run_started_at)
        if self._last_chunk_count is not None and status.chunk_count > self._last_chunk_count:
            self.prompt_history.append((None, True))
        if key != self._last_seen_prompt and status.last_prompt_tokens is not None:
            self.prompt_history.append((status.last_prompt_tokens, False))
        self._last_seen_prompt = key
        self._last_chunk_count = status.chunk_count
        del self.prompt_history[:-SPARK_HISTORY]
        self._update_header()
        try:
            self.query_one(PlanPanel).set_defaults(
                self.config.keep_recent_tokens,
                self.config.hot_window_events,
                status.last_prompt_tokens,
            )
        except NoMatches:  # shutting down
            return
        if (
            prev.last_prompt_tokens != status.last_prompt_tokens
            or prev.model != status.model
            or self.trigger is None
        ):
            self.request("plan")
        self._update_budget()

    @on(PlanMade)
    def _on_plan_made(self, message: PlanMade) -> None:
        if message.model is not self.hot_model:
            return
        moved = (
            self.what_if.active
            and self.preview is not None
            and message.preview.cut_row != self.preview.cut_row
        )
        self.preview = message.preview
        self.trigger = message.trigger
        self.real_trigger = message.real_trigger
        self.prompt_size = message.size
        try:
            hot = self.query_one(HotWindow)
        except NoMatches:  # shutting down
            return
        hot.set_cut_preview(message.preview)
        if (self._jump_to_cut or moved) and hot.show_cut():
            self._jump_to_cut = False
        self.query_one(PlanPanel).show(message.preview.plan, message.trigger)
        self._update_budget()

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

    @on(FilesChanged)
    def _on_files_changed(self, message: FilesChanged) -> None:
        change = message.change
        self.probe.changed(change.at)
        if message.sizes:
            for rel, now in message.sizes.items():
                before = self._file_sizes.get(rel)
                if now is None and rel.count("/") == 0:
                    continue  # a folder's own entry: its files are listed
                self.log_activity(describe_file_change(rel, before, now), "change")
                self._file_sizes[rel] = now
        else:
            self.log_activity("changed: " + ", ".join(change.paths)[:300], "change")
        views = change.views
        if views & {"events", "session"}:
            self.request("events")
        if views & {"state", "chunks", "session", "archive", "events"}:
            self.request("status", archives=bool(views & {"archive", "session"}))
        stale: set[str] = set()
        for view in views:
            stale.update(VIEWS_FOR_CHANGE.get(view, ()))
        self._mark_views_stale(tuple(stale))
        self._refresh_visible_view()

    @on(WatchError)
    def _on_watch_error(self, message: WatchError) -> None:
        self.poll = True
        self.show_error("watcher", message.text)
        self._update_header()

    def reload_all(self) -> None:
        self.request("events")
        self.request("status", archives=True)
        self._mark_views_stale(tuple(VIEW_WIDGETS))
        self._refresh_visible_view()

    # -- header / budget --------------------------------------------------------------------

    def _header_info(self) -> HeaderInfo:
        snap = self.hot_model.snapshot()
        status = self.status
        maint = "running" if self.manager.maintenance_running else "idle"
        return HeaderInfo(
            root=self.display_root,
            session_id=(status.session_id if self.archive_id is None else self.archive_id),
            model=status.model,
            context_window=self.config.window_for(status.model),
            event_count=snap.n_events,
            hot_tokens=snap.total_tokens,
            last_prompt_tokens=status.last_prompt_tokens,
            chunk_count=status.chunk_count,
            pending_count=status.pending_count,
            corrupt_lines=snap.corrupt_count + status.quarantined_lines,
            maintenance=maint,
            watch_mode=self._watch_mode(),
            read_only=self.read_only or self.archive_id is not None,
            archived=self.archive_id is not None,
            index_error=status.index_error,
            loading=self.full_load_ms is None,
            follow=self._follow(),
        )

    def _follow(self) -> bool:
        try:
            return self.query_one(HotWindow).follow
        except NoMatches:
            return False

    def _watch_mode(self) -> str:
        return "off" if not self.watch_files else "polled" if self.poll else "watched"

    def _headroom(self, config: CompactionConfig) -> Headroom | None:
        """What the cut preview needs to move its cut as a pass would (contract §5,
        Headroom): the session's calibration and summary.md's size; None for an archive."""
        state = self.status.prompt_state
        if state is None or self.archive_id is not None:
            return None
        try:
            catalog = read_catalog(self.manager.paths, write=False)
            pushed = pushed_out_summary(len(catalog), catalog.summary, config.summary_max_chunks)
        except SessionMemoryError:
            pushed = None
        summary = self.manager.store.summary_estimate()
        return headroom_for(state, config, self.status.model, summary, pushed)

    def _entry_extra(self, chunk_id: str) -> dict[str, Any] | None:
        """An index entry's extra fields (the plan names the chunk that holds a continued
        turn's request through them); None when the index cannot say."""
        try:
            return read_catalog(self.manager.paths, write=False).entry_extra(chunk_id)
        except SessionMemoryError:
            return None

    def _update_header(self) -> None:
        # A worker's result can land while the app is shutting down and its widgets are gone.
        with contextlib.suppress(NoMatches):
            self.query_one(StatusHeader).set_info(self._header_info())

    def _update_budget(self) -> None:
        trigger = self.real_trigger
        preview = self.preview
        if trigger is None:
            return
        # What will happen, in words: nothing runs until a pass does (issue 22 item 6).
        if self.manager.maintenance_running:
            verdict, will = "a pass is running now", True
        elif trigger.should_compress:
            grows = (
                preview is not None
                and preview.plan.useful
                and trigger.trigger == "tokens"
                and trigger.prompt_tokens is not None
                and preview.plan.predicted_after_tokens is not None
                and preview.plan.predicted_after_tokens >= trigger.prompt_tokens
            )
            if grows:
                verdict, will = "a pass would not commit — it would not shrink the prompt", False
            elif preview is not None and preview.plan.useful:
                verdict = f"a pass would compact now — m runs it ({preview.plan.path} path)"
                will = True
            else:
                verdict = "a pass would skip: no useful cut"
                will = False
        else:
            verdict, will = "idle: no pass needed", False
        if self.archive_id is not None:
            verdict, will = "none: an archived session is never compacted", False
        state = self.status.prompt_state
        calibration = state.calibration(trigger.context_window) if state is not None else None
        try:
            gauge = self.query_one(BudgetGauge)  # cached lookup; a query walks the whole DOM
        except NoMatches:  # shutting down
            return
        gauge.set_info(
            BudgetInfo(
                prompt_tokens=trigger.prompt_tokens,
                estimated_tokens=_estimated_part(trigger.prompt_tokens, self.prompt_size),
                window=trigger.context_window,
                reserve=trigger.reserve,
                compress_at_percent=trigger.compress_at_percent,
                will_compact=will,
                verdict=verdict,
                history=tuple(self.prompt_history),
                overhead=calibration.overhead if calibration is not None else 0,
                ratio=calibration.ratio if calibration is not None else 1.0,
                samples=calibration.samples if calibration is not None else 0,
            )
        )

    # -- views ------------------------------------------------------------------------------

    def _mark_views_stale(self, views: tuple[str, ...]) -> None:
        self._stale.update(views)

    def _view_context(self) -> ViewContext:
        return ViewContext(self.manager, self.config.window_for(self.status.model))

    def _attach_views(self) -> None:
        """Every view reads through the manager on display (active or archived session)."""
        context = self._view_context()
        for view in self.query(SessionView):
            view.attach(context)

    def _refresh_visible_view(self) -> None:
        try:
            active = self.query_one(TabbedContent).active
        except NoMatches:
            return
        if active in self._stale:
            self._stale.discard(active)
            self._reload_view(active)

    def _reload_view(self, tab: str) -> None:
        try:
            view = self.query_one(f"#{tab}-view", SessionView)
        except NoMatches:
            return
        view.attach(self._view_context())
        try:
            view.reload()
        except Exception as exc:
            self.show_error(f"{tab} view", f"{type(exc).__name__}: {exc}")

    @on(TabbedContent.TabActivated)
    def _on_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._refresh_visible_view()
        self._refresh_footer()

    @on(HotWindow.RowHighlighted)
    def _on_row_highlighted(self, message: HotWindow.RowHighlighted) -> None:
        self.query_one(EventDetail).show_row(message.row, message.snapshot)

    @on(HotWindow.FollowChanged)
    def _on_follow_changed(self, message: HotWindow.FollowChanged) -> None:
        self.refresh_bindings()
        self._update_header()

    @on(PlanPanel.WhatIfChanged)
    def _on_what_if(self, message: PlanPanel.WhatIfChanged) -> None:
        self.what_if = message.what_if
        self.request("plan")

    # -- watcher ----------------------------------------------------------------------------

    def _start_watcher(self) -> None:
        """The watcher runs until quit, so it gets its own daemon thread, not a pool worker."""

        root = self.memory_dir

        def changed(change: Change) -> None:
            self.post_message(FilesChanged(change, file_sizes(root, change.paths)))

        def failed(text: str) -> None:
            self.post_message(WatchError(text))

        self._watcher = MemoryWatcher(self.memory_dir, changed, poll=self.poll, on_error=failed)
        threading.Thread(
            target=self._watch_thread, args=(self._watcher,), name="inspector-watch", daemon=True
        ).start()

    def _watch_thread(self, watcher: MemoryWatcher) -> None:
        # Sizes before any change, so the first change of a file shows its delta too (the
        # loop reads them only after a change, posted after this).
        self._file_sizes.update(initial_sizes(self.memory_dir))
        try:
            watcher.run()
        except Exception as exc:
            self.post_message(WatchError(f"{type(exc).__name__}: {exc}"))

    def _planner_for(self, n_events: int) -> Planner | None:
        """The child process's planner for a big session (started on first use), else None."""
        if n_events < PLAN_PROCESS_MIN_EVENTS or self._plan_process is None:
            return None
        return self._plan_process.plan

    def stop_background(self) -> None:
        self._stopping.set()
        if self._plan_process is not None:
            self._plan_process.close()
        if self._watcher is not None:
            self._watcher.stop()
        with contextlib.suppress(NoMatches):
            self.query_one(DemoControls).stop()

    async def action_quit(self) -> None:
        self.stop_background()
        self.exit(0)

    def on_unmount(self) -> None:
        self.stop_background()

    # -- action gating ----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide what cannot run here: writes when read-only or viewing an archive, demo keys
        without a demo, the way back when not in an archive."""
        if action in WRITE_ACTIONS and (self.read_only or self.archive_id is not None):
            return False
        if action in DEMO_ACTIONS and (self.demo is None or self.read_only):
            return False
        return not (action == "back_to_active" and self.archive_id is None)

    def available_actions(self) -> list[ActionSpec]:
        """What the command palette lists (same gate as the footer)."""
        return [spec for spec in ACTIONS if self.check_action(spec.action, ()) is True]

    def refusal(self, action: str) -> str | None:
        """Why an action cannot run here (None: it can), in words a person can act on."""
        if action in WRITE_ACTIONS:
            if self.archive_id is not None:
                return "an archived session is read-only (b goes back to the active session)"
            if self.read_only:
                return "the inspector was started with --read-only"
        if action in DEMO_ACTIONS:
            if self.demo is None:
                return "there is no demo running (session-inspector demo starts one)"
            if self.read_only:
                return "the inspector was started with --read-only"
            controls = self.query(DemoControls)
            if controls and getattr(controls.first(), "finished", False):
                return "the demo has ended (q quits; session-inspector demo starts it again)"
        if action == "back_to_active" and self.archive_id is None:
            return "already on the active session"
        return None

    def _refuse(self, action: str) -> bool:
        why = self.refusal(action)
        if why is None and self.check_action(action, ()) is not True:
            why = "not available here"
        if why is not None:
            # Named as the palette names it, with its key ("Demo play/pause (space)"), not by
            # the action's internal id.
            spec = next((a for a in ACTIONS if a.action == action), None)
            name = f"{spec.title} ({spec.key})" if spec is not None else action
            self.log_activity(f"{name}: {why}", "info")
            self.notify(f"{name}: {why}", severity="warning", markup=False, timeout=4)
            return True
        return False

    def _type_to_search(self, event: events.Key) -> bool:
        """On the Recall tab, a printable key starts the search (the search field gets the
        keyboard and the key), letters bound elsewhere (`c`, `a`, `m`) included; the keys that
        move about (tab numbers, `?`, `q`, `/`, space) keep their bindings."""
        if self.screen is not self.screen_stack[0] or not event.is_printable:
            return False
        if event.key in RECALL_NAVIGATION_KEYS:
            return False
        try:
            if self.query_one(TabbedContent).active != "recall":
                return False
            field = self.query_one("#recall-query", Input)
        except NoMatches:
            return False
        event.prevent_default()
        event.stop()
        field.select_on_focus = False  # else the focus would select the key typed
        # Focused now, not after a refresh: the keys already on their way (a fast typist's
        # "crash⏎") go to the field, enter included.
        self.screen_stack[0].set_focus(field)
        field.insert_text_at_cursor(event.character or "")
        return True

    def _explain_refused_key(self, key: str) -> None:
        """A key of a write or demo action hidden here (read-only, archive, no demo) does
        nothing in Textual; say why instead of staying silent."""
        if self.screen is not self.screen_stack[0]:
            return
        for binding in self.BINDINGS:
            if (
                not isinstance(binding, Binding)
                or binding.action not in WRITE_ACTIONS | DEMO_ACTIONS
            ):
                continue
            if key in (k.strip() for k in binding.key.split(",")):
                if self.check_action(binding.action, ()) is not True:
                    self._refuse(binding.action)
                return

    # -- actions ----------------------------------------------------------------------------

    def _run(self, job: ActionJob[Any], detail: str = "") -> None:
        """Start an action: recorded, logged, and run by the one action worker."""
        self.probe.action(job.name)
        self.log_activity(f"{job.name}: started{detail}", "action")
        self._action_worker(job, self.manager)

    @work(thread=True, group="actions", exit_on_error=False)
    def _action_worker(self, job: ActionJob[Any], manager: MemoryManager) -> None:
        """Every write action: run it off the loop, then post what it did (or why it failed)
        for the UI thread; the manager is the one on display when the action started."""
        start = time.perf_counter()
        try:
            result = job.run(manager)
        except Exception as exc:
            self.post_message(ActionFinished(job.name, f"{exc}", ok=False))
        else:
            ms = (time.perf_counter() - start) * 1000
            self.post_message(ActionFinished(job.name, job.describe(result, ms)))

    def _confirmed(self, job: ActionJob[Any], ok: bool) -> None:
        if not ok:
            self.log_activity(f"{job.name} cancelled", "info")
            return
        self._run(job)

    def action_maintenance(self) -> None:
        if self._refuse("maintenance"):
            return
        self._run(MAINTENANCE)

    async def action_compact(self) -> None:
        if self._refuse("compact"):
            return

        uses, what_if = force_values(self.config, self.what_if)
        screen = FocusPromptScreen(uses=uses, what_if=what_if)

        def got_focus(focus: str | None) -> None:
            if focus is None:
                self.log_activity("compaction cancelled", "info")
                return
            detail = f" (focus {one_line(focus, 80)!r})" if focus else ""
            config = None
            if screen.use_what_if:
                config = what_if_config(
                    self.config, self.what_if.keep_recent_tokens, self.what_if.hot_window_events
                )
                detail += f" (what-if, once: {what_if})"
            self._run(compact_job(focus or None, config), detail)

        await self.push_screen(screen, got_focus)

    async def action_rotate(self) -> None:
        if self._refuse("rotate"):
            return
        snap = self.hot_model.snapshot()
        status = self.status
        sid = status.session_id or "(unknown id)"
        message = Text()
        message.append("Moves ")
        message.append(f"{self.display_root}/session/", style="bold")
        message.append(
            f" ({snap.n_events} events, {status.chunk_count} chunks, "
            f"{status.pending_count} pending) to "
        )
        message.append(f"{self.display_root}/session_archive/", style="bold")
        message.append(one_line(sid, 60), style="bold")
        message.append(
            "/ and starts an empty session. The archived session stays readable "
            "(Archive tab) but is no longer part of any prompt."
        )
        await self.push_screen(
            ConfirmScreen("Rotate the session?", message, confirm_label="Rotate"),
            lambda ok: self._confirmed(ROTATE, bool(ok)),
        )

    async def action_append(self) -> None:
        if self._refuse("append"):
            return

        def got_event(event: dict[str, Any] | None) -> None:
            if event is None:
                self.log_activity("append cancelled", "info")
                return
            self._run(append_job(event))

        await self.push_screen(AppendEventScreen(), got_event)

    async def action_repair(self) -> None:
        if self._refuse("repair"):
            return
        message = (
            "Finishes or undoes crashed passes, moves an unreadable index.yaml aside and "
            "rebuilds it from the chunk files, and moves corrupt lines of events.jsonl to "
            "corrupt.jsonl."
        )
        await self.push_screen(
            ConfirmScreen("Repair the session?", message, confirm_label="Repair"),
            lambda ok: self._confirmed(REPAIR, bool(ok)),
        )

    def action_recall(self) -> None:
        self.probe.action("recall")
        self.action_show_tab("recall")
        try:
            view = self.query_one("#recall-view")
        except NoMatches:
            return
        focus = getattr(view, "action_focus_search", None)
        if callable(focus):
            focus()
        else:
            inputs = view.query(Input)
            if inputs:
                inputs.first().focus()

    def action_toggle_preview(self) -> None:
        self.probe.action("toggle_preview")
        hot = self.query_one(HotWindow)
        hot.show_preview = not hot.show_preview
        panel = self.query_one("#plan", PlanPanel)
        panel.display = hot.show_preview
        if not hot.show_preview and panel.clear_what_if():
            # Closed, what-if is over: the preview is the config's cut again when reopened.
            self.notify("what-if cleared: the cut preview is the config's again", timeout=3)
        self.screen_stack[0].set_class(hot.show_preview, "-plan")
        self.action_show_tab("hot")
        self._jump_to_cut = hot.show_preview and not hot.show_cut()
        if self.preview is None:
            self.request("plan")

    def action_what_if(self) -> None:
        self.probe.action("what_if")
        self.action_show_tab("hot")
        hot = self.query_one(HotWindow)
        hot.show_preview = True
        panel = self.query_one("#plan", PlanPanel)
        panel.display = True
        self.screen_stack[0].set_class(True, "-plan")
        panel.focus_what_if()

    def action_focus_detail(self) -> None:
        """Enter on the hot window: the keyboard goes to the event's detail (to scroll a long
        event); escape comes back. On an `S` row (a split turn's synthetic event), its chunk
        opens on the Chunks tab instead."""
        hot = self.query_one(HotWindow)
        chunk_id = synthetic_chunk_id(hot.current_row, hot.snapshot)
        if chunk_id is not None:
            self.action_show_tab("chunks")
            with contextlib.suppress(NoMatches):
                self.query_one(ChunksView).select_chunk(chunk_id)
            return
        self.query_one(EventDetail).focus()

    def action_toggle_follow(self) -> None:
        self.probe.action("toggle_follow")
        hot = self.query_one(HotWindow)
        hot.follow = not hot.follow
        self.log_activity(f"follow tail {'on' if hot.follow else 'off'}", "info")
        self.notify(
            "follow on: the newest event stays in view"
            if hot.follow
            else "follow off: the cursor stays where it is",
            timeout=2,
        )
        self._update_header()

    def action_demo_toggle(self) -> None:
        if self._refuse("demo_toggle"):
            return
        self.probe.action("demo_toggle")
        self.query_one(DemoControls).toggle()

    def action_demo_step(self) -> None:
        if self._refuse("demo_step"):
            return
        self.probe.action("demo_step")
        self.query_one(DemoControls).step_once()

    @on(DemoControls.Stepped)
    def _on_demo_stepped(self, message: DemoControls.Stepped) -> None:
        self.log_activity(DemoControls.describe(message), "action")
        if message.done and (ending := ending_line(message.detail)):
            # The demo ends saying what happened and where to see it.
            self.log_activity(f"demo ended: {ending}", "ok")
            self.notify(ending, title="demo ended", markup=False, timeout=15)
        compaction = message.compaction
        if compaction is not None:
            self.log_activity(compaction, "ok")
            self.notify(compaction, title="demo", markup=False, timeout=3)
        if not self.watch_files:
            self.reload_all()

    @on(DemoControls.Failed)
    def _on_demo_failed(self, message: DemoControls.Failed) -> None:
        self.show_error("demo", message.error)

    def action_show_tab(self, tab: str) -> None:
        """Show a tab and put the keyboard in it (the hot window, Recall's search field, or
        the view's first control that is not a text field), at once: a key pressed right after
        lands in the new tab."""
        self.query_one(TabbedContent).active = tab
        if tab == "hot":
            self.screen_stack[0].set_focus(self.query_one(HotWindow))
        elif tab == "recall":
            # The results have the keyboard, so tab numbers, `?` and `q` keep working; `/`
            # or any letter typed starts the search (the field takes it from there).
            with contextlib.suppress(NoMatches):
                table = self.query_one("#recall-table")
                self.screen_stack[0].set_focus(table)
        elif not self._focus_tab(tab):
            self.call_after_refresh(self._focus_tab, tab)

    def _focus_tab(self, tab: str) -> bool:
        try:
            pane = self.query_one(f"#{tab}", TabPane)
        except NoMatches:
            return False
        focused = self.screen.focused
        if (
            focused is not None
            and pane in focused.ancestors
            and not isinstance(focused, Input | TextArea)
        ):
            return True
        for widget in pane.query("*"):
            if widget.focusable and not isinstance(widget, Input | TextArea):
                self.screen.set_focus(widget)
                return True
        return False

    def _tab_step(self, step: int) -> None:
        if self.screen is not self.screen_stack[0] or isinstance(self.focused, Input | TextArea):
            if step > 0:
                self.screen.focus_next()
            else:
                self.screen.focus_previous()
            return
        ids = [tab for tab, _ in TABS]
        active = self.query_one(TabbedContent).active
        index = ids.index(active) if active in ids else 0
        self.action_show_tab(ids[(index + step) % len(ids)])

    def action_next_tab(self) -> None:
        self._tab_step(1)

    def action_prev_tab(self) -> None:
        self._tab_step(-1)

    def action_escape(self) -> None:
        """Close the Keys panel when it is open; else back to the hot window."""
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
            return
        if self.focused is not None and not isinstance(self.focused, HotWindow):
            self.action_show_tab("hot")

    def help_keys(self) -> list[tuple[str, str, str]]:
        """(where, key, what) for every binding of the app and of each view."""
        rows: list[tuple[str, str, str]] = []
        for binding in self.BINDINGS:
            if isinstance(binding, Binding):
                rows.append(("everywhere", key_display(binding.key), binding.description))
        rows.append(("everywhere", "ctrl+p", "Command palette: every action, searchable"))
        for where, widget in HELP_PLACES:
            for binding in getattr(widget, "BINDINGS", []):
                if isinstance(binding, Binding):
                    rows.append((where, key_display(binding.key), binding.description))
        rows += [
            ("What-if panel (w)", "digits", "type a number into the focused field"),
            ("What-if panel (w)", "tab / shift+tab", "next / previous field"),
            ("What-if panel (w)", "enter", "apply; the cut line moves and comes into view"),
            ("What-if panel (w)", "esc", "back to the hot window (values stay)"),
        ]
        return rows

    def action_timeline(self) -> None:
        """Every model call and pass of the session on display (inspector/screens)."""
        from inspector.screens.timeline_screen import TimelineScreen

        if isinstance(self.screen, TimelineScreen):
            return
        self.push_screen(TimelineScreen(self._view_context(), self.display_root))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.help_keys()))

    @on(RecallView.Searched)
    def _on_recall_searched(self, message: RecallView.Searched) -> None:
        if message.error:
            self.show_error("recall", message.error)
            return
        took = f", {message.elapsed_ms:.0f} ms" if message.elapsed_ms is not None else ""
        self.log_activity(
            f"recall {one_line(message.query, 80)!r}: {message.result_count} "
            f"result{'s' if message.result_count != 1 else ''}, "
            f"{message.pending_chunks_recalled} pending{took}",
            "action",
        )

    @on(ArchiveView.OpenArchive)
    def _on_open_archive(self, message: ArchiveView.OpenArchive) -> None:
        self.open_archive(message.path, message.session_id)

    # -- archive ----------------------------------------------------------------------------

    def open_archive(self, session_dir: Path, session_id: str | None = None) -> None:
        """Show a closed session in the same views, read-only."""
        self._drop_moment()
        manager = MemoryManager(
            self.memory_dir, self.config, session_dir=Path(session_dir), read_only=True
        )
        self.archive_id = session_id or Path(session_dir).name
        self._switch_manager(manager)
        self.log_activity(f"viewing archived session {self.archive_id}", "action")

    _moment_root: Path | None = None
    """A past moment on display (the Timeline's `g`): its folder, removed on leaving it."""

    def open_moment(self, moment_root: Path, label: str) -> None:
        """Every tab as it was at a past model call, read-only (core.timeline.materialize_moment
        laid it out under `moment_root`); `b` comes back to now."""
        self._drop_moment()
        self._moment_root = moment_root
        self.archive_id = label
        self._switch_manager(MemoryManager(moment_root, self.config, read_only=True))
        self.query_one("#archive-banner", Static).update(
            Text(f" PAST — {label} · read-only · b: back to now ", style="bold reverse")
        )
        self.log_activity(f"viewing the past: {label}", "action")

    def _drop_moment(self) -> None:
        if self._moment_root is not None:
            import shutil

            parent = self._moment_root.parent  # the temporary folder made for it
            if parent.name.startswith("session-inspector-moment-"):
                shutil.rmtree(parent, ignore_errors=True)
            else:
                shutil.rmtree(self._moment_root, ignore_errors=True)
            self._moment_root = None
        self.query_one("#archive-banner", Static).update(
            Text(" ARCHIVED — not part of any prompt ", style="bold reverse")
        )

    def action_back_to_active(self) -> None:
        if self.archive_id is None:
            return
        self.archive_id = None
        self._drop_moment()
        self._switch_manager(self.active_manager)
        self.log_activity("back to the active session", "action")

    def _switch_manager(self, manager: MemoryManager) -> None:
        # Each session keeps its own runs sparkline: an archive's figures never join the
        # active session's, and going back shows the active history as it was.
        key = self._history_key
        self._histories[key] = (
            self.prompt_history,
            self._last_seen_prompt,
            self._last_chunk_count,
        )
        self._history_key = self.archive_id or ""
        self.prompt_history, self._last_seen_prompt, self._last_chunk_count = self._histories.get(
            self._history_key, ([], None, None)
        )
        self.manager = manager
        self.full_load_ms = None
        self._t0 = time.perf_counter()
        self.hot_model = HotWindowModel(manager.paths.events)
        self.preview = None
        self.trigger = None
        self.status = LightStatus()
        self.query_one("#archive-banner").display = self.archive_id is not None
        hot = self.query_one(HotWindow)
        hot.loading_text = "loading events.jsonl…"
        hot.set_cut_preview(None)
        self._attach_views()
        self.reload_all()
        self.refresh_bindings()
        self.action_show_tab("hot")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that raised despite its own handler: report, never crash."""
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.show_error(event.worker.name or "worker", f"{type(error).__name__}: {error}")


def _resolve_config(
    config: CompactionConfig | Path | str | None, memory_dir: Path | str
) -> CompactionConfig:
    if isinstance(config, CompactionConfig):
        return config
    return load_config(config, memory_dir=memory_dir).config


def create_app(
    memory_dir: Path | str,
    *,
    read_only: bool = False,
    poll: bool = False,
    config: CompactionConfig | Path | str | None = None,
    demo: DemoPlayerLike | None = None,
    watch: bool = True,
    display_root: str | None = None,
    clock: Callable[[], str] | None = None,
    demo_autoplay: bool = True,
    probe: AppProbe | None = None,
    reveal_secrets: bool = False,
) -> InspectorApp:
    """The app the CLI runs and the tests drive (`watch=False`: no watcher thread; a demo
    starts playing at once unless `demo_autoplay=False`; `probe` records what tests and the
    bench measure). Secrets in what it shows are masked unless `reveal_secrets` or the
    config's `redact_secrets: false` (inspector.safe_text.mask_secrets)."""
    resolved = _resolve_config(config, memory_dir)
    mask_secrets(resolved.redact_secrets and not reveal_secrets)
    return InspectorApp(
        memory_dir,
        read_only=read_only,
        poll=poll,
        config=resolved,
        demo=demo,
        watch=watch,
        display_root=display_root,
        clock=clock,
        demo_autoplay=demo_autoplay,
        probe=probe,
    )


def run_app(
    memory_dir: Path | str,
    *,
    read_only: bool = False,
    poll: bool = False,
    config: CompactionConfig | Path | str | None = None,
    demo: DemoPlayerLike | None = None,
    reveal_secrets: bool = False,
) -> int:
    """Run the TUI until quit; the exit status (0 after a clean quit)."""
    try:
        app = create_app(
            memory_dir,
            read_only=read_only,
            poll=poll,
            config=config,
            demo=demo,
            reveal_secrets=reveal_secrets,
        )
        app.first_launch_hint = first_launch()
    except SessionMemoryError as exc:
        import sys

        print(f"error: {one_line(str(exc), 500)}", file=sys.stderr)
        return exc.exit_code
    result = app.run()
    app.active_manager.wait_for_maintenance(timeout=app.config.lock_timeout_seconds)
    return int(result or 0)


__all__ = [
    "ACTIONS",
    "TABS",
    "VIEWS",
    "ActionSpec",
    "InspectorApp",
    "InspectorFooter",
    "create_app",
    "run_app",
]


def _estimated_part(tokens: int | None, size: PromptSize | None) -> int:
    """How much of the gauge's figure is an estimate rather than a provider's count."""
    if tokens is None or size is None or size.tokens != tokens:
        return 0
    return tokens if size.source == "estimated" else size.appended
