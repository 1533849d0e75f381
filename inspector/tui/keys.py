"""Key routing and focus: where a key goes, which tab and widget have the keyboard.

- Keys typed right after a key that opens a text field (`a`, `c`, `/`) go into that field.
- On the Recall tab, a printable key starts the search.
- A key of an action refused here (read-only, archive, no demo) says why instead of nothing.
- `1`-`8`, tab / shift+tab and escape move between tabs, with the keyboard in the tab shown.

`APP_BINDINGS` are the app's keys.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.widgets import Input, TabbedContent, TabPane, TextArea

from inspector.tui.layout import TABS
from inspector.tui.refusal import DEMO_ACTIONS, WRITE_ACTIONS
from inspector.tui.views.recall_view import RECALL_NAVIGATION_KEYS
from inspector.tui.widgets.hot_window import HotWindow

APP_BINDINGS: list[BindingType] = [
    Binding("m", "maintenance", "Maintain", id="maintenance"),
    Binding("c", "compact", "Compact", id="compact"),
    Binding("r", "rotate", "Rotate", id="rotate"),
    Binding("a", "append", "Append", id="append"),
    Binding("R,ctrl+r", "repair", "Repair", id="repair"),
    Binding("slash", "recall", "Recall", id="recall"),
    Binding("p", "toggle_preview", "Cut", id="cut_preview"),
    Binding("w", "what_if", "What-if", id="what_if"),
    Binding("f", "toggle_follow", "Follow", id="follow"),
    Binding("space", "demo_toggle", "Play/pause", show=False, id="demo.toggle"),
    Binding("s", "demo_step", "Step", show=False, id="demo.step"),
    Binding("b", "back_to_active", "Active session", id="back_to_active"),
    Binding("T", "timeline", "Timeline", show=False, id="timeline"),
    Binding("question_mark", "help", "Help", id="help"),
    Binding("q", "quit", "Quit", id="quit"),
    Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit.ctrl"),
    Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="quit.ctrl_c"),
    Binding("escape", "escape", "Back", show=False, id="escape"),
    Binding("tab", "next_tab", "Next tab", show=False, priority=True, id="tab.next"),
    Binding("shift+tab", "prev_tab", "Prev tab", show=False, priority=True, id="tab.prev"),
    *[
        Binding(str(i + 1), f"show_tab('{tab}')", title, show=False, id=f"tab.{tab}")
        for i, (tab, title) in enumerate(TABS)
    ],
]
"""The app's keys (each view adds its own); the footer, the palette and the help list them."""


class KeyRouter:
    """The app's key routing and tab focus (see the module docstring)."""

    def __init__(
        self,
        app: App[Any],
        bindings: Iterable[BindingType],
        *,
        shown: Callable[[str], bool],
        refuse: Callable[[str], object],
    ) -> None:
        self._app = app
        self._bindings = [b for b in bindings if isinstance(b, Binding)]
        self._shown = shown
        self._refuse = refuse

    def on_key(self, event: events.Key) -> None:
        """Keys typed right after a key that opens a text field (`a`, `c`, `/`) were already on
        their way through the widget focused before (Textual routes every key to the focused
        widget first and resolves bindings when it comes back up). A key that comes back up
        here while a text field has the keyboard is typed into that field through its public
        API (a character, a TextArea's enter), in order, so "text + enter" submits the text and
        nothing typed fast (tmux, SSH) is lost; any other key goes on to the bindings where
        the field is (Input's enter submits, a what-if field's down moves on)."""
        app = self._app
        focused = app.screen.focused
        if not isinstance(focused, Input | TextArea) or (
            isinstance(focused, TextArea) and focused.read_only
        ):
            if self._type_to_search(event):
                return
            self._explain_refused_key(event.key)
            return
        text = event.character if event.is_printable else None
        if isinstance(focused, TextArea) and event.key == "enter":
            text = "\n"
        active = app.active_bindings.get(event.key)
        if text is None or (active is not None and active.binding.priority):
            return  # takes its usual way: the bindings where the field is (enter submits)
        event.prevent_default()
        event.stop()
        focused.replace(text, *focused.selection)  # typed over the selection, as the field does

    def _type_to_search(self, event: events.Key) -> bool:
        """On the Recall tab, a printable key starts the search (the search field gets the
        keyboard and the key), letters bound elsewhere (`c`, `a`, `m`) included; the keys that
        move about (tab numbers, `?`, `q`, `/`, space) keep their bindings."""
        app = self._app
        if app.screen is not app.screen_stack[0] or not event.is_printable:
            return False
        if event.key in RECALL_NAVIGATION_KEYS:
            return False
        try:
            if app.query_one(TabbedContent).active != "recall":
                return False
            field = app.query_one("#recall-query", Input)
        except NoMatches:
            return False
        event.prevent_default()
        event.stop()
        field.select_on_focus = False  # else the focus would select the key typed
        # Focused now, not after a refresh: the keys already on their way (a fast typist's
        # "crash⏎") go to the field, enter included.
        app.screen_stack[0].set_focus(field)
        field.insert_text_at_cursor(event.character or "")
        return True

    def _explain_refused_key(self, key: str) -> None:
        """A key of a write or demo action hidden here (read-only, archive, no demo) does
        nothing in Textual; say why instead of staying silent."""
        if self._app.screen is not self._app.screen_stack[0]:
            return
        for binding in self._bindings:
            if binding.action not in WRITE_ACTIONS | DEMO_ACTIONS:
                continue
            if key in (k.strip() for k in binding.key.split(",")):
                active = self._app.active_bindings.get(key)
                if active is not None and active.binding.action != binding.action:
                    return  # the focused view binds this key (the Timeline's `r`)
                if not self._shown(binding.action):
                    self._refuse(binding.action)
                return

    def show_tab(self, tab: str) -> None:
        """Show a tab and put the keyboard in it (the hot window, Recall's results, or the
        view's first control that is not a text field), at once: a key pressed right after
        lands in the new tab."""
        app = self._app
        app.query_one(TabbedContent).active = tab
        if tab == "hot":
            app.screen_stack[0].set_focus(app.query_one(HotWindow))
        elif tab == "recall":
            # The results have the keyboard, so tab numbers, `?` and `q` keep working; `/`
            # or any letter typed starts the search (the field takes it from there).
            with contextlib.suppress(NoMatches):
                table = app.query_one("#recall-table")
                app.screen_stack[0].set_focus(table)
        elif not self._focus_tab(tab):
            app.call_after_refresh(self._focus_tab, tab)

    def _focus_tab(self, tab: str) -> bool:
        app = self._app
        try:
            pane = app.query_one(f"#{tab}", TabPane)
        except NoMatches:
            return False
        focused = app.screen.focused
        if (
            focused is not None
            and pane in focused.ancestors
            and not isinstance(focused, Input | TextArea)
        ):
            return True
        for widget in pane.query("*"):
            if widget.focusable and not isinstance(widget, Input | TextArea):
                app.screen.set_focus(widget)
                return True
        return False

    def tab_step(self, step: int) -> None:
        """tab / shift+tab: the next or previous tab; in a text field or on a modal screen,
        the next or previous field."""
        app = self._app
        if app.screen is not app.screen_stack[0] or isinstance(app.focused, Input | TextArea):
            if step > 0:
                app.screen.focus_next()
            else:
                app.screen.focus_previous()
            return
        ids = [tab for tab, _ in TABS]
        active = app.query_one(TabbedContent).active
        index = ids.index(active) if active in ids else 0
        self.show_tab(ids[(index + step) % len(ids)])

    def escape(self) -> None:
        """Close the Keys panel when it is open; else back to the hot window."""
        app = self._app
        if app.screen.query("HelpPanel"):
            app.action_hide_help_panel()
            return
        if app.focused is not None and not isinstance(app.focused, HotWindow):
            self.show_tab("hot")
