"""`session-inspector serve` (issue 22 item 14): the inspector served to a browser with
textual-serve, on 127.0.0.1 by default. The test starts it on a free port, fetches the page,
and the server stops by itself (`--stop-after`) even if the test fails half-way."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from inspector.cli.serve import tui_command
from tests.helpers.cli import REPO, cli_env, cli_ok, run_cli


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_tui_command_runs_this_package_on_the_root(tmp_path: Path) -> None:
    command = tui_command(tmp_path / "m b", read_only=True)
    assert command.startswith(sys.executable)
    assert "-m inspector --memory-dir" in command and "'" in command  # the blank is quoted
    assert command.endswith("tui --read-only")


def test_serve_answers_with_the_page_on_loopback(tmp_path: Path) -> None:
    root = tmp_path / "m"
    cli_ok(root, "append", "--type", "user_input", "--text", "hello")
    port = _free_port()
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "inspector", "--memory-dir", str(root), "serve"),
            *("--port", str(port), "--stop-after", "30"),
        ],
        cwd=REPO,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    page = ""
    try:
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as reply:
                    assert reply.status == 200
                    page = reply.read().decode("utf-8", "replace")
                    break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)  # polling for the server to listen, with a deadline
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "session-inspector" in page, (page[:500], err)
    assert f"at http://127.0.0.1:{port}" in err, err
    assert "warning" not in err


def test_serve_needs_an_existing_root(tmp_path: Path) -> None:
    proc = run_cli(["--memory-dir", tmp_path / "nope", "serve"], cwd=REPO, timeout=60)
    assert proc.returncode == 2 and "no memory at" in proc.stderr


def test_read_only_before_or_after_the_command_name() -> None:
    from inspector.cli.commands import build_parser

    parser = build_parser()
    for argv in (["--read-only", "serve"], ["serve", "--read-only"]):
        assert parser.parse_args(argv).read_only is True
    assert parser.parse_args(["serve"]).read_only is False
