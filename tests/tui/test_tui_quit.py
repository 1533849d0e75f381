"""Issue 12 item 1: the TUI quits on q and on ctrl+c whatever a worker is stuck on (a FIFO
planted as a store file used to block a worker, and quitting waited for it forever)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.reliability import REPO, closed_seeded_root

STUCK_APP = """
import asyncio, sys, threading
import inspector.tui.reloader
from inspector.tui.launch import create_app

never = threading.Event()
started = threading.Event()

def stuck(*args, **kwargs):
    started.set()
    never.wait()  # a read that never returns

inspector.tui.reloader.read_light_status = stuck
app = create_app(sys.argv[1])

async def main() -> None:
    async with app.run_test() as pilot:
        while not started.is_set():
            await pilot.pause(0.01)
        await pilot.press(sys.argv[2])
        await pilot.pause()
        print(f"return code {app.return_code}", flush=True)

asyncio.run(main())
print("quit", flush=True)
"""


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
def test_quit_does_not_wait_for_a_stuck_worker(tmp_path: Path, key: str) -> None:
    root = closed_seeded_root(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", STUCK_APP, str(root), key],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,  # a hang is a TimeoutExpired, i.e. a failure
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["return", "code", "0", "quit"], proc.stdout
