"""Smaller widgets at the sizes people use: the status header at 80 columns, and the full app at
80x24 with nothing cut off."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.tui.views.chunks_view import ChunkRow, cut_meta_detail, cut_meta_summary
from inspector.tui.widgets.budget_gauge import BudgetGauge, BudgetInfo, render_budget
from inspector.tui.widgets.footer import InspectorFooter
from inspector.tui.widgets.status_header import HeaderInfo, StatusHeader, render_header
from tests.helpers.tui import footer_keys, press, started, widget_lines
from tests.helpers.tui_fixtures import FIXED_SESSION, build_basic

DEMO_LIKE = HeaderInfo(
    root="/tmp/session-inspector-demo-vacixcsf/memory",
    session_id="s-20261129T192416Z-5a4c3b",
    model="qwen2.5-7b-instruct",
    context_window=6000,
    event_count=1234,
    hot_tokens=12_345,
    last_prompt_tokens=4_608,
    chunk_count=7,
    pending_count=1,
    corrupt_lines=0,
    maintenance="running",
    watch_mode="watched",
)


@pytest.mark.parametrize("width", [78, 118, 158])
def test_header_fits_its_width_and_keeps_every_field(width: int) -> None:
    text = render_header(DEMO_LIKE, width).plain
    line1, line2 = text.split("\n")
    assert len(line1) <= width and len(line2) <= width
    assert "…" not in line2
    assert "s-20261129T192416Z-5a4c3b" in line1  # the session id is never cut at these sizes
    assert "qwen2.5" in line1 and "memory" in line1
    for value in ("1,234", "12", "4,608", "7", "pend", "running", "watched"):
        assert value in line2
    if width >= 118:
        assert " │ session " in line1 and "-vacixcsf/memory" in line1
        assert "events 1,234 │ hot 12,345 │ prompt 4,608" in line2


def test_header_fields_are_separated() -> None:
    line1 = render_header(HeaderInfo(root="m", session_id=FIXED_SESSION), 200).plain.split("\n")[0]
    assert line1.startswith(f"root m │ session {FIXED_SESSION} │ model (default)")


@pytest.mark.extended  # 3-5 s: keeps the README's pytest -q near 3 minutes
async def test_80x24_nothing_cut_on_any_tab(tmp_path: Path) -> None:
    """Header, budget gauge and footer fit 80 columns on every tab; the footer leaves out the
    least used keys (ctrl+p lists them all) rather than cutting the last ones off."""
    root = build_basic(tmp_path / "m")
    async with started(root, size=(80, 24)) as (app, pilot):
        for tab in "1234567":
            await press(pilot, tab)
            lines = [
                *widget_lines(app.query_one(StatusHeader)),
                *widget_lines(app.query_one(BudgetGauge)),
            ]
            assert FIXED_SESSION in lines[0] and "demo-model" in lines[0]
            assert "off" in lines[1] and "idle" in lines[1]
            assert "3,300 / 4,000" in lines[2] and "a pass would compact now" in lines[3]
            for line in lines[:4]:
                assert "…" not in line, (tab, line)
            footer = " ".join(footer_keys(app))
            entries = [w for w in app.query_one(InspectorFooter).children if w.region.area > 0]
            assert max(w.region.right for w in entries) <= 80, (tab, footer)  # none cut off
            assert "Quit" in footer and footer.endswith("^p palette"), (tab, footer)
            if tab == "5":  # letters start a search here: the footer leaves their keys out
                assert "Search" in footer and "Compact" not in footer, footer
                await press(pilot, "slash")  # the field's keys while it has the keyboard
                footer = " ".join(footer_keys(app))
                assert "enter search" in footer and "esc results" in footer, footer
                await press(pilot, "escape")
                continue
            keys = footer.replace("▏", "")
            assert "Maintain" in keys and "Compact" in keys and "Append" in keys
            assert ("Cut" in keys) == (tab == "1")  # the hot window's keys on its own tab


@pytest.mark.parametrize("width", [60, 78, 118])
def test_budget_gauge_fits_its_width(width: int) -> None:
    info = BudgetInfo(
        prompt_tokens=3300,
        window=4000,
        reserve=600,
        compress_at_percent=80,
        will_compact=True,
        verdict="a pass would compact now — m runs it (token path)",
        history=((1000, False), (None, True), (3300, False)),
    )
    head, bar = render_budget(info, width).split("\n")
    assert head.cell_len <= width and bar.cell_len <= width
    assert "a pass would compact now" in bar.plain
    assert bar.plain.index("]") - 1 >= min(24, width - 40)  # the bar itself stays readable
    assert ("(token path)" in bar.plain) == (width >= 118)  # dropped first when narrow
    assert ("m runs it" in bar.plain) == (width >= 78)  # then what follows the dash
    assert ("  runs " in bar.plain) == (width >= 78)  # the sparkline


@pytest.mark.parametrize("width", [60, 80, 120])
def test_budget_gauge_bar_keeps_its_width_when_the_verdict_changes(width: int) -> None:
    """Issue 22 item 6: the bar and the sparkline stay put whatever the verdict says."""
    verdicts = (
        "idle: no pass needed",
        "a pass would compact now — m runs it (token path)",
        "a pass is running now",
        "none: an archived session is never compacted",
    )
    history = ((1000, False), (None, True), (3300, False))
    bars = [
        render_budget(
            BudgetInfo(prompt_tokens=3300, window=4000, reserve=600, verdict=v, history=history),
            width,
        ).split("\n")[1]
        for v in verdicts
    ]
    assert len({b.plain.index("]") for b in bars}) == 1
    assert len({b.plain.rfind(" runs ") for b in bars}) == 1
    assert all(b.cell_len <= width for b in bars)


def test_budget_gauge_shows_the_calibration_once_learned() -> None:
    learned = BudgetInfo(prompt_tokens=3300, window=40000, overhead=26000, ratio=2.0, samples=3)
    assert "cal. 26,000 + 2.00×" in render_budget(learned, 120).plain
    unlearned = BudgetInfo(prompt_tokens=3300, window=40000, overhead=0, ratio=1.0, samples=1)
    assert "cal." not in render_budget(unlearned, 120).plain
    assert render_budget(learned, 60).split("\n")[0].cell_len <= 60


@pytest.mark.parametrize("width", [60, 118])
def test_budget_gauge_draws_the_estimated_part_apart_from_the_recorded(width: int) -> None:
    recorded_only = BudgetInfo(prompt_tokens=2000, window=4000, reserve=600)
    mixed = BudgetInfo(prompt_tokens=2000, estimated_tokens=1000, window=4000, reserve=600)
    all_estimated = BudgetInfo(prompt_tokens=2000, estimated_tokens=2000, window=4000, reserve=600)
    bar_of = {
        name: render_budget(info, width).split("\n")
        for name, info in (("rec", recorded_only), ("mix", mixed), ("est", all_estimated))
    }
    rec_bar, mix_bar, est_bar = (bar_of[k][1].plain for k in ("rec", "mix", "est"))
    assert "▓" not in rec_bar and "█" in rec_bar
    assert "█" in mix_bar and "▓" in mix_bar
    assert mix_bar.count("█") + mix_bar.count("▓") == rec_bar.count("█")
    assert mix_bar.index("█") < mix_bar.index("▓"), "the recorded part first"
    assert "█" not in est_bar and "▓" in est_bar
    assert "est." in bar_of["mix"][0].plain and "est." not in bar_of["rec"][0].plain
    for head, bar in bar_of.values():
        assert head.cell_len <= width and bar.cell_len <= width


def test_cut_meta_in_words_for_the_table_and_in_full_for_the_detail() -> None:
    meta = {
        "first_kept_event_id": "ev_9262a59491024e0c8112",
        "tokens_before": 3400,
        "kept_tokens_estimate": 1200,
        "is_split_turn": True,
        "turn_start_event_id": "ev_0002",
        "note": "[@click=app.quit]x[/]",
    }
    assert cut_meta_summary(meta, "token") == "token · from ev_9262a…"
    assert cut_meta_summary(None) == "" and cut_meta_summary({}, "count") == "count"
    row = ChunkRow(
        chunk_id="chunk_0007",
        source="active",
        event_count=87,
        first_event_id="ev_0001",
        last_event_id="ev_0087",
        created_at="2026-01-01T11:00:00Z",
        is_split_turn=True,
        summary_backend="extractive",
        cut_meta=meta,
        summary="",
        extra={"path": "token"},
    )
    detail = cut_meta_detail(row).plain
    for expected in (
        "token path · split turn",
        "turn start  ev_0002",
        "first kept  ev_9262a59491024e0c8112",  # in full here
        "3,400 before → 1,200 kept",
        "events      87",
        "first event ev_0001",
        "last event  ev_0087",
        "backend     extractive",
        "created     2026-01-01 11:00:00",
        "[@click=app.quit]x[/]",  # unknown fields shown, literally
    ):
        assert expected in detail, (expected, detail)


def test_widget_messages_are_dataclasses_with_textual_handler_names() -> None:
    """The app's and the widgets' own handlers are found by name (`on_demo_controls_stepped`)
    or by `@on(...)`: a dataclass message keeps the name Textual derives from its nesting, and
    bubbles up to the app."""
    import dataclasses

    from textual.message import Message

    from inspector.tui.views.archive_view import ArchiveView
    from inspector.tui.views.chunks_view import ChunksView
    from inspector.tui.views.prompt_view import PromptView
    from inspector.tui.views.recall_view import RecallView
    from inspector.tui.views.summary_view import SummaryView
    from inspector.tui.widgets.demo_controls import DemoControls
    from inspector.tui.widgets.hot_window import HotWindow
    from inspector.tui.widgets.plan_panel import PlanPanel
    from inspector.tui.widgets.text_document import TextDocument

    widgets = [
        ArchiveView,
        ChunksView,
        DemoControls,
        HotWindow,
        PlanPanel,
        PromptView,
        RecallView,
        SummaryView,
        TextDocument,
    ]
    found: dict[str, type[Message]] = {}
    for widget in widgets:
        for name, value in vars(widget).items():
            if isinstance(value, type) and issubclass(value, Message):
                found[f"{widget.__name__}.{name}"] = value
    assert len(found) == 20, sorted(found)
    for qualname, message in found.items():
        assert message.bubble and "__init__" in vars(message), qualname
        assert dataclasses.is_dataclass(message), qualname
    assert HotWindow.RowHighlighted.handler_name == "on_hot_window_row_highlighted"
    assert DemoControls.Stepped.handler_name == "on_demo_controls_stepped"
    assert ArchiveView.OpenArchive.handler_name == "on_archive_view_open_archive"
    stepped = DemoControls.Stepped(3, "a step", 1.5, done=True)
    assert (stepped.number, stepped.done, stepped.detail, stepped.kind) == (3, True, {}, None)
    with pytest.raises(TypeError):
        DemoControls.Stepped(3, "a step", 1.5, True)  # type: ignore[call-arg]  # done: keyword-only
    assert ArchiveView._Loaded([], "unreadable").requests == {}
