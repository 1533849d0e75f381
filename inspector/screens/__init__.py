"""Modal screens the inspector pushes for its actions (each returns its answer via dismiss)."""

from inspector.screens.append_form import AppendEventScreen
from inspector.screens.confirm import ConfirmScreen
from inspector.screens.focus_prompt import FocusPromptScreen
from inspector.screens.help_screen import HelpScreen

__all__ = ["AppendEventScreen", "ConfirmScreen", "FocusPromptScreen", "HelpScreen"]
