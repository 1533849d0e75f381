"""FocusPromptScreen: optional focus instructions for a forced compaction.

Public API (for the app):

    FocusPromptScreen(default: str = "", *, uses: str = "", what_if: str | None = None)
    app.push_screen(FocusPromptScreen(), callback)
    screen.use_what_if: bool                      # read in the callback

The callback gets the stripped text (`""` when the person left it empty: compact without a
focus) or `None` when cancelled (do not compact). Keys: enter runs, escape cancels.

The dialog says which values the pass cuts with (`uses`: the config's). With what-if values
on (`what_if`, e.g. "keep_recent_tokens 300"), it offers to force with them, once (ticked by
default, ctrl+t or a click unticks it): they are never written to the config.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, Static


class FocusPromptScreen(ModalScreen[str | None]):
    """Ask for optional summary focus text; dismisses with the text, or None to cancel."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="focus.cancel"),
        Binding(
            "ctrl+t",
            "toggle_what_if",
            "What-if values / config",
            priority=True,
            id="focus.what_if",
        ),
    ]

    AUTO_FOCUS = "#focus-input"
    """Focused as the screen is composed: text typed right after `c` is never lost."""

    def __init__(self, default: str = "", *, uses: str = "", what_if: str | None = None) -> None:
        super().__init__()
        self._default = default
        self._uses = uses
        self._what_if = what_if

    @property
    def use_what_if(self) -> bool:
        """Whether the pass is to cut with the what-if values (once)."""
        if self._what_if is None:
            return False
        return self.query_one("#focus-what-if", Checkbox).value

    def action_toggle_what_if(self) -> None:
        if self._what_if is not None:
            self.query_one("#focus-what-if", Checkbox).toggle()

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
            if self._what_if is not None:
                yield Checkbox(
                    Text(f"cut with the what-if values ({self._what_if}), once"),
                    value=True,
                    id="focus-what-if",
                )
                yield Static(
                    Text(
                        "Unticked, the pass cuts with the config's values"
                        + (f" ({self._uses})" if self._uses else "")
                        + ". Either way extraction.yaml is not changed.",
                        style="dim",
                    ),
                    id="focus-uses",
                )
                hint = "enter: compact   ctrl+t: what-if / config   escape: cancel"
            else:
                if self._uses:
                    yield Static(
                        Text(f"The pass cuts with the config's values ({self._uses}).", "dim"),
                        id="focus-uses",
                    )
                hint = "enter: compact   escape: cancel"
            yield Static(Text(hint), id="focus-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
