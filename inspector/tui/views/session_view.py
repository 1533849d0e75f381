"""SessionView: the base of the tab views that show one session (Chunks, Summary, Prompt,
Recall, Archive).

The app owns which session is on display (the active one or an archived one, read-only) and
pushes it down with `attach(ViewContext)`; it asks a view to read again with `reload()` when
its files changed and it is on screen. A view reads in its own thread worker (`_read`, for the
manager attached when asked) and applies the result on the UI thread (`post_result`: dropped
when a newer read cancelled the worker); it never reaches back into the app. Typed here, so
the app needs neither `hasattr(view, "reload")` nor an untyped `.manager`.

A view with a table above a detail pane names the table in `TABLE`: escape on the detail
comes back to it (`action_focus_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual.actions import SkipAction
from textual.containers import Vertical
from textual.message import Message
from textual.worker import get_current_worker

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

    TABLE: ClassVar[str] = ""
    """The selector of the view's table, where escape on its detail pane goes back to."""

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
        """Read the session again and show it (`_read`, when a session is attached)."""
        if self.manager is not None:
            self._read(self.manager)

    def _read(self, manager: MemoryManager) -> object:
        """Start reading `manager`'s files: a view's thread worker. A view that reads only
        when asked (Recall's search) keeps what it shows."""
        return None

    def post_result(self, message: Message) -> None:
        """From a read worker: hand its result to the UI thread, unless the worker was
        cancelled (a newer read replaced it, or the view is gone)."""
        if not get_current_worker().is_cancelled:
            self.post_message(message)

    def action_focus_table(self) -> None:
        """Back to the table; on the table itself, escape goes on to the app's binding."""
        table = self.query_one(self.TABLE)
        if table.has_focus:
            raise SkipAction()
        table.focus()


__all__ = ["SessionView", "ViewContext"]
