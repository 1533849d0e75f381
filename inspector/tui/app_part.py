"""AppPart: the base of the app's parts (the reloader, the display, the write actions, the hot
tab), and `AppWiring`, what the app hands each of them.

Every part is built by `InspectorApp.__init__` from the same things: the app (to query its
widgets, notify, run workers), the session on display, the config, the probe, the activity
log and the current what-if values. The app builds one `AppWiring` and each part takes it
whole, then only what is its own (a callback, the root shown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.app import App

from core.config import CompactionConfig
from inspector.tui.probe import AppProbe
from inspector.tui.session import DisplayedSession
from inspector.tui.widgets.plan_panel import WhatIf


@dataclass(frozen=True)
class AppWiring:
    """What the app hands every part it is built from (see the module docstring)."""

    app: App[Any]
    session: DisplayedSession
    config: CompactionConfig
    probe: AppProbe
    log: Callable[[str, str], None]
    """The activity log: (text, kind)."""
    what_if: Callable[[], WhatIf]
    """The plan panel's what-if values now (the app replaces the object when they change)."""


class AppPart:
    """A part of the app: the wiring as attributes (see the module docstring)."""

    def __init__(self, wiring: AppWiring) -> None:
        self._app = wiring.app
        self._session = wiring.session
        self._config = wiring.config
        self._probe = wiring.probe
        self._log = wiring.log
        self._what_if = wiring.what_if


__all__ = ["AppPart", "AppWiring"]
