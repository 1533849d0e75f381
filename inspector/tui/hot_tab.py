"""The hot-window tab's own actions: the cut preview (`p`), the what-if fields (`w`), follow
the tail (`f`), and enter on a row (its detail, or a split turn's chunk on the Chunks tab)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from textual.css.query import NoMatches

from inspector.tui.app_part import AppPart, AppWiring
from inspector.tui.display import SessionDisplay
from inspector.tui.views.chunks_view import ChunksView
from inspector.tui.widgets.event_detail import EventDetail, synthetic_chunk_id
from inspector.tui.widgets.hot_window import HotWindow
from inspector.tui.widgets.plan_panel import PlanPanel


class HotTab(AppPart):
    """The hot-window tab's actions, for the app's bindings (see the module docstring)."""

    def __init__(
        self,
        wiring: AppWiring,
        drawing: SessionDisplay,
        *,
        show_tab: Callable[[str], None],
        request: Callable[[str], None],
    ) -> None:
        super().__init__(wiring)
        self._drawing = drawing
        self._show_tab = show_tab
        self._request = request

    def _show_plan(self, show: bool) -> tuple[HotWindow, PlanPanel]:
        app = self._app
        hot, panel = app.query_one(HotWindow), app.query_one("#plan", PlanPanel)
        hot.show_preview = panel.display = show
        app.screen_stack[0].set_class(show, "-plan")
        return hot, panel

    def toggle_preview(self) -> None:
        """`p`: the cut preview and the plan panel, on or off (off ends a what-if)."""
        self._probe.action("toggle_preview")
        hot, panel = self._show_plan(not self._app.query_one(HotWindow).show_preview)
        if not hot.show_preview and panel.clear_what_if():
            # Closed, what-if is over: the preview is the config's cut again when reopened.
            self._app.notify("what-if cleared: the cut preview is the config's again", timeout=3)
        self._show_tab("hot")
        self._drawing.jump_to_cut = hot.show_preview and not hot.show_cut()
        if self._session.preview is None:
            self._request("plan")

    def what_if(self) -> None:
        """`w`: the plan panel open with the keyboard in its what-if fields."""
        self._probe.action("what_if")
        self._show_tab("hot")
        self._show_plan(True)[1].focus_what_if()

    def focus_detail(self) -> None:
        """Enter on the hot window: the keyboard goes to the event's detail (to scroll a long
        event); escape comes back. On an `S` row (a split turn's synthetic event), its chunk
        opens on the Chunks tab instead."""
        app = self._app
        hot = app.query_one(HotWindow)
        chunk_id = synthetic_chunk_id(hot.current_row, hot.snapshot)
        if chunk_id is None:
            app.query_one(EventDetail).focus()
            return
        self._show_tab("chunks")
        with contextlib.suppress(NoMatches):
            app.query_one(ChunksView).select_chunk(chunk_id)

    def toggle_follow(self) -> None:
        """`f`: the newest event kept in view, or the cursor left where it is."""
        self._probe.action("toggle_follow")
        hot = self._app.query_one(HotWindow)
        hot.follow = not hot.follow
        self._log(f"follow tail {'on' if hot.follow else 'off'}", "info")
        what = "the newest event stays in view" if hot.follow else "the cursor stays where it is"
        self._app.notify(f"follow {'on' if hot.follow else 'off'}: {what}", timeout=2)
        self._drawing.update_header()
