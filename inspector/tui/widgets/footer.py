"""InspectorFooter: the footer that never draws two keys over one another.

Which keys it leaves out is the app's call (`FooterPolicy.footer_hidden()`: the hot window's
own keys on other tabs, the least used ones below NARROW_FOOTER columns); what still does not
fit is dropped in FOOTER_DROP_ORDER. While a text field whose view lists its keys
(`FOOTER_KEYS`) has the keyboard, those keys are shown instead. Every key stays in `?` and
the command palette. Moved out of the app so the app wires and this widget draws.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer, Input
from textual.widgets._footer import FooterKey


@runtime_checkable
class FooterPolicy(Protocol):
    """What the footer asks the app (InspectorApp is one): the actions to leave out now."""

    def footer_hidden(self) -> frozenset[str]: ...


NARROW_FOOTER = 100
"""Below this width the footer leaves out the keys used least (all stay in the palette)."""
FOOTER_HOT_ONLY = frozenset({"toggle_preview", "what_if", "toggle_follow"})
FOOTER_WIDE_ONLY = frozenset({"rotate", "repair", "toggle_follow"})
# The demo's keys (space, s) are on the demo bar itself, not in the footer.


FOOTER_DROP_ORDER: tuple[str, ...] = (
    "toggle_follow",
    "repair",
    "rotate",
    "back_to_active",
    "append",
    "toggle_preview",
    "what_if",
    "maintenance",
    "compact",
    "recall",
    "help",
)
"""Footer keys left out first when the footer is too narrow for all of them."""


def _footer_width(widget: Widget) -> int:
    """Cells a compact FooterKey takes: key, a blank, its description, a blank."""
    key = str(getattr(widget, "key_display", "") or "")
    description = str(getattr(widget, "description", "") or "")
    return cell_len(key) + cell_len(description) + 2


class HintKey(FooterKey):
    """A footer entry that only explains (the digits of a what-if field): clicking does nothing."""

    def on_mouse_down(self) -> None:
        return


class InspectorFooter(Footer):
    """The footer without the keys the app's `footer_hidden()` (`FooterPolicy`) leaves out
    for this tab and width, so what is shown is never cut off (ctrl+p lists every action
    with its key). While a text field whose view lists its keys has the keyboard (what-if,
    Recall's search), it shows those keys instead of going almost empty (the field takes
    every printable key)."""

    def _field_keys(self) -> list[Widget] | None:
        """The keys of the text field that has the keyboard, when its view lists them
        (`FOOTER_KEYS`: the what-if fields, Recall's search), then ctrl+q."""
        focused = self.screen.focused
        if not isinstance(focused, Input):
            return None
        owner = next((a for a in focused.ancestors if hasattr(a, "FOOTER_KEYS")), None)
        if owner is None:
            return None
        keys: list[Widget] = []
        for key, shown, description in (*owner.FOOTER_KEYS, ("ctrl+q", "^q", "Quit")):
            cls = FooterKey if key else HintKey
            keys.append(cls(key, shown, description, "").data_bind(compact=Footer.compact))
        return keys

    def compose(self) -> ComposeResult:
        app = self.app
        hidden = app.footer_hidden() if isinstance(app, FooterPolicy) else frozenset[str]()
        widgets = [
            widget
            for widget in super().compose()
            if getattr(widget, "action", None) not in hidden  # a FooterKey (not public API)
        ]
        field_keys = self._field_keys()
        if field_keys is not None:
            palette = [w for w in widgets if w.has_class("-command-palette")]
            budget = max(20, self.app.size.width) - sum(_footer_width(w) for w in palette)
            while len(field_keys) > 1 and sum(_footer_width(w) for w in field_keys) > budget:
                field_keys.pop()  # the last ones are the least needed (ctrl+q is in ?)
            widgets = field_keys + palette
            self.styles.grid_size_columns = len(widgets)
        # Drop keys by priority until the rest fit beside each other: never two keys drawn
        # over one another (every key stays in ? and the palette).
        budget = max(20, self.app.size.width)
        while sum(_footer_width(w) for w in widgets) > budget:
            actions = [getattr(w, "action", None) for w in widgets]
            drop = next((a for a in FOOTER_DROP_ORDER if a in actions), None)
            if drop is None:
                break
            widgets = [w for w in widgets if getattr(w, "action", None) != drop]
        yield from widgets


__all__ = [
    "FOOTER_DROP_ORDER",
    "FOOTER_HOT_ONLY",
    "FOOTER_WIDE_ONLY",
    "NARROW_FOOTER",
    "FooterPolicy",
    "HintKey",
    "InspectorFooter",
]
