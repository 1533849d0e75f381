"""Typed errors. Each carries the exit status the command line maps it to (contract §12)."""

from __future__ import annotations


class SessionMemoryError(Exception):
    """An operation failed (I/O, lock timeout, unreadable index): exit status 1."""

    exit_code = 1


class BadInputError(SessionMemoryError):
    """The caller gave something invalid (usage, configuration, event): exit status 2."""

    exit_code = 2


class ConfigError(BadInputError):
    """extraction.yaml has a wrong key, type or range."""


class EventError(BadInputError):
    """An event to append is not a valid event."""


class ChunkIdError(BadInputError):
    """A chunk id does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$ (never used to open a file)."""


class LockTimeoutError(SessionMemoryError):
    """The session lock could not be taken within lock_timeout_seconds."""


class IndexCorruptError(SessionMemoryError):
    """chunks/index.yaml cannot be read; passes, recall and rotation stop until `repair`."""


class StoreError(SessionMemoryError):
    """A file under the memory root is missing, unreadable or unwritable."""
