"""Modal screens the inspector pushes for its actions (each returns its answer via dismiss)."""

from inspector.tui.screens.append_form import AppendEventScreen
from inspector.tui.screens.confirm import ConfirmScreen
from inspector.tui.screens.focus_prompt import FocusPromptScreen
from inspector.tui.screens.help_screen import HelpScreen

__all__ = ["AppendEventScreen", "ConfirmScreen", "FocusPromptScreen", "HelpScreen"]
