"""AppendEventScreen: a small keyboard form that builds one event to append.

Public API (for the app):

    AppendEventScreen(initial_type: str = "user_input")      # ModalScreen[dict | None]
    app.push_screen(AppendEventScreen(), callback)

The callback gets a validated event dict (`core.events.validate_event`) —
`{"type": T, "role": R, "content": TEXT}` plus `"name"` when one was given — ready for
`MemoryManager.append`; or `None` when cancelled. No id/ts: the store assigns them.

Fields: text first (a TextArea; multi-line; it has the keyboard from the moment the form
opens), then type (a Select of the seven known types), "custom type" (free text; when not empty
it wins over the Select), role (follows `core.events.default_role(type)` until the person edits
it) and name (optional). Keys: ctrl+s submits from anywhere, enter submits from any single-line
field, escape cancels, tab / shift+tab move between fields. Fits 80x24.
Invalid input keeps the form open with a one-line error.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from core.errors import EventError
from core.events import KNOWN_TYPES, default_role, make_event, validate_event
from inspector.safe_text import safe_text


class AppendEventScreen(ModalScreen[dict[str, Any] | None]):
    """Compose an event by keyboard; dismisses with the validated event or None."""

    AUTO_FOCUS = "#append-text"
    """The text field has the keyboard from the moment the form is composed, so keys typed
    right after `a` (tmux, SSH, a fast typist) are never lost."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Append", priority=True, id="append.submit"),
        Binding("escape", "cancel", "Cancel", id="append.cancel"),
    ]

    def __init__(self, initial_type: str = "user_input") -> None:
        super().__init__()
        self._initial_type = initial_type if initial_type in KNOWN_TYPES else "user_input"
        self._auto_role = default_role(self._initial_type)

    def compose(self) -> ComposeResult:
        with Vertical(id="append-dialog"):
            yield Static(Text("Append an event: text, then type and role"), id="append-title")
            yield TextArea(id="append-text", soft_wrap=True, tab_behavior="focus")
            with Horizontal(classes="append-row"):
                yield Label("type")
                yield Select(
                    [(t, t) for t in KNOWN_TYPES],
                    value=self._initial_type,
                    allow_blank=False,
                    id="append-type",
                    compact=True,
                )
            with Horizontal(classes="append-row"):
                yield Label("custom")
                yield Input(
                    placeholder="custom type (optional, overrides type)",
                    id="append-custom",
                    compact=True,
                )
            with Horizontal(classes="append-row"):
                yield Label("role")
                yield Input(
                    value=self._auto_role, placeholder="role", id="append-role", compact=True
                )
                yield Label("name", id="append-name-label")
                yield Input(placeholder="optional, e.g. a tool", id="append-name", compact=True)
            yield Static(Text(""), id="append-error", markup=False)
            with Horizontal(id="append-buttons"):
                yield Button("Append", id="append-ok", variant="primary", compact=True)
                yield Button("Cancel", id="append-cancel", compact=True)
                yield Static(Text("ctrl+s append · esc cancel · tab next field"), id="append-hint")

    def _current_type(self) -> str:
        custom = self.query_one("#append-custom", Input).value.strip()
        if custom:
            return custom
        value = self.query_one("#append-type", Select).value
        return value if isinstance(value, str) else "user_input"

    def _sync_role(self) -> None:
        """Keep the role on the type's default until the person types their own."""
        role_input = self.query_one("#append-role", Input)
        new_default = default_role(self._current_type())
        if role_input.value.strip() in ("", self._auto_role):
            role_input.value = new_default
        self._auto_role = new_default

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._sync_role()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "append-custom":
            event.stop()
            self._sync_role()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "append-ok":
            self.action_submit()
        else:
            self.action_cancel()

    def build_event(self) -> dict[str, Any]:
        """The event the form describes now; raises EventError when it is not valid."""
        etype = self._current_type()
        role = self.query_one("#append-role", Input).value.strip() or default_role(etype)
        name = self.query_one("#append-name", Input).value.strip() or None
        text = self.query_one("#append-text", TextArea).text
        return validate_event(make_event(etype, text, role=role, name=name), "append form")

    def action_submit(self) -> None:
        try:
            event = self.build_event()
        except EventError as exc:
            self.query_one("#append-error", Static).update(safe_text(str(exc)))
            return
        self.dismiss(event)

    def action_cancel(self) -> None:
        self.dismiss(None)
