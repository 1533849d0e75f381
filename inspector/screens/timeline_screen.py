"""TimelineScreen (`T`): the session on display through time (inspector/widgets/timeline_view).

Opened over the tabs and closed with escape or q; it reads the prompt ledger and changes
nothing, which its title line says.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from inspector.widgets.session_view import ViewContext
from inspector.widgets.timeline_view import TimelineView


class TimelineScreen(Screen[None]):
    """A full screen holding the Timeline of one session (read-only)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", id="timeline.close"),
    ]

    def __init__(self, context: ViewContext, title: str) -> None:
        super().__init__()
        self.context = context
        self.title_text = title

    def compose(self) -> ComposeResult:
        yield Static(
            Text(
                f" Timeline — {self.title_text} · read-only · ←/→ row, n/N pass, esc back ",
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


__all__ = ["TimelineScreen"]
