"""TimelineScreen (`T`): the session on display through time (inspector/tui/widgets/timeline_view).

Opened over the tabs and closed with escape or q; it reads the prompt ledger and changes
nothing, which its title line says.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from inspector.tui.views.session_view import ViewContext
from inspector.tui.views.timeline_view import TimelineView


class TimelineScreen(Screen[None]):
    """A full screen holding the Timeline of one session (read-only)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", id="timeline.close"),
        Binding("g", "go", "Go to this moment", id="timeline.go"),
    ]

    def __init__(self, context: ViewContext, title: str) -> None:
        super().__init__()
        self.context = context
        self.title_text = title

    def compose(self) -> ComposeResult:
        yield Static(
            Text(
                f" Timeline — {self.title_text} · read-only · ←/→ row, n/N pass, "
                "g go to this moment, esc back ",
                style="bold reverse",
            ),
            id="timeline-title",
        )
        yield TimelineView(id="timeline")

    def on_mount(self) -> None:
        view = self.query_one(TimelineView)
        view.attach(self.context)
        view.reload()
        view.focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_go(self) -> None:
        """Take every tab back to the call under the cursor (for a pass: the first call after
        it), read-only; the app's `b` comes back to now."""
        view = self.query_one(TimelineView)
        number = view.moment_call()
        if number is None:
            self.notify("no model call to go to", severity="warning")
            return
        self._materialize(number)

    @work(thread=True, exclusive=True, group="timeline-moment")
    def _materialize(self, number: int) -> None:
        import tempfile

        from core.timeline import materialize_moment

        dest = Path(tempfile.mkdtemp(prefix="session-inspector-moment-")) / "memory"
        try:
            moment = materialize_moment(self.context.manager.paths, str(number), dest)
        except Exception as exc:  # shown, never a crash
            self.app.call_from_thread(
                self.notify, f"cannot go to call {number}: {exc}", severity="error"
            )
            return
        self.app.call_from_thread(self._opened, moment.root, number, moment.at or "")

    def _opened(self, root: Path, number: int, at: str) -> None:
        open_moment = getattr(self.app, "open_moment", None)
        self.dismiss(None)
        if open_moment is not None:
            open_moment(root, f"call {number} at {at[11:19]} (past)")


__all__ = ["TimelineScreen"]
