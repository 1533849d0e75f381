"""AppProbe: what the tests and the bench read about a running inspector, kept out of the app.

The app reports to the probe it was given (`create_app(probe=...)`, a fresh one otherwise)
and never reads it back, so instrumentation cannot steer behaviour: which actions ran (a
refused key must not run one), which errors were shown, and how long the first paint and a
file change took to reach the screen (bench.tui_child measures its own frames; these are the
app's own view of the same moments).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class AppProbe:
    """A recorder the app writes to (see the module docstring); cheap enough to leave on."""

    actions_run: list[str] = field(default_factory=list)
    """Every action that started, by name ("compact", "recall", …), in order."""
    errors_shown: list[str] = field(default_factory=list)
    """Every error line shown to the person (activity log + notification)."""
    first_paint_ms: float | None = None
    """From the app's construction to the first rows of events.jsonl applied."""
    last_change_at: float | None = None
    """time.monotonic() of the watcher's newest file change."""
    last_change_applied_ms: float | None = None
    """From that change to its rows applied to the hot window."""

    def action(self, name: str) -> None:
        self.actions_run.append(name)

    def error(self, line: str) -> None:
        self.errors_shown.append(line)

    def painted(self, since: float) -> None:
        """The first rows are on screen (`since`: time.perf_counter() at construction)."""
        if self.first_paint_ms is None:
            self.first_paint_ms = (time.perf_counter() - since) * 1000

    def changed(self, at: float) -> None:
        self.last_change_at = at

    def change_applied(self) -> None:
        if self.last_change_at is not None:
            self.last_change_applied_ms = (time.monotonic() - self.last_change_at) * 1000


__all__ = ["AppProbe"]
