"""Fault points for crash tests (contract §8): the process dies at a named point of a pass."""

from __future__ import annotations

import os

FAULT_ENV = "SESSION_MEMORY_FAULT"
FAULT_EXIT_STATUS = 99
FAULT_POINTS = (
    "after_pending_write",
    "after_summarize",
    "after_events_replace",
    "after_chunk_write",
    "after_index_write",
    "during_rotation",
)
PASS_FAULT_POINTS = (
    "between_pending_writes",
    "after_pending_commit",
    "between_summary_writes",
    "after_summaries_write",
    "after_state_write",
    "between_pending_deletes",
    "during_index_append",
    "after_index_append",
)
RECOVERY_FAULT_POINTS = ("recovery_after_chunk_write", "recovery_after_index_write")
REPAIR_FAULT_POINTS = ("during_index_rebuild",)
ROTATION_FAULT_POINTS = ("before_rotation_rename", "after_rotation_session_created")
EXTRA_FAULT_POINTS = (
    PASS_FAULT_POINTS + RECOVERY_FAULT_POINTS + REPAIR_FAULT_POINTS + ROTATION_FAULT_POINTS
)
"""Points between the other writes of a pass, of recovery, of repair and of a rotation
(tests/reliability/test_crash_matrix.py); not part of the contract. `during_index_append`
leaves half of the pass's entry at the end of index.yaml (a torn append, core.index.catalog)."""


def fault_wanted(name: str) -> bool:
    """Whether SESSION_MEMORY_FAULT names this point (a writer that must leave a torn write
    behind before it dies asks first)."""
    return name in os.environ.get(FAULT_ENV, "").split(",")


def fault_point(name: str) -> None:
    """Exit at once with status 99 when SESSION_MEMORY_FAULT names this point.

    `os._exit` skips every finally block and atexit hook, as a real crash would.
    """
    if fault_wanted(name):
        os._exit(FAULT_EXIT_STATUS)
