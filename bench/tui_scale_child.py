"""Child process for the TUI's scale figures (issue 14): a long-lived root, 10k chunks in the
active session and 100 archived sessions.

    python -m bench.tui_scale_child MEMORY_DIR NEWEST_ID

The real app (`inspector.tui.launch.create_app`, read-only, headless at 160x48) with the real
watcher:
- first paint: `create_app(...)` to the first frame drawing the hot window's newest row;
- Chunks tab: `action_show_tab("chunks")` to the first frame drawing a row line of the chunks
  table with rows in it; likewise the Archive tab (each tab opened once, after first paint and
  a settle of 0.5 s so the start-up workers are done).
"On screen" is noticed by wrapping `render_line` of HotWindow and of the two tables (a
bench-only patch; the widgets are unchanged). Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from textual.widgets import DataTable

from bench.tui_child import SIZE, Seen
from inspector.tui.launch import create_app


class TableSeen:
    """The first time a table with rows draws a line below its header, per table id."""

    def __init__(self) -> None:
        self.flags: dict[str, asyncio.Event] = {}
        self.at: dict[str, float] = {}

    def install(self) -> None:
        original = DataTable.render_line
        seen = self

        def render_line(widget: DataTable[Any], y: int) -> Any:
            strip = original(widget, y)
            flag = seen.flags.get(widget.id or "")
            if flag is not None and not flag.is_set() and y > 0 and widget.row_count > 0:
                seen.at[widget.id or ""] = time.perf_counter()
                flag.set()
            return strip

        DataTable.render_line = render_line  # type: ignore[method-assign,assignment]

    def want(self, table_id: str) -> asyncio.Event:
        flag = self.flags[table_id] = asyncio.Event()
        return flag


def expected(app: Any, tab: str) -> int:
    """Rows the tab will hold once filled: the chunk index's entries (read apart from the
    app), or the archived sessions."""
    from core.index.reader import read_index_shared
    from inspector.tui.archive_list import list_archives_light

    manager = app.manager
    if tab == "chunks":
        return len(read_index_shared(manager.paths).entries)
    return len(list_archives_light(manager))


async def measure(root: str, newest: str) -> dict[str, Any]:
    seen = Seen()
    seen.install()
    tables = TableSeen()
    tables.install()
    first = seen.want(newest)
    start = time.perf_counter()
    app = create_app(root, read_only=True)
    out: dict[str, Any] = {}
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(first.wait(), timeout=120)
        out["first_paint_s"] = time.perf_counter() - start
        await asyncio.sleep(0.5)
        for tab, table in (("chunks", "chunks-table"), ("archive", "archive-table")):
            flag = tables.want(table)
            t0 = time.perf_counter()
            app.action_show_tab(tab)
            await asyncio.wait_for(flag.wait(), timeout=120)
            out[f"{tab}_tab_ms"] = (tables.at[table] - t0) * 1000
            out[f"{tab}_first_rows"] = app.query_one(f"#{table}", DataTable).row_count
            # The whole table (the Chunks tab fills a first page, then the rest in batches).
            want = expected(app, tab)
            deadline = time.perf_counter() + 120
            while time.perf_counter() < deadline:
                if app.query_one(f"#{table}", DataTable).row_count >= want:
                    break
                await asyncio.sleep(0.02)
            out[f"{tab}_all_rows_ms"] = (time.perf_counter() - t0) * 1000
            out[f"{tab}_rows"] = app.query_one(f"#{table}", DataTable).row_count
            await pilot.pause()
            await asyncio.sleep(0.3)
    return out


def main() -> None:
    print(json.dumps(asyncio.run(measure(sys.argv[1], sys.argv[2]))))


if __name__ == "__main__":
    main()
