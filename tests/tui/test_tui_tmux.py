"""End to end in a real terminal: tmux runs the inspector, other processes append and compact
through the CLI, `capture-pane` shows the change, keys drive an action, ctrl+q quits cleanly.

Waits poll `capture-pane` against a deadline (never a fixed sleep). Skipped only when tmux is
not installed (CI installs it).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.cli import cli_ok
from tests.helpers.paths import REPO
from tests.helpers.tui_fixtures import build_basic

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.extended,  # a real terminal and real processes: CI runs it as its own step
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


class Tmux:
    """A tmux server of its own (its socket) running the inspector in a pane named inspector."""

    def __init__(self, socket: str, status_file: Path) -> None:
        self.socket = socket
        self.status_file = status_file
        """Where the pane writes the inspector's exit status once it has quit."""

    def run(self, *args: str, check: bool = True) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            check=check,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return out.stdout

    def capture(self) -> str:
        return self.run("capture-pane", "-p", "-t", "inspector")

    def wait_for(self, cond: Callable[[str], bool], timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if cond(screen):
                return screen
            time.sleep(0.05)  # polling interval of the deadline loop, not synchronisation
        raise AssertionError(f"screen never matched; last capture:\n{screen}")

    def start_inspector(self, root: Path, width: int, height: int) -> None:
        """`python -m inspector --memory-dir root tui` in a detached width×height pane."""
        app_cmd = (
            f"cd {shlex.quote(str(REPO))} && "
            # COLUMNS/LINES inherited from the test runner would override the pane's real size.
            f"env -u COLUMNS -u LINES {shlex.quote(sys.executable)} -m inspector "
            f"--memory-dir {shlex.quote(str(root))} tui; "
            f"echo $? > {shlex.quote(str(self.status_file))}"
        )
        env_args = ["-e", "TERM=xterm-256color"] if os.environ.get("TERM") is None else []
        size = ["-x", str(width), "-y", str(height)]
        self.run("new-session", "-d", "-s", "inspector", *size, *env_args, app_cmd)

    def quit_inspector(self) -> str:
        """Press ctrl+q and return the inspector's exit status ("" if it never exits)."""
        self.run("send-keys", "-t", "inspector", "C-q")
        deadline = time.monotonic() + 20
        while not self.status_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # polling interval of the deadline loop, not synchronisation
        return self.status_file.read_text().strip() if self.status_file.exists() else ""


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    t = Tmux(f"inspector-test-{uuid.uuid4().hex[:8]}", tmp_path / "exit-status")
    yield t
    t.run("kill-server", check=False)


def test_inspector_in_tmux_sees_other_processes_and_quits_cleanly(
    tmux: Tmux, tmp_path: Path
) -> None:
    root = build_basic(tmp_path / "m")
    tmux.start_inspector(root, 120, 40)
    tmux.wait_for(lambda s: "ev_0112" in s and "chunks 1" in s)

    cli_ok(root, "append", "--type", "user_input", "--text", "hello-from-tmux-test")
    tmux.wait_for(lambda s: "hello-from-tmux-test" in s and "events 24" in s)

    cli_ok(root, "compact", "--force")
    tmux.wait_for(lambda s: "chunks 2" in s)

    tmux.run("send-keys", "-t", "inspector", "p")
    tmux.wait_for(lambda s: "✂ cut" in s or "cut: " in s)

    # Typed at once, without waiting for the form to show: no character may be lost.
    tmux.run("send-keys", "-t", "inspector", "a")
    tmux.run("send-keys", "-t", "inspector", "-l", "typed-in-tmux")
    tmux.wait_for(lambda s: "typed-in-tmux" in s and "Append an event" in s)
    tmux.run("send-keys", "-t", "inspector", "C-s")
    tmux.wait_for(lambda s: "typed-in-tmux" in s and "Append an event" not in s)
    lines = (root / "session" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert '"typed-in-tmux"' in lines[-1]

    assert tmux.quit_inspector() == "0"


def test_summary_tab_follows_passes_and_help_and_narrow_screen_in_tmux(
    tmux: Tmux, tmp_path: Path
) -> None:
    """Issue 13 in a real terminal: with the Summary tab open, a pass by another process
    reaches the header and the tab at once; ? explains, esc closes; at 60×20 all tabs show."""
    root = build_basic(tmp_path / "m")
    tmux.start_inspector(root, 80, 24)
    tmux.wait_for(lambda s: "chunks 1" in s)
    tmux.run("send-keys", "-t", "inspector", "3")
    tmux.wait_for(lambda s: "Rolling Summary" in s and "bound" in s and "chunk_0001" in s)

    cli_ok(root, "compact", "--force")
    started = time.monotonic()
    tmux.wait_for(lambda s: "chunks 2" in s and "chunk_0002" in s)
    assert time.monotonic() - started < 5  # it froze for 8–18 s before

    tmux.run("send-keys", "-t", "inspector", "?")
    tmux.wait_for(lambda s: "marks and keys" in s)
    tmux.run("send-keys", "-t", "inspector", "Escape")
    tmux.wait_for(lambda s: "marks and keys" not in s and "Rolling Summary" in s)

    tmux.run("resize-window", "-t", "inspector", "-x", "60", "-y", "20")
    tmux.wait_for(lambda s: "1 Hot" in s and "7 Act" in s)

    assert tmux.quit_inspector() == "0"
