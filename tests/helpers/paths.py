"""Where things are, computed once from this file: a test module never counts `parent`s from its
own `__file__`, so moving it between tier folders cannot point it at the wrong directory."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
TRANSCRIPTS = TESTS / "data" / "transcripts"  # one small sample of each transcript format
HELPERS = TESTS / "helpers"
MM_CHILD = HELPERS / "mm_child.py"  # a MemoryManager running one command, run by path
LOCK_CHILD = HELPERS / "lock_child.py"  # a process holding or contending for the session lock
