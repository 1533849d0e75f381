"""The app's layout: the tabs and what each holds, their labels at each width, the size
classes app.tcss styles on, and which footer keys a screen leaves out."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import TabbedContent, TabPane

from inspector.tui.views.archive_view import ArchiveView
from inspector.tui.views.chunks_view import ChunksView
from inspector.tui.views.prompt_view import PromptView
from inspector.tui.views.recall_view import FOOTER_RECALL_TYPED, RecallView
from inspector.tui.views.session_view import SessionView
from inspector.tui.views.summary_view import SummaryView
from inspector.tui.views.timeline_view import TimelineView
from inspector.tui.widgets.activity_log import ActivityLog
from inspector.tui.widgets.event_detail import EventDetail
from inspector.tui.widgets.footer import (
    FOOTER_HOT_ONLY,
    FOOTER_WIDE_ONLY,
    NARROW_FOOTER,
    InspectorFooter,
)
from inspector.tui.widgets.hot_window import HotWindow
from inspector.tui.widgets.plan_panel import PlanPanel

TABS: tuple[tuple[str, str], ...] = (
    ("hot", "Hot window"),
    ("chunks", "Chunks"),
    ("summary", "Summary"),
    ("prompt", "Prompt"),
    ("recall", "Recall"),
    ("archive", "Archive"),
    ("activity", "Activity"),
    ("timeline", "Timeline"),
)

TAB_LABELS_NARROW: dict[str, str] = {
    "hot": "Hot",
    "chunks": "Chunks",
    "summary": "Summary",
    "prompt": "Prompt",
    "recall": "Recall",
    "archive": "Archive",
    "activity": "Activity",
    "timeline": "Time",
}
TAB_LABELS_TINY: dict[str, str] = {
    "hot": "Hot",
    "chunks": "Chnk",
    "summary": "Sum",
    "prompt": "Prm",
    "recall": "Rcl",
    "archive": "Arch",
    "activity": "Act",
    "timeline": "Time",
}
"""Tab labels below 110 and below 80 columns: every tab stays on screen with its number."""

VIEW_WIDGETS: dict[str, type[SessionView]] = {
    "chunks": ChunksView,
    "summary": SummaryView,
    "prompt": PromptView,
    "recall": RecallView,
    "archive": ArchiveView,
    "timeline": TimelineView,
}
"""Tab id -> the view: a SessionView the app attaches the session on display to."""

VIEWS_FOR_CHANGE: dict[str, tuple[str, ...]] = {
    "events": ("prompt",),
    "state": ("prompt",),
    "summary": ("summary", "prompt"),
    "chunks": ("chunks", "recall"),
    "archive": ("archive",),
    "session": ("chunks", "summary", "prompt", "recall", "archive", "timeline"),
}
"""A change the watcher reports -> the views whose data it makes stale."""

SHORT_SCREEN = 30
"""Below this many rows the event detail under the hot window keeps a few lines (app.tcss)."""


class InspectorTabs(TabbedContent):
    """TabbedContent that ignores a stale "pane got focus" report: when number keys arrive in
    a burst (typed fast, or batched over SSH), the focus given to tab 4 is reported after tab 5
    was shown, and must not switch back to tab 4."""

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        focused = self.screen.focused
        if focused is None or event.tab_pane not in focused.ancestors:
            event.prevent_default()
            event.stop()


def compose_tabs(clock: Callable[[], str] | None) -> ComposeResult:
    """The tabs, numbered, each with its view (the hot window with the plan panel and the
    event detail beside it; the activity log)."""
    with InspectorTabs(initial="hot", id="tabs"):
        for i, (tab, title) in enumerate(TABS):
            with TabPane(f"{i + 1} {title}", id=tab):
                if tab == "hot":
                    with Horizontal(id="hot-split"):
                        yield HotWindow(id="hot-window")
                        with Vertical(id="side"):
                            yield PlanPanel(id="plan")
                            yield EventDetail(id="detail")
                elif tab == "activity":
                    yield ActivityLog(clock=clock, id="log")
                else:
                    yield VIEW_WIDGETS[tab](id=f"{tab}-view")


def footer_hidden(app: App[Any]) -> frozenset[str]:
    """Footer keys left out: the hot window's own keys on other tabs, and the least used ones
    on a narrow screen."""
    hidden: set[str] = set()
    with contextlib.suppress(NoMatches):
        active = app.query_one(TabbedContent).active
        if active != "hot":
            hidden |= FOOTER_HOT_ONLY
        if active == "recall":  # letters typed there start the search
            hidden |= FOOTER_RECALL_TYPED
    if app.size.width < NARROW_FOOTER:
        hidden |= FOOTER_WIDE_ONLY
    return frozenset(hidden)


def refresh_footer(app: App[Any]) -> None:
    with contextlib.suppress(NoMatches):
        app.query_one(InspectorFooter).refresh(recompose=True)


def update_size_class(app: App[Any], width: int | None = None, height: int | None = None) -> None:
    """The screen's size classes (app.tcss), the tab labels for the width, the footer."""
    width = app.size.width if width is None else width
    height = app.size.height if height is None else height
    screen = app.screen_stack[0]
    screen.set_class(width < 160, "-narrow")
    # Small screens (app.tcss): notifications go to the top corner, over the header, not
    # over the hot window; a short one gives the event detail fewer rows.
    screen.set_class(width < NARROW_FOOTER, "-small")
    screen.set_class(height < SHORT_SCREEN, "-short")
    _update_tab_labels(app, width)
    refresh_footer(app)


def _update_tab_labels(app: App[Any], width: int) -> None:
    labels = dict(TABS) if width >= 110 else TAB_LABELS_NARROW if width >= 80 else TAB_LABELS_TINY
    try:
        tabbed = app.query_one(TabbedContent)
        for i, (tab, _) in enumerate(TABS):
            label = f"{i + 1} {labels[tab]}"
            current = tabbed.get_tab(tab)
            if str(current.label) != label:
                current.label = label
    except NoMatches:
        return
