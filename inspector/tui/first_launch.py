"""The hint a person gets the first time they open the inspector: `?` shows the legend of
every mark and key. Shown once per user: a marker file under the user's state folder
(`$SESSION_INSPECTOR_STATE`, else `$XDG_STATE_HOME/session-inspector`, else
`~/.local/state/session-inspector`) says it was seen. Nothing here may stop the TUI: a state
folder that cannot be written only means the hint shows again next time."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

HINT = "New here? ? shows the legend of every mark and key; ctrl+p lists every action."
MARKER = "first-launch-hint-seen"


def state_dir() -> Path:
    given = os.environ.get("SESSION_INSPECTOR_STATE")
    if given:
        return Path(given).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "session-inspector"


def first_launch() -> bool:
    """Whether the hint was never shown to this user; marks it shown (best effort)."""
    marker = state_dir() / MARKER
    try:
        if marker.exists():
            return False
    except OSError:
        return False
    from core.errors import SessionMemoryError
    from core.store.atomic import atomic_write_text

    with contextlib.suppress(OSError, SessionMemoryError):
        marker.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(marker, "the ? legend hint was shown\n")
    return True


__all__ = ["HINT", "MARKER", "first_launch", "state_dir"]
