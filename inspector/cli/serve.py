"""`session-inspector serve`: the same inspector in a web browser, for a room without a
terminal (a demo on a projector, a QA person on a tablet), through `textual-serve`.

Each browser tab that opens the page gets its own `session-inspector tui` process on the
memory root (textual-serve runs the command and relays its screen over a websocket), so what
the browser shows is exactly what the terminal would. The server binds to 127.0.0.1 unless
`--host` says otherwise: anyone who can reach it can drive the inspector, and write to the
memory root unless `--read-only` is given.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def tui_command(
    root: Path, *, config: str | None = None, read_only: bool = False, poll: bool = False
) -> str:
    """The shell command textual-serve runs for each browser tab: this Python, this package."""
    argv = [sys.executable, "-m", "inspector", "--memory-dir", str(root)]
    if config:
        argv += ["--config", str(Path(config).expanduser().absolute())]
    argv.append("tui")
    if read_only:
        argv.append("--read-only")
    if poll:
        argv.append("--poll")
    return shlex.join(argv)


def serve(
    root: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    config: str | None = None,
    read_only: bool = False,
    poll: bool = False,
    stop_after: float | None = None,
) -> None:
    """Serve the inspector on `root` until ctrl+c (or `stop_after` seconds: tests)."""
    from textual_serve.server import Server

    command = tui_command(root, config=config, read_only=read_only, poll=poll)
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(
        f"serving the inspector on {root} at http://{shown}:{port} "
        f"({'read-only' if read_only else 'read-write'}; ctrl+c stops)\n"
    )
    if host not in LOOPBACK:
        sys.stderr.write(
            f"warning: bound to {host}: anyone who can reach this port can drive the inspector"
            + ("" if read_only else " and change the memory root (give --read-only)")
            + "\n"
        )
    sys.stderr.flush()
    if stop_after is not None:
        timer = threading.Timer(stop_after, os.kill, (os.getpid(), signal.SIGTERM))
        timer.daemon = True
        timer.start()
    Server(command, host=host, port=port, title="session-inspector").serve()


__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "serve", "tui_command"]
