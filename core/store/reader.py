"""Incremental reading of events.jsonl for viewers (the TUI) and the manager.

`EventTail.poll()` reads only the bytes appended since the previous poll, so a viewer of a
large session costs nothing per refresh. A compaction or rotation rewrites the file (new inode,
shorter file, different first line): that is reported as `reset` and the file is read again
from the start. Parsing is `core.jsonl.parse_event_lines`, the same parser the store uses.

`Record` is not `core.jsonl.ParsedLine` under another name: a ParsedLine is what the parser
finds (the store keeps a corrupt line's bytes whole, to quarantine them), a Record is a
viewer's row: the same line with its token estimate and a corrupt line's bytes capped for
display. Following a file across polls and rewrites is this module's idea, not the format's.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from core.errors import StoreError
from core.jsonl import ParsedLine, parse_event_lines
from core.store.atomic import open_no_symlink
from core.tokens import estimate_event_tokens

RAW_KEEP_BYTES = 64 * 1024
"""A corrupt line's bytes are kept up to this size for display (the file keeps them all)."""


@dataclass(frozen=True, slots=True)
class Record(ParsedLine):
    """One non-blank line of the file as parsed (an event, or a corrupt line with its error;
    `raw` kept up to RAW_KEEP_BYTES), with the event's token estimate."""

    tokens: int


@dataclass(frozen=True)
class TailUpdate:
    """`reset`: the file was rewritten or vanished; drop what you had, `records` start at line 1."""

    reset: bool
    records: list[Record]
    more: bool = False
    """Only with `poll(max_bytes=...)`: complete lines are left to read; poll again."""


def _line_hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class EventTail:
    """Remembers inode, byte offset and the first line's hash of the file it follows."""

    def __init__(self, path: Path | str, *, tokens: bool = True) -> None:
        """`tokens=False`: records carry 0 instead of their token estimate (a reader that
        never shows tokens does not pay for them)."""
        self.path = Path(path)
        self._tokens = tokens
        self._inode: int | None = None
        self._offset = 0
        self._next_line = 1
        self._first_line: tuple[int, bytes] | None = None

    @property
    def offset(self) -> int:
        """Bytes of complete lines delivered so far."""
        return self._offset

    def _forget(self) -> None:
        self._inode = None
        self._offset = 0
        self._next_line = 1
        self._first_line = None

    def _rewritten(self, fd: int, inode: int, size: int) -> bool:
        if self._inode is None:
            return False
        if inode != self._inode or size < self._offset:
            return True
        if self._first_line is not None:
            length, digest = self._first_line
            if _line_hash(os.pread(fd, length, 0)) != digest:
                return True
        return False

    def poll(self, max_bytes: int | None = None) -> TailUpdate:
        """Records appended since the last poll (complete lines only; a partial one waits).

        `max_bytes` caps what one call reads (a longer single line is still read whole), so a
        caller can load a big file piece by piece; `more` then says whether to call again.
        """
        try:
            fh = os.fdopen(open_no_symlink(self.path, os.O_RDONLY), "rb")
        except FileNotFoundError:
            had = self._inode is not None
            self._forget()
            return TailUpdate(reset=had, records=[])
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        try:
            st = os.fstat(fh.fileno())
            reset = self._rewritten(fh.fileno(), st.st_ino, st.st_size)
            if reset:
                self._forget()
            self._inode = st.st_ino
            fh.seek(self._offset)
            data = fh.read() if max_bytes is None else _read_lines(fh, max(1, max_bytes))
            more = max_bytes is not None and self._offset + len(data) < st.st_size
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        finally:
            fh.close()
        parsed = parse_event_lines(
            data, base_offset=self._offset, base_line=self._next_line, final=False
        )
        if self._first_line is None and parsed.consumed and self._offset == 0:
            first = data[: data.index(b"\n") + 1]
            self._first_line = (len(first), _line_hash(first))
        self._offset += parsed.consumed
        self._next_line = parsed.next_line
        records = [
            Record(
                line_no=p.line_no,
                offset=p.offset,
                length=p.length,
                event=p.event,
                error=p.error,
                raw=p.raw[:RAW_KEEP_BYTES],
                tokens=0 if p.event is None or not self._tokens else estimate_event_tokens(p.event),
            )
            for p in parsed.lines
        ]
        return TailUpdate(reset=reset, records=records, more=more and parsed.consumed > 0)


def _read_lines(fh: BinaryIO, max_bytes: int) -> bytes:
    """About max_bytes, extended to the end of a line when the piece holds no line end."""
    data = fh.read(max_bytes)
    while len(data) >= max_bytes and b"\n" not in data:
        piece = fh.read(max_bytes)
        if not piece:
            break
        data += piece
        max_bytes += len(piece)
    return data


__all__ = ["RAW_KEEP_BYTES", "EventTail", "Record", "TailUpdate"]
