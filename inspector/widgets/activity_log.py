"""Every file change seen and every action run, with timings and errors.

A `RichLog` with markup off; each line is a `Text` built from untrusted pieces with
`inspector.safe_text`, so an error message quoting an event cannot inject markup or escapes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.widgets import RichLog

from inspector.safe_text import one_line

LEVEL_STYLE = {"info": "", "change": "dim", "action": "bold", "error": "bold red", "ok": "green"}


class ActivityLog(RichLog):
    """Append-only log; `clock` is injectable so tests and snapshots show fixed times."""

    def __init__(self, *, clock: Callable[[], str] | None = None, id: str | None = None) -> None:
        super().__init__(
            id=id, markup=False, highlight=False, wrap=True, max_lines=5000, auto_scroll=True
        )
        self._clock = clock or (lambda: time.strftime("%H:%M:%S"))
        self.lines_written: list[str] = []

    def record(self, message: str, level: str = "info") -> None:
        text = Text(no_wrap=False)
        text.append(self._clock() + " ", style="dim")
        text.append(f"{level:<6} ", style=LEVEL_STYLE.get(level, ""))
        shown = one_line(message, 2000)
        text.append(shown, style=LEVEL_STYLE.get(level, "") if level == "error" else "")
        self.lines_written.append(f"{level}: {shown}")
        del self.lines_written[:-5000]
        self.write(text)
