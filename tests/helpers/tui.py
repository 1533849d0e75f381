"""Driving the inspector under Textual's Pilot: the app factory, waiting for its workers, typing
in bursts, and reading what a widget shows. Shared by every TUI test module.

State is asserted on widgets (their data, `widget_text`); `screen_text` (the SVG export read
back as text) is for tests about the look: what fits on a line at a given terminal size.
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.cells import cell_len
from textual import events
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import DataTable, Static

from inspector.tui.app import InspectorApp
from inspector.tui.launch import create_app
from inspector.tui.stylesheets import STYLESHEETS
from tests.helpers.tui_fixtures import CONFIG

if TYPE_CHECKING:
    from core.manager import MemoryManager
    from inspector.tui.views.session_view import SessionView

SIZE = (120, 40)
"""The terminal size the tests use unless a test is about another size."""


def make(root: Path, **kw: Any) -> InspectorApp:
    """The inspector on `root` as the tests see it: the small test config, no file watcher, a
    fixed clock and display root (so text and snapshots do not depend on when or where)."""
    kw.setdefault("watch", False)
    kw.setdefault("config", CONFIG)
    kw.setdefault("display_root", "m")
    kw.setdefault("clock", lambda: "12:00:00")
    app = create_app(root, **kw)
    # Pilot waits for every animation to end after each key (a tab switch slides its underline
    # for ~0.4 s): with none, each state is the end state at once, and the suite runs faster.
    app.animation_level = "none"
    return app


def events_on_disk(root: Path) -> list[dict[str, object]]:
    """The active session's events as written in `root/session/events.jsonl` (what the hot
    window must show), read without the inspector's code."""
    lines = (root / "session" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


async def settle(app: App[Any], pilot: Pilot[Any]) -> None:
    """Let every worker finish and the messages they post be handled (the file watcher, which
    runs until quit, excepted). A handled message may start another worker, so this goes on
    until a round starts and ends with none running (two rounds at least, six at most)."""
    for round_no in range(6):
        workers = [w for w in app.workers if w.group != "watch"]
        if workers:
            await app.workers.wait_for_complete(workers)
        await pilot.pause()
        if round_no >= 1 and not workers and not [w for w in app.workers if w.group != "watch"]:
            return


@asynccontextmanager
async def started(
    root: Path, *, size: tuple[int, int] = (80, 24), **kw: Any
) -> AsyncIterator[tuple[InspectorApp, Pilot[Any]]]:
    """The inspector on `root` (`make(root, **kw)`) running under Pilot at `size`, its first
    reads settled before the test looks."""
    app = make(root, **kw)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        yield app, pilot


async def press(pilot: Pilot[Any], *keys: str) -> None:
    """`keys` pressed one by one, then whatever they started settled (`settle`)."""
    await pilot.press(*keys)
    await settle(pilot.app, pilot)


class ViewHost(App[None]):
    """One widget alone, styled as the inspector styles it and without animations (as `make`),
    so a view's test needs no whole inspector. `sentinel_calls` counts calls of the action
    `app.sentinel`, the one hostile text names: a test asserts it stays 0."""

    CSS_PATH = STYLESHEETS

    def __init__(self, view: Widget | None = None) -> None:
        super().__init__()
        self.animation_level = "none"
        self.view = view
        self.sentinel_calls = 0

    def compose(self) -> ComposeResult:
        if self.view is not None:
            yield self.view

    def action_sentinel(self) -> None:
        self.sentinel_calls += 1


H = TypeVar("H", bound=ViewHost)


@asynccontextmanager
async def loaded(
    view: SessionView,
    manager: MemoryManager,
    size: tuple[int, int] = (80, 24),
    host: Callable[[Widget], H] = ViewHost,  # type: ignore[assignment]
) -> AsyncIterator[tuple[H, Pilot[None]]]:
    """`view` hosted alone (in `host`) and read from `manager` as the app reads it: `reload()`,
    then its workers and the messages they post awaited, before the test looks."""
    view.manager = manager
    app = host(view)
    async with app.run_test(size=size) as pilot:
        view.reload()
        await settle(app, pilot)
        yield app, pilot


def cells(table: DataTable[Any], row: int) -> list[str]:
    """Row `row` of `table` as plain strings (styled cells as their text)."""
    return [getattr(c, "plain", str(c)) for c in table.get_row_at(row)]


def static_text(widget: Static) -> str:
    """What a Static holds, as text (its markup never parsed: views give it Text)."""
    return str(widget.render())


async def until(
    pilot: Pilot[Any], cond: Callable[[], bool], timeout: float = 15.0, what: str = "condition"
) -> None:
    """Wait for another process's doing (a file written, a demo step, a poll of the ledger) with
    a deadline that only fails the test when it never happens; `what` and the activity log's
    tail (where the app has one) go into the failure."""
    from inspector.tui.widgets.activity_log import ActivityLog

    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            logs = pilot.app.query(ActivityLog)
            log = logs.first().lines_written[-8:] if logs else []
            raise AssertionError(f"{what} not met before the deadline; activity: {log}")
        await pilot.pause(0.02)


async def burst(pilot: Pilot[Any], keys: str | list[str]) -> None:
    """Keys sent in one go, as a fast typist or tmux delivers them: no waiting in between for
    the app to handle the previous key (Pilot.press waits after each)."""
    app = pilot.app
    driver = app._driver
    assert driver is not None
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        driver.send_message(event)
    await pilot.pause()


def widget_lines(widget: Widget) -> list[str]:
    """What `widget` draws in its own region now (border and padding included), one string a
    line, trailing blanks cut: its children are not included."""
    width, height = widget.outer_size
    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, width, height))]


def widget_text(widget: Widget) -> str:
    """`widget_lines` joined by newlines."""
    return "\n".join(widget_lines(widget))


def text_in(node: Widget) -> str:
    """What `node` and each of its descendants on screen draw (a screen, a view, a panel),
    widget by widget in DOM order: the text a person can read there, without the layout.
    Widgets not on screen (another tab, display off) have an empty region and add nothing."""
    shown = [node, *(w for w in node.query("*") if w.region.area > 0)]
    return "\n".join(text for w in shown if (text := widget_text(w).strip("\n")))


def footer_keys(app: App[Any]) -> list[str]:
    """The footer's entries shown now, left to right, each as drawn ("m Maintain")."""
    from textual.widgets import Footer

    footer = app.query_one(Footer)
    keys = sorted((w for w in footer.children if w.region.area > 0), key=lambda w: w.region.x)
    return [widget_text(w).strip() for w in keys]


def screen_text(app: App[Any]) -> str:
    """The whole screen as plain text, read back from the SVG export (12.2 px a cell, Rich's
    export cell width): for tests about the look (what fits at a size), not about state."""
    svg = app.export_screenshot()
    rows: dict[float, list[tuple[float, str]]] = {}
    pattern = r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>'
    for m in re.finditer(pattern, svg):
        rows.setdefault(float(m.group(2)), []).append((float(m.group(1)), m.group(3)))
    lines = []
    for _, runs in sorted(rows.items()):
        line = ""
        for x, run in sorted(runs):
            column = round(x / 12.2)  # blank runs are not exported: pad up to the run's column
            if cell_len(line) < column:
                line += " " * (column - cell_len(line))
            line += html.unescape(run).replace("\xa0", " ")
        lines.append(line.rstrip())
    return "\n".join(lines)
