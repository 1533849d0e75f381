"""The one check that keeps a name taken from data inside a memory root: chunk ids, pending
ids and session ids are safe file-name stems (`validate_safe_id`). Pure; `core.store.paths` builds
every path from ids checked here.
"""

from __future__ import annotations

import re

from core.errors import ChunkIdError

CHUNK_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
"""Chunk, pending and session ids: a safe file-name stem (no separators, no leading dot)."""

CHUNK_ID_MAX_LEN = 128


def validate_safe_id(value: object, kind: str) -> str:
    """Return `value` when it is a safe file-name stem (CHUNK_ID_RE, at most CHUNK_ID_MAX_LEN
    characters); ChunkIdError naming the `kind` of id and the value (cut short) otherwise."""
    if (
        isinstance(value, str)
        and len(value) <= CHUNK_ID_MAX_LEN
        and "\x00" not in value
        and CHUNK_ID_RE.fullmatch(value) is not None
    ):
        return value
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    raise ChunkIdError(
        f"invalid {kind} {shown}: must match {CHUNK_ID_RE.pattern} "
        f"and be at most {CHUNK_ID_MAX_LEN} characters"
    )


def validate_chunk_id(cid: object) -> str:
    """Return `cid` when it is a safe chunk id; raise ChunkIdError naming it otherwise."""
    return validate_safe_id(cid, "chunk id")


def validate_pending_id(pid: object) -> str:
    """A pending evidence id, checked as a chunk id is."""
    return validate_safe_id(pid, "pending id")


def validate_session_id(sid: object) -> str:
    """A session id (an archive's folder name), checked as a chunk id is."""
    return validate_safe_id(sid, "session id")


__all__ = [
    "CHUNK_ID_MAX_LEN",
    "CHUNK_ID_RE",
    "validate_chunk_id",
    "validate_pending_id",
    "validate_safe_id",
    "validate_session_id",
]
