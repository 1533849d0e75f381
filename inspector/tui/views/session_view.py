"""SessionView: the base of the tab views that show one session (Chunks, Summary, Prompt,
Recall, Archive).

The app owns which session is on display (the active one or an archived one, read-only) and
pushes it down with `attach(ViewContext)`; it asks a view to read again with `reload()` when
its files changed and it is on screen. A view reads in its own thread worker and applies the
result on the UI thread; it never reaches back into the app. Typed here, so the app needs
neither `hasattr(view, "reload")` nor an untyped `.manager`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.containers import Vertical

if TYPE_CHECKING:
    from core.manager import MemoryManager


@dataclass(frozen=True)
class ViewContext:
    """What the app pushes down to every view: the session on display and its window."""

    manager: MemoryManager
    context_window: int | None = None
    """The model's context window (the Prompt tab measures the prompt against it)."""


class SessionView(Vertical):
    """A tab view reading the session the app attached (see the module docstring)."""

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.manager: MemoryManager | None = None
        """The session read (None until the app attaches one; tests may set it directly)."""

    def attach(self, context: ViewContext) -> None:
        """Read this session from now on (the next `reload()` shows it)."""
        self.manager = context.manager

    def reload(self) -> None:
        """Read the session again and show it; a view that reads only when asked (Recall's
        search) keeps what it shows."""


__all__ = ["SessionView", "ViewContext"]
