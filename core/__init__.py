"""Session memory compaction: the engine an agent runtime uses directly (no Textual here)."""

from core.errors import (
    BadInputError,
    ChunkIdError,
    ConfigError,
    EventError,
    IndexCorruptError,
    LockTimeoutError,
    SessionMemoryError,
    StoreError,
)
from core.events import CutClass, Event, cut_class, event_to_message, events_to_messages
from core.tokens import estimate_event_tokens, estimate_tokens

__all__ = [
    "BadInputError",
    "ChunkIdError",
    "ConfigError",
    "CutClass",
    "Event",
    "EventError",
    "IndexCorruptError",
    "LockTimeoutError",
    "SessionMemoryError",
    "StoreError",
    "cut_class",
    "estimate_event_tokens",
    "estimate_tokens",
    "event_to_message",
    "events_to_messages",
]
