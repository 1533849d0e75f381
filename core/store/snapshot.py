"""events.jsonl at one moment (`EventsSnapshot`), and pinning: the file held open at a size
taken under the session lock, so a pass can read and parse it without the lock and check
at commit, in O(1), that nothing rewrote it meanwhile (see PinnedEvents).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import StoreError
from core.events import Event
from core.jsonl import CorruptLine, parse_event_lines
from core.scrub import strip_screenshot_data
from core.store.atomic import open_no_symlink
from core.tokens import estimate_event_tokens

DIGEST_SIZE = 32
READ_BLOCK = 1 << 20


def new_digest() -> Any:
    """The digest a snapshot's bytes are compared by."""
    return hashlib.blake2b(digest_size=DIGEST_SIZE)


@dataclass
class EventsSnapshot:
    """events.jsonl at one moment: what a compaction pass plans on and later checks against."""

    events: list[Event]
    tokens: list[int]
    corrupt: list[CorruptLine]
    size: int
    inode: int
    digest: bytes
    partial_tail: bytes = b""
    next_line: int = 1
    """Line number the first line after `size` bytes has (for parsing appended bytes)."""
    pinned: PinnedEvents | None = None
    """Set by `read_pinned`: the open file the snapshot was read from (see PinnedEvents)."""
    end_digest: bytes = b""
    """Digest of the last END_CHECK_BYTES bytes of the snapshot (with `pinned`)."""
    raw: bytes = b""
    """The bytes the events were parsed from (with `pinned`), so their lines can be copied
    verbatim instead of serialized again."""
    spans: list[tuple[int, int]] | None = None
    """For each event, (offset, length) of its line in `raw`, newline included."""

    def lines_of(self, indices: Sequence[int]) -> bytes | None:
        """The stored lines of these events as they are in `raw`; None when any of them
        would be written differently (a screenshot payload still to scrub) or there is no
        `raw`: then serialize the events instead."""
        if self.spans is None:
            return None
        raw, spans, events = self.raw, self.spans, self.events
        parts: list[bytes] = []
        for i in indices:
            event = events[i]
            if event.get("type") == "tool_result" and strip_screenshot_data(event) is not event:
                return None
            offset, length = spans[i]
            parts.append(raw[offset : offset + length])
        return b"".join(parts)

    @property
    def event_count(self) -> int:
        return len(self.events)

    def close(self) -> None:
        """Release the pinned file, if any (the snapshot stays usable as data)."""
        if self.pinned is not None:
            self.pinned.close()


END_CHECK_BYTES = 64 * 1024


@dataclass
class PinnedEvents:
    """events.jsonl held open at a size taken under the lock.

    While the descriptor is open its inode cannot be freed, so it cannot be reused: at commit,
    "the path still names this inode" proves no rewrite (every rewrite is an atomic replace,
    a new inode), and a digest of the snapshot's last bytes catches an in-place truncate and
    rewrite. That makes the pass's prefix check O(1) instead of hashing the whole snapshot
    under the lock, and lets the snapshot itself be read and parsed without the lock.
    """

    fd: int
    size: int
    device: int
    inode: int

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


def empty_snapshot() -> EventsSnapshot:
    """The snapshot of a missing events.jsonl."""
    return EventsSnapshot([], [], [], 0, 0, new_digest().digest())


def pin_file(path: Path) -> PinnedEvents | None:
    """Open `path` at its current size; None when it is missing (the caller holds the lock,
    so everything up to that size is whole lines of finished appends)."""
    try:
        fd = open_no_symlink(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return PinnedEvents(fd=fd, size=st.st_size, device=st.st_dev, inode=st.st_ino)


def read_pinned(path: Path, pinned: PinnedEvents) -> EventsSnapshot:
    """Parse the pinned bytes (no lock needed) into a snapshot that keeps the pin; an
    unterminated last line is corrupt (under the lock it was a crashed writer's leftover)."""
    try:
        data = pread_all(pinned.fd, pinned.size, 0)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    parsed = parse_event_lines(data, final=True)
    events = parsed.events
    spans = [(p.offset, p.length) for p in parsed.lines if p.event is not None]
    end = data[max(0, parsed.consumed - END_CHECK_BYTES) : parsed.consumed]
    return EventsSnapshot(
        events=events,
        tokens=[estimate_event_tokens(e) for e in events],
        corrupt=parsed.corrupt,
        size=parsed.consumed,
        inode=pinned.inode,
        digest=b"",
        partial_tail=parsed.tail,
        next_line=parsed.next_line,
        pinned=pinned,
        end_digest=hashlib.blake2b(end, digest_size=DIGEST_SIZE).digest(),
        raw=data,
        spans=spans,
    )


def still_prefix(path: Path, snap: EventsSnapshot) -> tuple[bool, bytes]:
    """Whether the file at `path` still begins with `snap`'s bytes, and what was appended
    since. With a pin: same inode (the pin keeps it from reuse) and the same last bytes;
    without: a digest of the whole prefix (an equal inode alone proves nothing)."""
    if snap.pinned is not None and snap.pinned.fd >= 0:
        return _pinned_still_prefix(path, snap, snap.pinned)
    try:
        with os.fdopen(open_no_symlink(path, os.O_RDONLY), "rb") as fh:
            if os.fstat(fh.fileno()).st_size < snap.size:
                return False, b""
            digest = new_digest()
            left = snap.size
            while left:
                block = fh.read(min(left, READ_BLOCK))
                if not block:
                    return False, b""
                digest.update(block)
                left -= len(block)
            if digest.digest() != snap.digest:
                return False, b""
            return True, fh.read()
    except FileNotFoundError:
        return snap.size == 0, b""
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _pinned_still_prefix(path: Path, snap: EventsSnapshot, pin: PinnedEvents) -> tuple[bool, bytes]:
    try:
        fd = open_no_symlink(path, os.O_RDONLY)
    except FileNotFoundError:
        return False, b""
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (pin.device, pin.inode) or st.st_size < snap.size:
            return False, b""
        start = max(0, snap.size - END_CHECK_BYTES)
        end = pread_all(fd, snap.size - start, start)
        if hashlib.blake2b(end, digest_size=DIGEST_SIZE).digest() != snap.end_digest:
            return False, b""
        return True, pread_all(fd, st.st_size - snap.size, snap.size)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def pread_all(fd: int, length: int, offset: int) -> bytes:
    """Exactly `length` bytes at `offset` (fewer only at end of file)."""
    parts: list[bytes] = []
    while length > 0:
        block = os.pread(fd, min(length, 1 << 30), offset)
        if not block:
            break
        parts.append(block)
        offset += len(block)
        length -= len(block)
    return parts[0] if len(parts) == 1 else b"".join(parts)


__all__ = [
    "END_CHECK_BYTES",
    "EventsSnapshot",
    "PinnedEvents",
    "empty_snapshot",
    "new_digest",
    "pin_file",
    "read_pinned",
    "still_prefix",
]
