"""Defaults the TUI and the command line share, in a module that imports nothing heavy (the
CLI starts without Textual)."""

from __future__ import annotations

DEFAULT_SYSTEM_PROMPT = "You are a helpful agent."
"""The system prompt the Prompt tab and `prompt` assemble with when none is given."""
DEFAULT_TASK = "Continue the task."
"""The task the Prompt tab and `prompt` assemble with when none is given."""

__all__ = ["DEFAULT_SYSTEM_PROMPT", "DEFAULT_TASK"]
