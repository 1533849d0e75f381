"""Child process of the Summary-tab benchmarks (issue 13: the tab froze the whole TUI).

    python -m bench.tui_summary_child render MEMORY_DIR REPEATS
    python -m bench.tui_summary_child keys MEMORY_DIR SECONDS
    python -m bench.tui_summary_child passes MEMORY_DIR SECONDS   # the "other process"

render: the app runs headless with the real watcher on the Summary tab; a 1 MB summary.md
(a unique marker in its first line) replaces the old one by `os.replace`; the time from that
replace to the frame that draws the marker's row. Each repeat writes a new file.

keys: the app on the Summary tab, focus in the document, while another process appends events
and runs forced passes (each rewrites summary.md, which grows); a key ("down"/"up") is posted
every 50 ms and its latency is the time from posting to its action running.

A key is posted to the app as the terminal driver posts it (`App.post_message(Key)`).

Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from textual import events

from bench.common import ROOT, python_env
from core.config import CompactionConfig
from core.manager import MemoryManager
from inspector.tui.launch import create_app
from inspector.tui.views.summary_view import SummaryView
from inspector.tui.widgets.text_document import TextDocument

SIZE = (120, 40)
HEADER = "# Session History (compressed chunks)\n\n## Rolling Summary\n\n"
LINE = "  Progress: edited src/pkg/module_{0}.py, ran `pytest -q tests/test_{0}.py` → 3 failed\n"


def big_summary(marker: str, size: int = 1_000_000) -> str:
    """A summary.md of `size` characters shaped like the real one (many Recent Chunks)."""
    parts = [HEADER, f"[{marker}] first rolling line\n\n## Recent Chunks\n\n"]
    total = sum(map(len, parts))
    i = 0
    while total < size:
        entry = f"- **chunk_{i:04d}**\n  Request: fix test {i}\n" + LINE.format(i) * 10 + "\n"
        parts.append(entry)
        total += len(entry)
        i += 1
    return "".join(parts)


def prepare_root(root: str) -> None:
    manager = MemoryManager(root, CompactionConfig())
    manager.store.ensure_session()
    manager.begin_run("start the benchmark session")
    manager.commit_run("ready")
    manager.close()


class Drawn:
    """When the summary document first drew a row containing a wanted marker."""

    def __init__(self) -> None:
        self.marker: str | None = None
        self.flag = asyncio.Event()
        self.at = 0.0

    def install(self) -> None:
        original = TextDocument.render_line
        drawn = self

        def render_line(widget: TextDocument, y: int) -> Any:
            strip = original(widget, y)
            if drawn.marker is not None and not drawn.flag.is_set() and drawn.marker in strip.text:
                drawn.at = time.monotonic()
                drawn.flag.set()
            return strip

        TextDocument.render_line = render_line  # type: ignore[method-assign]


@contextlib.asynccontextmanager
async def on_summary_tab(root: str, notes: list[str]) -> AsyncIterator[Any]:
    """The app headless on the Summary tab; an exception the app raises while shutting down
    (after the figures were taken: "measured" noted) is noted, not fatal."""
    app = create_app(root, read_only=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            view = app.query_one(SummaryView)
            deadline = time.monotonic() + 30
            while view.document.rows == 0 and time.monotonic() < deadline:
                await pilot.pause(0.02)
            view.document.focus()
            yield pilot
    except Exception as exc:
        if "measured" not in notes:
            raise
        notes.append(f"app raised on shutdown: {type(exc).__name__}: {exc}")


async def render(root: str, repeats: int) -> dict[str, Any]:
    prepare_root(root)
    summary = Path(root) / "session" / "summary.md"
    drawn = Drawn()
    drawn.install()
    times: list[float] = []
    notes: list[str] = []
    async with on_summary_tab(root, notes):
        for i in range(repeats):
            marker = f"bench-marker-{i:03d}"
            text = big_summary(marker)
            tmp = summary.with_suffix(".bench.tmp")
            tmp.write_text(text, encoding="utf-8")
            drawn.marker, drawn.flag = marker, asyncio.Event()
            start = time.monotonic()
            os.replace(tmp, summary)
            await asyncio.wait_for(drawn.flag.wait(), timeout=60)
            times.append(drawn.at - start)
            await asyncio.sleep(0.2)
        notes.append("measured")
    return {"render_s": times, "bytes": len(text.encode()), "notes": notes[1:]}


async def keys(root: str, seconds: float) -> dict[str, Any]:
    prepare_root(root)
    pressed: dict[int, float] = {}
    latencies: list[float] = []
    original_down = TextDocument.action_scroll_down
    original_up = TextDocument.action_scroll_up

    def note() -> None:
        if pressed:
            key = min(pressed)
            latencies.append(time.monotonic() - pressed.pop(key))

    def down(widget: TextDocument) -> None:
        note()
        original_down(widget)

    def up(widget: TextDocument) -> None:
        note()
        original_up(widget)

    TextDocument.action_scroll_down = down  # type: ignore[method-assign]
    TextDocument.action_scroll_up = up  # type: ignore[method-assign]
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.tui_summary_child", "passes", root, str(seconds)],
        cwd=ROOT,
        env=python_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    notes: list[str] = []
    try:
        async with on_summary_tab(root, notes) as pilot:
            app = pilot.app
            await asyncio.to_thread(child.stdout.readline)  # "ready"
            stop = time.monotonic() + seconds
            n = 0
            while time.monotonic() < stop:
                pressed[n] = time.monotonic()
                key = "down" if n % 2 == 0 else "up"
                app.post_message(events.Key(key, None))
                n += 1
                await asyncio.sleep(0.05)
            passes = json.loads(await asyncio.to_thread(child.stdout.readline))
            view = app.query_one(SummaryView)
            shown_rows = view.document.rows
            notes.append("measured")
    finally:
        child.kill()
        child.wait()
    return {
        "latencies_s": latencies,
        "posted": n,
        "passes": passes,
        "rows": shown_rows,
        "notes": notes[1:],
    }


PASS_EVERY_S = 0.25


def passes(root: str, seconds: float) -> None:
    """Append a run of 30 events and force a pass, every PASS_EVERY_S, for `seconds` (as an
    agent running flat out and a user's `compact --force` would, several passes a second)."""
    config = CompactionConfig(summary_max_chunks=10)
    manager = MemoryManager(root, config)
    print("ready", flush=True)
    stop = time.monotonic() + seconds
    count = 0
    i = 0
    while time.monotonic() < stop:
        manager.begin_run(f"request {i}: fix the failing test in module_{i}.py")
        for j in range(14):
            call_id = f"c{i}_{j}"
            manager.append(
                {
                    "type": "tool_call",
                    "role": "assistant",
                    "name": "edit",
                    "tool_call_id": call_id,
                    "arguments": {"path": f"src/pkg/module_{i}_{j}.py", "old": "a", "new": "b"},
                }
            )
            manager.append(
                {
                    "type": "tool_result",
                    "role": "tool",
                    "name": "edit",
                    "tool_call_id": call_id,
                    "content": f"edited src/pkg/module_{i}_{j}.py " + "ok " * 60,
                }
            )
        manager.commit_run(f"fixed module_{i}")
        result = manager.save(force=True)
        count += int(bool(result.compacted))
        i += 1
        time.sleep(PASS_EVERY_S)
    manager.close()
    print(json.dumps({"passes": count, "runs": i}), flush=True)


def main() -> None:
    mode, root = sys.argv[1], sys.argv[2]
    if mode == "passes":
        passes(root, float(sys.argv[3]))
        return
    if mode == "render":
        result = asyncio.run(render(root, int(sys.argv[3])))
    elif mode == "keys":
        result = asyncio.run(keys(root, float(sys.argv[3])))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
