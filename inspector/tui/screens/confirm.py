"""ConfirmScreen: a yes/no question before a destructive action (rotate, repair).

Public API (for the app):

    ConfirmScreen(title: str | Text, message: str | Text, *, confirm_label: str = "Confirm",
                  cancel_label: str = "Cancel")      # ModalScreen[bool]
    app.push_screen(ConfirmScreen("Rotate session", msg), callback)   # callback(True | False)

A `str` title or message is treated as untrusted: it is shown literally (no markup), with
control characters made visible. Pass a `rich.text.Text` to style trusted parts yourself,
building untrusted parts with `inspector.safe_text.safe_text`.

Keys: y / enter confirm (True); n / escape cancel (False). Tab moves between the buttons.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from inspector.safe_text import safe_text


def _as_text(value: str | Text, style: str = "") -> Text:
    return value if isinstance(value, Text) else safe_text(value, style)


class ConfirmScreen(ModalScreen[bool]):
    """Ask before doing something that cannot be undone; dismisses with True or False."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "confirm", "Yes", id="confirm.yes"),
        Binding("enter", "confirm", "Confirm", show=False, id="confirm.enter"),
        Binding("n", "cancel", "No", id="confirm.no"),
        Binding("escape", "cancel", "Cancel", id="confirm.cancel"),
    ]

    AUTO_FOCUS = "#confirm-yes"
    """Focused as the screen is composed: y / n / enter typed at once are never lost."""

    def __init__(
        self,
        title: str | Text,
        message: str | Text,
        *,
        confirm_label: str = "Confirm",
        cancel_label: str = "Cancel",
    ) -> None:
        super().__init__()
        self._title = _as_text(title, "bold")
        self._message = _as_text(message)
        self._confirm_label = confirm_label
        self._cancel_label = cancel_label

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(self._title, id="confirm-title", markup=False)
            yield Static(self._message, id="confirm-message", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(safe_text(self._confirm_label), id="confirm-yes", variant="warning")
                yield Button(safe_text(self._cancel_label), id="confirm-no")
            yield Static(Text("y / enter: confirm   n / escape: cancel"), id="confirm-hint")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
