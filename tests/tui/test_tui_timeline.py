"""The Timeline view (inspector/tui/views/timeline_view.py) under Pilot: the chart of prompt
sizes from the prompt ledger, the cursor through calls and passes, a call's prompt rebuilt, a
pass's before → after and summary.md diff, and rows appended while it is open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static
from textual_plotext import PlotextPlot

from core.manager import MemoryManager
from core.store.ledger import ledger_path
from inspector.tui.views.timeline_view import TimelineView, bucket, summary_diff
from tests.helpers.memory import fill, small_config
from tests.helpers.tui import ViewHost, loaded, press, settle, started, static_text, until

# Whole-app Pilot runs of a few seconds each: the extended step (docs/TESTING.md).
pytestmark = pytest.mark.extended

SIZES = [(60, 20), (80, 24), (120, 40)]


def fixed_fill(mm: MemoryManager, n: int) -> None:
    """One turn as tests.helpers.memory.fill makes it, with fixed event ids and times."""

    def ts(k: int) -> str:
        return f"2026-12-01T11:{n:02d}:{k:02d}.000Z"

    mm.begin_run(
        f"turn {n}: open the camera app and record the error code E{n}", id=f"t{n}-u", ts=ts(0)
    )
    mm.append(
        {
            "id": f"t{n}-c",
            "ts": ts(1),
            "type": "tool_call",
            "name": "shell",
            "tool_call_id": f"k{n}",
            "arguments": {"n": n},
        }
    )
    mm.append(
        {
            "id": f"t{n}-r",
            "ts": ts(2),
            "type": "tool_result",
            "name": "shell",
            "tool_call_id": f"k{n}",
            "content": f"E{n}",
        }
    )
    mm.append(
        {"id": f"t{n}-a", "ts": ts(3), "type": "assistant_output", "content": f"recorded E{n}"}
    )


def session(root: Path, turns: int = 6) -> MemoryManager:
    mm = MemoryManager(root, small_config())
    for t in range(turns):
        fixed_fill(mm, t)
        mm.build_prompt("You are a camera agent.", f"task {t // 3}")
        if t >= 3:
            mm.record_prompt_tokens(200_000)
        mm.save()
    mm.build_prompt("You are a camera agent.", "task after")
    return mm


def row_text(view: TimelineView) -> str:
    return static_text(view.query_one("#timeline-row", Static))


def detail_text(view: TimelineView) -> str:
    return static_text(view.query_one("#timeline-detail", Static))


def test_bucket_keeps_the_largest_of_each_bucket() -> None:
    xs = list(range(1, 1001))
    ys = [x % 97 for x in xs]
    bx, by = bucket(xs, ys, 50)
    assert len(bx) <= 100 and max(by) == 96 and bx == sorted(bx)
    assert bucket([1, 2], [5, 6], 50) == ([1, 2], [5, 6])


def test_summary_diff_is_escaped() -> None:
    diff = summary_diff("a\n[red]x[/red]\n", "a\n\x1b[31mb\n")
    assert "[red]x[/red]" in diff.plain and "\x1b" not in diff.plain
    assert "did not change" in summary_diff("same", "same").plain


async def test_cursor_walks_calls_and_passes(tmp_path: Path) -> None:
    mm = session(tmp_path / "m")
    view = TimelineView()
    async with loaded(view, mm, size=(120, 40)) as (_app, pilot):
        timeline = view.timeline
        assert timeline is not None and timeline.calls == 7 and timeline.passes >= 3
        assert view.cursor == len(timeline.rows) - 1  # the newest row
        assert row_text(view).startswith("call 7 of 7")
        assert "rebuilt exactly" in detail_text(view)
        assert "You are a camera agent." in detail_text(view)
        view.focus()
        await press(pilot, "N")  # the previous pass
        here = timeline.rows[view.cursor]
        assert here["kind"] == "pass" and row_text(view).startswith("pass chunk_")
        assert "summarizer" in detail_text(view) and "+++ summary.md after" in detail_text(view)
        assert "dropped:" in dropped_text(view)
        await press(pilot, "left")
        assert timeline.rows[view.cursor]["kind"] == "call"
        await press(pilot, "home")
        assert view.cursor == 0 and row_text(view).startswith("call 1 of 7")
        await press(pilot, "n")
        assert timeline.rows[view.cursor]["kind"] == "pass"
        assert view.query_one(PlotextPlot).region.area > 0


async def test_a_live_session_keeps_appending(tmp_path: Path) -> None:
    mm = session(tmp_path / "m", turns=3)
    view = TimelineView()
    async with loaded(view, mm) as (app, pilot):
        assert view.timeline is not None and view.timeline.calls == 4
        fill(mm, 1, start=10)
        mm.build_prompt("You are a camera agent.", "more")
        # the ledger is polled once a second
        await until(pilot, lambda: view.timeline.calls == 5, 10, "the timeline catching up")
        await settle(app, pilot)
        assert row_text(view).startswith("call 5 of 5")  # the cursor followed the newest


async def test_event_text_is_never_markup(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    mm.begin_run("[bold red]boom[/] \x1b[2J [@click=app.sentinel]x[/]")
    mm.build_prompt("sys", "task")
    view = TimelineView()
    async with loaded(view, mm, host=ViewHost) as (app, pilot):
        shown = detail_text(view)
        assert "[bold red]boom[/]" in shown and "\x1b" not in shown
        await pilot.click("#timeline-detail")
        assert app.sentinel_calls == 0


async def test_no_ledger_yet_says_so(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    fill(mm, 1)
    view = TimelineView()
    async with loaded(view, mm):
        assert "no model call recorded yet" in row_text(view)


def fixed_session(root: Path) -> MemoryManager:
    """A session whose ledger times, call ids and synthetic event ids are fixed (snapshots
    show them)."""
    from itertools import count
    from unittest import mock

    numbers = count(1)
    with (
        mock.patch("core.compaction.commit_plan.new_event_id", lambda: f"syn{next(numbers)}"),
        mock.patch("core.compaction.commit_plan.now_ts", lambda: "2026-12-01T11:59:00.000Z"),
    ):
        mm = session(root)
    path = ledger_path(mm.paths)
    lines = []
    for k, raw in enumerate(path.read_text(encoding="utf-8").splitlines()):
        obj = json.loads(raw)
        obj["at"] = f"2026-12-01T12:00:{k:02d}.000Z"
        if obj["kind"] == "call":
            obj["id"] = f"c{k:012d}"
        if obj["kind"] == "measured":
            obj["call"] = f"c{k - 1:012d}"
        if obj["kind"] == "pass":
            obj["duration_ms"] = 10.0
        lines.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return mm


@pytest.mark.extended
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("where", ["call", "pass"])
def test_timeline_snapshot(  # type: ignore[no-untyped-def]
    snap_compare, tmp_path: Path, size: tuple[int, int], where: str
):
    mm = fixed_session(tmp_path / "m")
    view = TimelineView(id="timeline")
    view.manager = mm

    async def run_before(pilot: Pilot[None]) -> None:
        view.reload()
        await settle(pilot.app, pilot)
        view.focus()
        if where == "pass":
            await pilot.press("N")
        await settle(pilot.app, pilot)

    assert snap_compare(ViewHost(view), terminal_size=size, run_before=run_before)


def dropped_text(view: TimelineView) -> str:
    return static_text(view.query_one("#timeline-dropped", Static))


@pytest.mark.parametrize("key", ["8", "T"])
async def test_the_timeline_tab_shows_the_session_on_display(tmp_path: Path, key: str) -> None:
    from textual.widgets import TabbedContent

    root = tmp_path / "m"
    session(root)
    async with started(root, size=(80, 24)) as (app, pilot):
        await press(pilot, key)
        assert app.query_one(TabbedContent).active == "timeline"
        view = app.query_one(TimelineView)
        assert app.focused is view
        assert view.timeline is not None and view.timeline.calls == 7
        assert str(app.query_one(TabbedContent).get_tab("timeline").label) == "8 Time"
        await press(pilot, "N")
        assert row_text(view).startswith("pass chunk_")
        await press(pilot, "1", "8")  # away and back: the cursor stays where it was
        assert row_text(view).startswith("pass chunk_")
        await press(pilot, "escape")
        assert app.query_one(TabbedContent).active == "hot"


async def test_a_live_session_keeps_appending_to_the_tab(tmp_path: Path) -> None:
    root = tmp_path / "m"
    mm = session(root, turns=3)
    async with started(root, size=(120, 40)) as (app, pilot):
        await press(pilot, "8")
        view = app.query_one(TimelineView)
        assert view.timeline is not None and view.timeline.calls == 4
        mm.build_prompt("You are a camera agent.", "more")
        # the ledger is polled once a second
        await until(pilot, lambda: view.timeline.calls == 5, 10, "the tab catching up")
        await settle(app, pilot)
        assert row_text(view).startswith("call 5 of 5")


def dropping_session(root: Path) -> MemoryManager:
    """Turns with more facts (paths, durations) than a summary carries: the passes drop some."""
    mm = MemoryManager(root, small_config())
    for n in range(6):
        mm.begin_run(f"turn {n}: fix the upload in src/app/upload_{n}.py")
        mm.append(
            {"type": "tool_call", "name": "shell", "tool_call_id": f"k{n}", "arguments": {"n": n}}
        )
        listing = "".join(f"src/mod{n}/file_{i}.py: 1{i}0 ms\n" for i in range(40))
        mm.append(
            {
                "type": "tool_result",
                "name": "shell",
                "tool_call_id": f"k{n}",
                "content": listing + f"FAILED test_{n}.py - TimeoutError: took {2500 + n} ms\n",
            }
        )
        mm.append({"type": "assistant_output", "content": f"retries after {250 + n} ms."})
        mm.build_prompt("sys", "t")
        mm.save()
    mm.build_prompt("sys", "t")
    return mm


async def test_r_recalls_the_events_that_hold_a_dropped_fact(tmp_path: Path) -> None:
    from textual.widgets import Input, TabbedContent

    from inspector.tui.views.recall_view import RecallView

    root = tmp_path / "m"
    dropping_session(root)
    async with started(root, size=(120, 40)) as (app, pilot):
        await press(pilot, "8")
        view = app.query_one(TimelineView)
        await press(pilot, "r")  # on a call: nothing dropped to recall, and no rotation
        assert app.query_one(TabbedContent).active == "timeline"
        assert app.session.archive_id is None and app.manager.paths.session.exists()
        await press(pilot, "home", "n")  # the first pass
        assert view.facts, "the pass dropped nothing: the test needs a dropped fact"
        assert "▶" in dropped_text(view)
        await press(pilot, "down")
        fact = view.selected_fact()
        assert fact is not None and fact.event_ids
        assert view.fact_cursor == min(1, len(view.facts) - 1)
        await press(pilot, "r")
        assert app.query_one(TabbedContent).active == "recall"
        assert app.query_one("#recall-query", Input).value == fact.text
        recall = app.query_one(RecallView)
        await until(pilot, lambda: recall._query == fact.text, 10, "the recall finishing")
        found = {str(e.get("id")) for hit in recall._hits for e in hit.events}
        assert found & set(fact.event_ids)
        assert any("held by" in str(n.message) for n in app._notifications)


async def test_the_palette_lists_the_timeline_actions(tmp_path: Path) -> None:
    root = tmp_path / "m"
    session(root)
    async with started(root, size=(120, 40)) as (app, pilot):
        specs = {spec.action: spec for spec in app.available_actions()}
        assert {"timeline", "timeline_go", "timeline_recall"} <= set(specs)
        assert specs["timeline_recall"].key == "r" and specs["timeline_recall"].help
        await app.run_action("timeline")
        await settle(app, pilot)
        assert app.query_one(TimelineView).timeline is not None


async def test_g_takes_every_tab_back_to_that_moment_and_b_comes_back(tmp_path: Path) -> None:
    root = tmp_path / "m"
    mm = session(root)
    async with started(root, size=(120, 40)) as (app, pilot):
        await press(pilot, "8")
        view = app.query_one(TimelineView)
        assert view.timeline is not None
        await press(pilot, "home", "right", "right")  # call 3
        number = view.moment_call()
        assert number is not None
        from core.timeline import build_timeline

        full = build_timeline(mm.paths, mm.config)
        row = next(r for r in full.rows if r.get("call") == number)
        await pilot.press("g")
        await until(pilot, lambda: app.archive_id is not None, 15, "the moment opening")
        await settle(app, pilot)
        assert f"call {number} at" in (app.archive_id or "")
        past = app.manager
        moment_root = past.paths.root
        assert moment_root != root and past.read_only
        assert len(past.hot_events()) == row["hot_events"]
        assert past.status().chunk_count == row["chunks"]
        banner = static_text(app.query_one("#archive-banner", Static))
        assert banner.strip().startswith("PAST —") and "read-only" in banner
        await press(pilot, "8")  # the tab shows the past session; b still comes back
        await press(pilot, "b")
        assert app.archive_id is None and app.manager is app.active_manager
        assert not moment_root.exists()
        assert mm.paths.session.exists()


@pytest.mark.extended
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_time_travel_snapshot(snap_compare, tmp_path: Path, size: tuple[int, int]):  # type: ignore[no-untyped-def]
    from inspector.tui.widgets.hot_window import HotWindow
    from tests.helpers.tui import make

    root = tmp_path / "m"
    fixed_session(root)

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        await settle(app, pilot)
        await press(pilot, "T")
        await pilot.press("end", "g")
        await until(
            pilot,
            lambda: app.archive_id is not None and app.full_load_ms is not None,
            30,
            "the moment opening",
        )
        await settle(app, pilot)
        app.query_one(HotWindow).styles.scrollbar_size_vertical = 0
        await pilot.pause(0.2)
        await settle(app, pilot)

    assert snap_compare(make(root), terminal_size=size, run_before=run_before)


@pytest.mark.extended
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_timeline_tab_snapshot(snap_compare, tmp_path: Path, size: tuple[int, int]):  # type: ignore[no-untyped-def]
    """The Timeline as the 8th tab of the app, on a pass with its dropped facts."""
    from tests.helpers.tui import make
    from tests.helpers.tui_fixtures import _fix_session

    root = tmp_path / "m"
    _fix_session(fixed_session(root))

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        await settle(app, pilot)
        await press(pilot, "8")
        await press(pilot, "N")

    assert snap_compare(make(root), terminal_size=size, run_before=run_before)
