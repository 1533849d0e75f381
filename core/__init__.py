"""Session memory compaction: the engine an agent runtime uses directly (no Textual here).

Comments in this package cite "contract §N" and "design: <section>"; docs/DESIGN.md (its
section map) says where each is described, docs/FORMATS.md holds the file formats.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: a cold recall does not import typing

if TYPE_CHECKING:
    from typing import Any

    from core.compaction.planner import CompactionPlan, plan_compaction
    from core.compaction.trigger import TriggerDecision, should_compress
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
    from core.maintenance.compaction_pass import PassResult
    from core.maintenance.rotation import RotationResult
    from core.manager import MemoryManager
    from core.scrub import strip_screenshot_data
    from core.tokens import estimate_event_tokens, estimate_tokens

_LAZY = {
    "CompactionConfig": "core.config",
    "LoadedConfig": "core.config",
    "SummarizerConfig": "core.config",
    "load_config": "core.config",
    "BadInputError": "core.errors",
    "ChunkIdError": "core.errors",
    "ConfigError": "core.errors",
    "EventError": "core.errors",
    "IndexCorruptError": "core.errors",
    "LockTimeoutError": "core.errors",
    "SessionMemoryError": "core.errors",
    "StoreError": "core.errors",
    "CutClass": "core.events",
    "Event": "core.events",
    "cut_class": "core.events",
    "event_to_message": "core.events",
    "events_to_messages": "core.events",
    "PassResult": "core.maintenance.compaction_pass",
    "MemoryManager": "core.manager",
    "CompactionPlan": "core.compaction.planner",
    "plan_compaction": "core.compaction.planner",
    "RotationResult": "core.maintenance.rotation",
    "strip_screenshot_data": "core.scrub",
    "estimate_event_tokens": "core.tokens",
    "estimate_tokens": "core.tokens",
    "TriggerDecision": "core.compaction.trigger",
    "should_compress": "core.compaction.trigger",
}
"""Names imported on first use (PEP 562): `import core.recall.sqlite_index` in a fresh process (an
agent's recall tool) must not pay for the manager, the store and the summarizers."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
