"""Every file change seen and every action run, with timings and errors.

A `RichLog` with markup off; each line is a `Text` built from untrusted pieces with
`inspector.safe_text`, so an error message quoting an event cannot inject markup or escapes.
Lines wrap at the log's own width (RichLog would render them at least 78 cells wide and crop
them on a narrower screen), and are wrapped again when that width changes.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from rich.text import Text
from textual import events, on
from textual.widgets import RichLog

from inspector.safe_text import one_line

LEVEL_STYLE = {"info": "", "change": "dim", "action": "bold", "error": "bold red", "ok": "green"}


class ActivityLog(RichLog):
    """Append-only log; `clock` is injectable so tests and snapshots show fixed times."""

    def __init__(self, *, clock: Callable[[], str] | None = None, id: str | None = None) -> None:
        super().__init__(
            id=id,
            markup=False,
            highlight=False,
            wrap=True,
            max_lines=5000,
            auto_scroll=True,
            min_width=20,
        )
        self._clock = clock or (lambda: time.strftime("%H:%M:%S"))
        self.lines_written: list[str] = []
        self._texts: deque[Text] = deque(maxlen=5000)
        self._wrapped_at = 0

    @on(events.Resize)
    def _rewrap(self) -> None:
        """Wrap every line again at the new width (what was written keeps its old wrapping
        in a RichLog)."""
        width = self.scrollable_content_region.width
        if width == self._wrapped_at or not self._texts:
            self._wrapped_at = width
            return
        self._wrapped_at = width
        self.clear()
        for text in self._texts:
            super().write(text)

    def record(self, message: str, level: str = "info") -> None:
        text = Text(no_wrap=False)
        text.append(self._clock() + " ", style="dim")
        text.append(f"{level:<6} ", style=LEVEL_STYLE.get(level, ""))
        shown = one_line(message, 2000)
        text.append(shown, style=LEVEL_STYLE.get(level, "") if level == "error" else "")
        self.lines_written.append(f"{level}: {shown}")
        del self.lines_written[:-5000]
        self._texts.append(text)
        self.write(text)
