"""Child process for the TUI benchmarks (a fresh process each, so memory is the TUI's own).

    python -m bench.tui_child paint MEMORY_DIR NEWEST_ID
    python -m bench.tui_child live MEMORY_DIR SAMPLES
    python -m bench.tui_child lag MEMORY_DIR RATE SECONDS

The app is `inspector.tui.launch.create_app(...)` run headless (`App.run_test`) with the real
watcher.
"On screen" means the hot window rendered the line of the row holding the event:
`HotWindow.render_line` is wrapped to notice it (a bench-only patch; the widget is unchanged).
Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

from bench.common import ROOT, percentile, python_env, rss_mb

T_PROCESS = time.perf_counter()

from inspector.tui.launch import create_app  # noqa: E402
from inspector.tui.widgets.hot_window import HotWindow  # noqa: E402

SIZE = (160, 48)


class Seen:
    """Which watched ids the hot window has drawn, and when (time.monotonic)."""

    def __init__(self) -> None:
        self.wanted: dict[str, asyncio.Event] = {}
        self.at: dict[str, float] = {}

    def want(self, event_id: str) -> asyncio.Event:
        flag = self.wanted[event_id] = asyncio.Event()
        return flag

    def install(self) -> None:
        original = HotWindow.render_line
        seen = self

        def render_line(widget: HotWindow, y: int) -> Any:
            strip = original(widget, y)
            if seen.wanted and y > 0:
                snap = widget.snapshot
                line = round(widget.scroll_y) + y - 1
                if 0 <= line < snap.length:
                    flag = seen.wanted.get(snap.rows[line].event_id)
                    if flag is not None and not flag.is_set():
                        seen.at[snap.rows[line].event_id] = time.monotonic()
                        flag.set()
            return strip

        HotWindow.render_line = render_line  # type: ignore[method-assign]


def newest_id(root: str) -> str:
    """The id of the last event in events.jsonl (what a first frame must show)."""
    with open(f"{root}/session/events.jsonl", "rb") as fh:
        fh.seek(max(0, fh.seek(0, 2) - 65536))
        last = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    return str(json.loads(last)["id"])


@contextlib.asynccontextmanager
async def running(root: str, notes: list[str]) -> AsyncIterator[Any]:
    """The app, headless; an exception the app raises while shutting down is noted, not fatal
    (the figures were taken before)."""
    app = create_app(root, read_only=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            yield pilot
    except Exception as exc:
        if not notes or not notes[-1].startswith("measured"):
            raise
        notes.append(f"app raised on shutdown: {type(exc).__name__}: {exc}")


def rss_status() -> dict[str, float]:
    out: dict[str, float] = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024.0
    return out


async def paint(root: str, newest: str) -> dict[str, Any]:
    seen = Seen()
    seen.install()
    flag = seen.want(newest)
    notes: list[str] = []
    start = time.perf_counter()
    async with running(root, notes):
        await asyncio.wait_for(flag.wait(), timeout=60)
        first_paint = time.perf_counter() - start
        await asyncio.sleep(1.0)
        mem = rss_status()
        notes.append("measured")
    return {
        "notes": notes[1:],
        "first_paint_s": first_paint,
        "since_process_start_s": time.perf_counter()
        - T_PROCESS
        - (time.perf_counter() - start)
        + first_paint,
        "rss_mb": mem.get("VmRSS", rss_mb()),
        "hwm_mb": mem.get("VmHWM"),
    }


def _appender(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.tui_appender", *args],
        cwd=ROOT,
        env=python_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


async def live(root: str, samples: int) -> dict[str, Any]:
    seen = Seen()
    seen.install()
    child = _appender(["one", root])
    assert child.stdin is not None and child.stdout is not None
    latencies: list[float] = []
    notes: list[str] = []
    first = seen.want(newest_id(root))
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("appender did not start")
        async with running(root, notes):
            await asyncio.wait_for(first.wait(), timeout=60)
            warm = seen.want("warm-0")
            child.stdin.write("warm-0\n")
            child.stdin.flush()
            await asyncio.to_thread(child.stdout.readline)
            await asyncio.wait_for(warm.wait(), timeout=60)
            for i in range(samples):
                await asyncio.sleep(0.05 + (i % 7) * 0.013)
                event_id = f"live-{i:04d}"
                flag = seen.want(event_id)
                child.stdin.write(event_id + "\n")
                child.stdin.flush()
                started = float(await asyncio.to_thread(child.stdout.readline))
                await asyncio.wait_for(flag.wait(), timeout=30)
                latencies.append(seen.at[event_id] - started)
                del seen.wanted[event_id]
            notes.append("measured")
    finally:
        child.kill()
        child.wait()
    return {"latencies_s": latencies, "notes": notes[1:]}


async def lag(root: str, rate: float, seconds: float) -> dict[str, Any]:
    seen = Seen()
    seen.install()
    lags: list[float] = []
    notes: list[str] = []
    first = seen.want(newest_id(root))
    async with running(root, notes):
        await asyncio.wait_for(first.wait(), timeout=60)
        await asyncio.sleep(0.5)
        last_id = f"burst-{int(rate * seconds) - 1:07d}"
        last = seen.want(last_id)
        child = _appender(["burst", root, str(rate), str(seconds)])
        assert child.stdout is not None
        try:
            if child.stdout.readline().strip() != "ready":
                raise RuntimeError("appender did not start")
            stop = time.monotonic() + seconds
            while time.monotonic() < stop:
                t = time.monotonic()
                await asyncio.sleep(0.02)
                lags.append(max(0.0, time.monotonic() - t - 0.02))
            done = await asyncio.to_thread(child.stdout.readline)
            appended = json.loads(done)
            t_end = time.monotonic()
            await asyncio.wait_for(last.wait(), timeout=60)
            caught_up = seen.at[last_id] - t_end
            notes.append("measured")
        finally:
            child.kill()
            child.wait()
    return {
        "lags_s": lags,
        "appended": appended,
        "caught_up_after_s": caught_up,
        "notes": notes[1:],
    }


def main() -> None:
    mode, root = sys.argv[1], sys.argv[2]
    if mode == "paint":
        result = asyncio.run(paint(root, sys.argv[3]))
    elif mode == "live":
        result = asyncio.run(live(root, int(sys.argv[3])))
    elif mode == "lag":
        result = asyncio.run(lag(root, float(sys.argv[3]), float(sys.argv[4])))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()


__all__ = ["percentile"]
