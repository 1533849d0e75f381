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


def fault_point(name: str) -> None:
    """Exit at once with status 99 when SESSION_MEMORY_FAULT names this point.

    `os._exit` skips every finally block and atexit hook, as a real crash would.
    """
    wanted = os.environ.get(FAULT_ENV)
    if wanted and name in wanted.split(","):
        os._exit(FAULT_EXIT_STATUS)
