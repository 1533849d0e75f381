"""The messages the app's workers and the file watcher post to the UI thread.

Workers never touch widgets: they read files off the loop and post one of these (Textual's
`post_message` is thread-safe); the app's handlers apply them on the UI thread. Each is a
plain dataclass so what a worker hands over is visible in one place and typed.
`eq=False`: a message is an event, compared by identity, never by value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from core.compaction.trigger import PromptSize, TriggerDecision
from core.manager import MemoryManager
from inspector.tui.hot_window_model import CutPreview, HotWindowModel, LightStatus, ModelUpdate
from inspector.tui.watch import Change


@dataclass(eq=False)
class EventsPolled(Message):
    """New rows of events.jsonl (or the whole file again) read by the events job."""

    update: ModelUpdate
    model: HotWindowModel
    """The model it was read for: a result for a model since replaced is dropped."""


@dataclass(eq=False)
class StatusRead(Message):
    """The light status (state.json, index size, archives) read by the status job."""

    status: LightStatus
    manager: MemoryManager
    """The session it was read for (active or archived): a stale one is dropped."""


@dataclass(eq=False)
class PlanMade(Message):
    """The cut the next pass would make, and what the trigger says, from the plan job."""

    preview: CutPreview
    trigger: TriggerDecision
    """With the what-if values applied (what the cut preview shows)."""
    real_trigger: TriggerDecision
    """With the configured values (what the budget gauge shows)."""
    model: HotWindowModel
    elapsed_ms: float
    size: PromptSize | None = None


@dataclass(eq=False)
class ActionFinished(Message):
    """An action (or a background read, `refresh=False`) finished or failed."""

    name: str
    text: str
    ok: bool = True
    refresh: bool = True
    """True after a write: the views reload (without a watcher) and errors always show."""


@dataclass(eq=False)
class FilesChanged(Message):
    """The watcher saw files of the memory root change."""

    change: Change
    sizes: dict[str, int | None] = field(default_factory=dict)
    """Relative path -> its size now (None: gone), read in the watcher thread."""


@dataclass(eq=False)
class WatchError(Message):
    """The watcher failed; the app falls back to polling."""

    text: str


__all__ = [
    "ActionFinished",
    "EventsPolled",
    "FilesChanged",
    "PlanMade",
    "StatusRead",
    "WatchError",
]
