"""FocusPromptScreen: optional focus instructions for a forced compaction.

Public API (for the app):

    FocusPromptScreen(default: str = "")          # ModalScreen[str | None]
    app.push_screen(FocusPromptScreen(), callback)

The callback gets the stripped text (`""` when the person left it empty: compact without a
focus) or `None` when cancelled (do not compact). Keys: enter runs, escape cancels.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class FocusPromptScreen(ModalScreen[str | None]):
    """Ask for optional summary focus text; dismisses with the text, or None to cancel."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="focus.cancel")
    ]

    AUTO_FOCUS = "#focus-input"
    """Focused as the screen is composed: text typed right after `c` is never lost."""

    def __init__(self, default: str = "") -> None:
        super().__init__()
        self._default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="focus-dialog"):
            yield Static(Text("Force compaction"), id="focus-title")
            yield Static(
                Text(
                    "Optional focus for the summaries of this pass "
                    "(e.g. 'keep file paths and error messages'). Leave empty for none."
                )
            )
            yield Input(value=self._default, placeholder="focus (optional)", id="focus-input")
            yield Static(Text("enter: compact   escape: cancel"), id="focus-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
