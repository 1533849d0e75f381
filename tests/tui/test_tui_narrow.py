"""The Chunks and Archive tables and the help screen at 80x24 (SSH) and 60x20: columns dropped
or shortened by priority instead of cut at the right edge, explanations wrapped under
themselves. Asserted on widget state (columns, widths, the help's text), not on pixels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Tabs

from inspector.tui.screens.help_screen import (
    CLOSING,
    INDENT,
    LEGEND,
    HelpScreen,
    help_text,
    wrap_words,
)
from inspector.tui.tables import CELL_PADDING, WIDE_TABLE, Column, fit_columns
from inspector.tui.views.chunks_view import ChunksView
from tests.helpers.tui import make, press, settle, text_in
from tests.helpers.tui_fixtures import build_with_archive

# Every table and the help at three sizes, ~10 s: CI runs it in its extended step.
pytestmark = pytest.mark.extended


def labels(table: DataTable[Text]) -> list[str]:
    return [str(column.label) for column in table.ordered_columns]


def assert_no_cell_cut(table: DataTable[Text]) -> None:
    """Every column is as wide as its widest cell (but a shrinkable one), and the row fits
    the table: nothing scrolls sideways."""
    row_width = sum(c.get_render_width(table) for c in table.ordered_columns)
    assert row_width <= table.scrollable_content_region.width
    assert table.virtual_size.width <= table.scrollable_content_region.width


async def table_on_tab(
    app: App[Any], pilot: Pilot[Any], key: str, table_id: str
) -> DataTable[Text]:
    """The table of the tab `key` opens, once the app and the tab have read their files."""
    await settle(app, pilot)
    await press(pilot, key)
    return app.query_one(table_id, DataTable)


# -- fit_columns (pure) ------------------------------------------------------------------------

COLS = (
    Column("id", "identifier"),
    Column("n", "number", short="n"),
    Column("note", "note", min_width=6),
    Column("extra", "extra"),
)
MOVES = (("drop", "extra"), ("short", "n"), ("drop", "note"))


def test_fit_keeps_everything_on_a_wide_table_even_when_it_scrolls() -> None:
    fitted = fit_columns(COLS, [12, 3, 40, 5], WIDE_TABLE, MOVES)
    assert fitted.indices == (0, 1, 2, 3)
    assert [w for _, _, w in fitted.columns] == [12, 6, 40, 5]


def test_fit_drops_shortens_and_shrinks_in_priority_order() -> None:
    # 12 + 6 + 40 + 5 + 4 * 2 = 71 cells. At 40 the note shrinks first and all stay.
    fitted = fit_columns(COLS, [12, 3, 40, 5], 40, MOVES)
    assert fitted.indices == (0, 1, 2, 3)
    assert [w for _, _, w in fitted.columns] == [12, 6, 9, 5]
    # At 30 the note at its least is still too wide: the extra column goes.
    fitted = fit_columns(COLS, [12, 3, 40, 5], 30, MOVES)
    assert fitted.indices == (0, 1, 2)
    assert [w for _, _, w in fitted.columns] == [12, 6, 6]
    # Narrower still: the short label, then the note goes.
    tight = fit_columns(COLS, [12, 3, 40, 5], 24, MOVES)
    assert [label for _, label, _ in tight.columns] == ["identifier", "n"]
    # Past the last move the rest stays (the table scrolls sideways): nothing unlisted goes.
    least = fit_columns(COLS, [12, 3, 40, 5], 5, MOVES)
    assert least.indices == (0, 1)


# -- the tables in the app -----------------------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_chunks_table_fits_narrow_screens(basic: Path, size: tuple[int, int]) -> None:
    app = make(basic)
    async with app.run_test(size=size) as pilot:
        table = await table_on_tab(app, pilot, "2", "#chunks-table")
        assert table.row_count == 1
        assert_no_cell_cut(table)
        shown = labels(table)
        assert shown[0] == "chunk id"
        if size[0] == 80:
            assert shown == ["chunk id", "source", "events", "split", "tok before→after", "cut"]
        else:
            assert shown[:5] == ["chunk id", "source", "events", "split", "tok b→a"]
        row = [cell.plain for cell in table.get_row_at(0)]
        assert row[0] == "chunk_0001" and "192→187" in row
        # Drawn, not only laid out: the tokens column's label and the row are on screen, and
        # so is every tab.
        drawn = text_in(app.query_one(ChunksView))
        assert shown[4] in drawn and "chunk_0001" in drawn
        if size[0] == 80:
            tabs = text_in(app.query_one(Tabs))
            assert "1 Hot" in tabs and "7 Activity" in tabs


async def test_chunks_table_keeps_every_column_when_wide_and_refits_on_resize(
    basic: Path,
) -> None:
    app = make(basic)
    async with app.run_test(size=(120, 40)) as pilot:
        table = await table_on_tab(app, pilot, "2", "#chunks-table")
        assert len(labels(table)) == 10 and labels(table)[-1] == "last id"
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        assert "last id" not in labels(table)
        assert_no_cell_cut(table)
        assert table.cursor_row == 0 and table.row_count == 1


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_archive_table_keeps_id_and_request_on_narrow_screens(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make(build_with_archive(tmp_path / "m"))
    async with app.run_test(size=size) as pilot:
        table = await table_on_tab(app, pilot, "6", "#archive-table")
        assert table.row_count == 1
        assert_no_cell_cut(table)
        shown = labels(table)
        assert shown[0] == "session id" and shown[-1] in ("first request", "request")
        assert "created" not in shown  # the id holds the date: it goes first
        row = [cell.plain for cell in table.get_row_at(0)]
        assert row[0].startswith("s-20260101T100000Z")  # the id whole
        # The request column shows its start; the table ends the rest with an ellipsis.
        request = table.ordered_columns[-1]
        assert request.get_render_width(table) - CELL_PADDING >= 12
        assert row[-1].startswith("Book a table")


async def test_archive_table_at_120_columns_is_unchanged(tmp_path: Path) -> None:
    app = make(build_with_archive(tmp_path / "m"))
    async with app.run_test(size=(120, 40)) as pilot:
        table = await table_on_tab(app, pilot, "6", "#archive-table")
        assert labels(table) == [
            "session id",
            "created",
            "size",
            "events",
            "chunks",
            "first request",
        ]


# -- help ----------------------------------------------------------------------------------------


def test_wrap_words_breaks_at_blanks_and_cuts_only_overlong_words() -> None:
    assert wrap_words("a bb ccc dddd eeeee", 8) == ["a bb ccc", "dddd", "eeeee"]
    assert wrap_words("abcdefghijkl xy", 8) == ["abcdefgh", "ijkl xy"]
    assert wrap_words("short", 40) == ["short"]


def test_help_text_continuation_lines_start_under_the_explanation() -> None:
    keys = [("everywhere", "m", "Request a coalesced background maintenance pass now, please")]
    lines = help_text(keys, 54).plain.split("\n")
    assert all(len(line) <= 54 for line in lines)
    rows = [line for line in lines if line.startswith("  ") and len(line) > INDENT]
    continued = [line for line in rows if line[:INDENT].strip() == ""]
    assert continued, "some explanation wraps at 54 cells"
    for line in continued:
        assert line[INDENT] != " "


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_help_screen_wraps_under_the_explanations(basic: Path, size: tuple[int, int]) -> None:
    app = make(basic)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        widget = app.screen.query_one("#help-text")
        width = widget.content_region.width
        text = str(widget.render())
        lines = text.split("\n")
        assert all(len(line) <= width for line in lines)
        # Every line is a title (column 0), a place (2 blanks), a sign or key row, or a
        # continuation under the explanations: no explanation falls back to column 0.
        titles = {title for title, _ in LEGEND} | {"Keys"}
        note = " ".join(line for line in lines if line and not line.startswith(" "))
        assert note.startswith(" ".join(sorted(titles, key=text.find)))
        assert note.endswith(CLOSING)
        assert "\n" + " " * INDENT + "never compacted" in text  # R's explanation, continued
