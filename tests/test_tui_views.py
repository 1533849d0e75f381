"""Pilot tests of the inspector's views and modal screens: what they show, what they return,
and that hostile text is shown literally without ever running an action."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App
from textual.screen import Screen
from textual.widgets import Input, Select, Static, TextArea

from inspector.screens import AppendEventScreen, ConfirmScreen, FocusPromptScreen

HOSTILE = [
    "[@click=app.quit]x[/]",
    "[link=file:///etc/passwd]x[/link]",
    "[b unbalanced",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "abc\u202edef",
]


class ScreenHost(App[None]):
    """Pushes one modal screen and records what it dismissed with."""

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self._screen = screen
        self.results: list[Any] = []
        self.sentinel_calls = 0

    def on_mount(self) -> None:
        self.push_screen(self._screen, self.results.append)

    def action_sentinel(self) -> None:
        self.sentinel_calls += 1


def static_text(widget: Static) -> str:
    return str(widget.render())


# --- ConfirmScreen -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"), [("y", True), ("enter", True), ("n", False), ("escape", False)]
)
async def test_confirm_keys(key: str, expected: bool) -> None:
    app = ScreenHost(ConfirmScreen("Rotate session", "moves M/session"))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
        assert app.results == [expected]


async def test_confirm_tab_to_cancel_then_enter_cancels() -> None:
    app = ScreenHost(ConfirmScreen("Repair", "rebuild the index"))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert app.results == [False]


async def test_confirm_shows_hostile_text_literally() -> None:
    message = " ".join(HOSTILE) + " [@click=app.sentinel]run[/]"
    app = ScreenHost(ConfirmScreen("[@click=app.sentinel]T[/]", message))
    async with app.run_test() as pilot:
        await pilot.pause()
        shown = static_text(app.screen.query_one("#confirm-message", Static))
        assert "[@click=app.quit]x[/]" in shown
        assert "[link=file:///etc/passwd]x[/link]" in shown
        assert "[b unbalanced" in shown
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
        assert "␛[31mred" in shown
        title = static_text(app.screen.query_one("#confirm-title", Static))
        assert title == "[@click=app.sentinel]T[/]"
        await pilot.click("#confirm-message")
        await pilot.click("#confirm-title")
        await pilot.pause()
        assert app.sentinel_calls == 0
        assert app.is_running
        assert app.results == []


# --- FocusPromptScreen ---------------------------------------------------------------------


async def test_focus_prompt_returns_text() -> None:
    app = ScreenHost(FocusPromptScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press(*"keep paths")
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == ["keep paths"]


async def test_focus_prompt_empty_and_cancel() -> None:
    app = ScreenHost(FocusPromptScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == [""]
    app = ScreenHost(FocusPromptScreen(default="x"))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]


# --- AppendEventScreen ---------------------------------------------------------------------


async def test_append_form_default_user_input() -> None:
    app = ScreenHost(AppendEventScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.focused, TextArea)
        await pilot.press(*"hello", "enter", *"world")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.results == [{"type": "user_input", "role": "user", "content": "hello\nworld"}]


async def test_append_form_type_changes_role_and_name_submits_on_enter() -> None:
    app = ScreenHost(AppendEventScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#append-type", Select).value = "tool_result"
        await pilot.pause()
        assert screen.query_one("#append-role", Input).value == "tool"
        await pilot.press(*"done")
        screen.query_one("#append-name", Input).focus()
        await pilot.press(*"screenshot", "enter")
        await pilot.pause()
        assert app.results == [
            {"type": "tool_result", "role": "tool", "content": "done", "name": "screenshot"}
        ]


async def test_append_form_custom_type_and_edited_role_kept() -> None:
    app = ScreenHost(AppendEventScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        role = screen.query_one("#append-role", Input)
        role.value = "narrator"
        screen.query_one("#append-custom", Input).focus()
        await pilot.press(*"note")
        await pilot.pause()
        assert role.value == "narrator"
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == [{"type": "note", "role": "narrator", "content": ""}]


async def test_append_form_blank_role_uses_default_and_escape_cancels() -> None:
    app = ScreenHost(AppendEventScreen(initial_type="system_event"))
    async with app.run_test() as pilot:
        await pilot.pause()
        app.screen.query_one("#append-role", Input).value = ""
        await pilot.press(*HOSTILE[0], "ctrl+s")
        await pilot.pause()
        assert app.results == [{"type": "system_event", "role": "system", "content": HOSTILE[0]}]
    app = ScreenHost(AppendEventScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press(*"draft", "escape")
        await pilot.pause()
        assert app.results == [None]
