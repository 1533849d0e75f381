"""Session memory compaction: the engine an agent runtime uses directly (no Textual here).

Comments in this package cite "contract §N" and "design: <section>"; docs/DESIGN.md (its
section map) says where each is described, docs/FORMATS.md holds the file formats.
"""

from core.config import CompactionConfig, LoadedConfig, SummarizerConfig, load_config
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
from core.maintenance import PassResult
from core.manager import MemoryManager
from core.planner import CompactionPlan, plan_compaction
from core.rotation import RotationResult
from core.scrub import strip_screenshot_data
from core.tokens import estimate_event_tokens, estimate_tokens
from core.trigger import TriggerDecision, should_compress

__all__ = [
    "BadInputError",
    "ChunkIdError",
    "CompactionConfig",
    "CompactionPlan",
    "ConfigError",
    "CutClass",
    "Event",
    "EventError",
    "IndexCorruptError",
    "LoadedConfig",
    "LockTimeoutError",
    "MemoryManager",
    "PassResult",
    "RotationResult",
    "SessionMemoryError",
    "StoreError",
    "SummarizerConfig",
    "TriggerDecision",
    "cut_class",
    "estimate_event_tokens",
    "estimate_tokens",
    "event_to_message",
    "events_to_messages",
    "load_config",
    "plan_compaction",
    "should_compress",
    "strip_screenshot_data",
]
