"""`session-inspector follow` and `tui --follow`: tail a live agent log into a memory root
(core/transcripts/follow.py does the work; this is the command line around it)."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from core.errors import SessionMemoryError
from inspector.safe_text import visible

if TYPE_CHECKING:
    from core.manager import MemoryManager
    from core.transcripts.follow import Follower


def note(message: str) -> None:
    sys.stderr.write(f"note: {visible(message, keep_newlines=False)}\n")
    sys.stderr.flush()


def make_follower(
    path: Path, manager: MemoryManager, fmt: str | None, on_notice: Callable[[str], None] = note
) -> Follower:
    from core.transcripts.follow import Follower

    follower = Follower(path, manager, fmt, on_notice=on_notice)
    follower.check_readable()
    return follower


def run_follow(path: Path, manager: MemoryManager, fmt: str | None) -> dict[str, Any]:
    """Follow until SIGINT, SIGTERM or `q` + Enter on a terminal; the stats as JSON."""
    follower = make_follower(path, manager, fmt)

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        follower.stop()  # the line in hand is finished first: no half-written event

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    if sys.stdin is not None and sys.stdin.isatty():
        threading.Thread(target=_quit_on_q, args=(follower,), daemon=True).start()
        note(f"following {path} into {manager.memory_dir}; q + Enter or Ctrl-C stops")
    else:
        note(f"following {path} into {manager.memory_dir}; Ctrl-C or SIGTERM stops")
    try:
        stats = follower.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for warning in stats.warnings:
        sys.stderr.write(f"warning: {visible(warning, keep_newlines=False)}\n")
    return {"format": follower.fmt, "source": str(path), **stats.to_json()}


def _quit_on_q(follower: Follower) -> None:
    for line in sys.stdin:
        if line.strip().lower() in ("q", "quit"):
            follower.stop()
            return


class FollowThread:
    """`tui --follow`: the follower on a worker thread of the TUI process; errors are kept
    and reported when the TUI closes (the TUI shows the memory root as it fills)."""

    def __init__(self, follower: Follower) -> None:
        self.follower = follower
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, name="follow", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        try:
            self.follower.run()
        except SessionMemoryError as exc:
            self.error = str(exc)

    def stop(self, timeout: float = 10.0) -> None:
        self.follower.stop()
        self.thread.join(timeout)
