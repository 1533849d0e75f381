"""The hot-window list: every column lines up in every row state, at 80 and 120 columns, with
wide (CJK) text; the pinned root and the synthetic split-turn event are marked.

Lines are read back from `HotWindow.render_line` (what the terminal gets) and split into
terminal cells (a CJK character takes two), so a column that drifts by one cell fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from core.events import is_synthetic
from core.manager import MemoryManager
from inspector.tui.hot_window_model import HotWindowModel
from inspector.tui.widgets.hot_window import (
    CLASS_LABEL,
    HotWindow,
    columns_for,
)
from tests.helpers.tui import press, started
from tests.helpers.tui_fixtures import CONFIG, build_split_first, ev

CJK = "把下载文件夹里超过一个月的安装包都删掉，然后告诉我释放了多少空间。" * 4


def _split_root_with_everything(root: Path) -> Path:
    """build_split_first, plus ambient context pulled in by the next cut, a CJK user input and
    a corrupt line: every row state the list can show."""
    build_split_first(root)
    manager = MemoryManager(root, CONFIG)
    manager.append_many(
        [
            ev(20, "screen_context", "screen: files app, 9.1 GB free"),
            ev(21, "user_input", CJK),
            ev(22, "assistant_output", "好的，正在查找旧的安装包。"),
            ev(23, "备忘", "记下：每月清理一次。"),  # wide text in a middle column
        ]
    )
    manager.close()
    with (root / "session" / "events.jsonl").open("ab") as fh:
        fh.write(b'{"broken": [@click=app.quit] \n')
    return root


def _cells(text: str) -> list[str]:
    """One entry per terminal cell: a wide character, then "" for its second cell."""
    out: list[str] = []
    for ch in text:
        out.append(ch)
        if cell_len(ch) == 2:
            out.append("")
    return out


@pytest.mark.parametrize("width", [80, 120])
async def test_every_row_lines_up_in_every_state(tmp_path: Path, width: int) -> None:
    root = _split_root_with_everything(tmp_path / "m")
    async with started(root, size=(width, 50)) as (app, pilot):
        await press(pilot, "p")  # cut preview: compacted rows dimmed, pulled-in context, cut line
        hot = app.query_one(HotWindow)
        await press(pilot, "home", "down", "down")  # the cursor on a compacted row
        snap = hot.snapshot
        preview = hot._active_preview()
        assert preview is not None and preview.plan.pulled_in is not None
        region = hot.scrollable_content_region
        assert region.height - 1 >= hot.line_count()  # every line on screen at once
        cols = columns_for(region.width, max(3, len(str(snap.length - 1))))
        starts, at = {}, 0
        for col in cols:
            starts[col.key] = at
            at += col.width + 1
        header = _cells(hot.render_line(0).text)
        for col in cols:
            title = "".join(header[starts[col.key] : starts[col.key] + col.width]).strip()
            assert title == col.title, (col.key, title)

        seen: set[str] = set()
        for y in range(1, hot.line_count() + 1):
            line = hot.render_line(y).text
            assert cell_len(line) == region.width, repr(line)
            index = hot.line_to_row(round(hot.scroll_y) + y - 1)
            if index is None:
                assert "✂ cut" in line
                seen.add("cut line")
                continue
            row = snap.rows[index]
            cells = _cells(line)

            def cell(key: str, cells: list[str] = cells, line: str = line) -> str:
                col = next(c for c in cols if c.key == key)
                start = starts[key]
                if start:
                    assert cells[start - 1] == " ", (key, line)  # the separator is in place
                return "".join(cells[start : start + col.width])

            assert cell("index").strip() == str(row.index)
            assert cell("index").endswith(str(row.index))  # right-aligned
            if row.corrupt:
                assert cell("id").startswith("line")
                assert cell("type").startswith("(corrupt)")
                seen.add("corrupt")
            else:
                assert row.event_id.startswith(cell("id").rstrip(" …")), (cell("id"), line)
                assert row.type.startswith(cell("type").rstrip(" …"))
                assert cell("class").strip() == CLASS_LABEL[row.cut]  # type: ignore[index]
            assert cell("tokens").strip() == str(row.tokens)
            assert cell("tokens").endswith(str(row.tokens))
            cum = str(snap.cumulative_from_newest(row.index))
            assert cell("cum").strip() == cum and cell("cum").endswith(cum)
            if "time" in starts and not row.corrupt:
                assert re.fullmatch(r"\d\d:\d\d:\d\d", cell("time")), line
            mark = cell("mark")
            if index == snap.root_row:
                assert mark[0] == "R" and cell("preview").startswith("root · ")
                seen.add("root")
            if row.synthetic:
                assert mark[0] == "S" and cell("preview").startswith("split turn · ")
                seen.add("synthetic")
            if preview.is_compacted(row):
                assert mark[1] == "×"
                seen.add("compacted")
            if preview.is_pulled_in(row):
                assert mark[1] == "+"
                seen.add("pulled in")
            if index == hot.cursor:
                seen.add("cursor")
            if row.preview.startswith(CJK[:4]):
                seen.add("cjk")
        assert seen == {
            "cut line",
            "corrupt",
            "root",
            "synthetic",
            "compacted",
            "pulled in",
            "cursor",
            "cjk",
        }


def test_first_compaction_split_turn_puts_the_synthetic_event_after_the_pinned_root(
    tmp_path: Path,
) -> None:
    root = build_split_first(tmp_path / "m")
    model = HotWindowModel(root / "session" / "events.jsonl")
    snap = model.poll().snapshot
    rows = list(snap.rows)
    assert snap.root_row == 0 and rows[0].type == "user_input" and not rows[0].synthetic
    assert rows[1].synthetic and is_synthetic(snap.read_event(rows[1]) or {})
    assert rows[1].type == "system_event"
    assert [r.index for r in rows if r.synthetic] == [1]
    assert "Also clear the camera cache" in rows[1].preview  # the turn's own request


async def test_root_and_synthetic_marks_on_screen_and_in_the_detail(tmp_path: Path) -> None:
    root = build_split_first(tmp_path / "m")
    async with started(root, size=(80, 24)) as (app, pilot):
        await press(pilot, "home")
        hot = app.query_one(HotWindow)
        first, second = hot.render_line(1).text, hot.render_line(2).text
        assert first.startswith("R ") and "root · Tidy" in first
        assert second.startswith("S ") and "split turn · " in second
        detail = str(app.query_one("#detail-body").render())
        assert "pinned root" in detail
        await press(pilot, "down")
        detail = str(app.query_one("#detail-body").render())
        assert "synthetic split-turn" in detail


def _reachable_text_sizes(root: object) -> int:
    """The longest str/bytes reachable from `root` through containers and instances."""
    import gc
    import types

    seen: set[int] = set()
    stack = [root]
    longest = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type | types.ModuleType | types.FunctionType):
            continue
        seen.add(id(obj))
        if isinstance(obj, str | bytes | bytearray):
            longest = max(longest, len(obj))
            continue
        stack.extend(gc.get_referents(obj))
    return longest


def test_the_model_keeps_no_event_bodies_and_reads_a_5mb_event_on_demand(tmp_path: Path) -> None:
    import json

    big = "x" * (5 * 1024 * 1024)
    lines = [
        {"id": "a", "type": "user_input", "role": "user", "content": "hi", "ts": "t1"},
        {"id": "b", "type": "tool_result", "role": "tool", "content": big, "ts": "t2"},
        {"id": "c", "type": "assistant_output", "role": "assistant", "content": "done"},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    model = HotWindowModel(path)
    snap = model.poll().snapshot  # the 5 MB line is longer than one load piece
    rows = list(snap.rows)
    assert [r.event_id for r in rows] == ["a", "b", "c"]
    assert not hasattr(rows[1], "event") and not hasattr(rows[1], "content")
    assert len(rows[1].preview) <= 160 and rows[1].ts == "t2"
    assert _reachable_text_sizes(model) < 10_000  # no event body is kept after loading
    full = snap.read_event(rows[1])
    assert full is not None and full["content"] == big
    assert snap.event_list()[1] == {"id": "b", "type": "tool_result", "role": "tool"}


def test_a_rewritten_line_is_not_shown_as_the_old_event(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"id":"a","type":"user_input","content":"old"}\n', encoding="utf-8")
    model = HotWindowModel(path)
    snap = model.poll().snapshot
    path.write_text('{"id":"z","type":"user_input","content":"new"}\n', encoding="utf-8")
    assert snap.read_event(snap.rows[0]) is None
    assert "changed" in snap.rows[0].preview
    assert [r.event_id for r in model.poll().snapshot.rows] == ["z"]


def test_snapshot_never_counts_a_half_added_row(tmp_path: Path) -> None:
    """The loader thread appends while the UI thread snapshots: a row whose line is recorded
    but whose other fields are not yet written must not be counted (it crashed the header
    with IndexError under 1,000 appends a second)."""
    from inspector.tui.hot_window_model import _Lists, _snapshot

    ls = _Lists()
    ls.add_event(1, 0, 10, {"id": "a", "type": "user_input"}, 5)
    ls._add_line(2, 10, 10, 7, ls.n_events)  # the first half of add_event, as a race sees it
    snap = _snapshot(tmp_path / "events.jsonl", ls, 0)
    assert snap.length == 1 and snap.n_events == 1
    assert snap.total_tokens == 5
    assert snap.event_list() == [{"id": "a", "type": "user_input", "role": None}]
