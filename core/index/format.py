"""index.yaml's text (contract §6): the entry, how the writer renders entries and the whole
index, where an entry's text lies in the writer's layout, and the next chunk id.

Pure: text and values in, text and values out; no file is read or written here (the reader is
core.index.reader, the writer core.index.catalog). The writer's layout: `version: N` and
`chunks:` (INDEX_HEAD), then each entry rendered alone (`entry_text`), starting `- ` at column
0, one after the other; byte for byte what `render_index(entries)` gives, and what a pass
appends to.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml

from core.errors import BadInputError, SessionMemoryError, StoreError
from core.ids import CHUNK_ID_MAX_LEN, CHUNK_ID_RE, validate_chunk_id
from core.index.scan import (
    Unrecognised,
    decode_index,
    load_entry,
    scan_entries,
    scan_scalar,
    split_index,
)
from core.yaml_safe import strict_load

INDEX_VERSION = 1
CUT_META_KEYS = (
    "first_kept_event_id",
    "tokens_before",
    "kept_tokens_estimate",
    "is_split_turn",
    "turn_start_event_id",
)
_ENTRY_KEYS = (
    "chunk_id",
    "created_at",
    "event_count",
    "first_event_id",
    "last_event_id",
    "summary",
    "cut_meta",
)
_CHUNK_NUMBER_RE = re.compile(r"^chunk_(\d+)$")


def _is_empty(value: Any) -> bool:
    """Go's omitempty: None, "", 0, False and empty containers are left out."""
    if value is None or value is False:
        return True
    if isinstance(value, (str, list, dict, tuple)) and not value:
        return True
    return isinstance(value, int) and value == 0


def _as_text(value: Any) -> str:
    """YAML turns an unquoted timestamp into a datetime; give it back as RFC 3339 text."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        moment: datetime = value
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC).replace(tzinfo=None)
        return moment.isoformat() + "Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        return value
    return str(value)


def _opt_text(value: Any) -> str | None:
    return None if value is None else _as_text(value)


@dataclass
class ChunkEntry:
    """One entry of index.yaml. Unknown fields (summary_backend, …) stay in `extra`."""

    chunk_id: str
    created_at: str
    event_count: int
    first_event_id: str | None
    last_event_id: str | None
    summary: str
    cut_meta: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "chunk_id": validate_chunk_id(self.chunk_id),
            "created_at": self.created_at,
            "event_count": self.event_count,
            "first_event_id": self.first_event_id,
            "last_event_id": self.last_event_id,
            "summary": self.summary,
        }
        given = self.cut_meta or {}
        ordered = [k for k in CUT_META_KEYS if k in given] + [
            k for k in given if k not in CUT_META_KEYS
        ]
        meta = {k: given[k] for k in ordered if not _is_empty(given[k])}
        if meta:
            out["cut_meta"] = meta
        out.update((k, v) for k, v in self.extra.items() if k not in _ENTRY_KEYS)
        return out

    @classmethod
    def from_dict(cls, obj: object, where: str) -> ChunkEntry:
        """ChunkIdError for a bad id, StoreError when not a mapping; other fields are lenient
        (a missing or mistyped optional field gets its default)."""
        if not isinstance(obj, dict):
            raise StoreError(f"{where}: a chunk entry must be a mapping, got {type(obj).__name__}")
        try:
            chunk_id = validate_chunk_id(obj.get("chunk_id"))
        except BadInputError as exc:
            raise type(exc)(f"{where}: {exc}") from exc
        count = obj.get("event_count")
        cut_meta = obj.get("cut_meta")
        return cls(
            chunk_id=chunk_id,
            created_at=_as_text(obj.get("created_at")),
            event_count=count if isinstance(count, int) and not isinstance(count, bool) else 0,
            first_event_id=_opt_text(obj.get("first_event_id")),
            last_event_id=_opt_text(obj.get("last_event_id")),
            summary=_as_text(obj.get("summary")),
            cut_meta=dict(cut_meta) if isinstance(cut_meta, dict) and cut_meta else None,
            extra={k: v for k, v in obj.items() if k not in _ENTRY_KEYS},
        )


@dataclass
class IndexRead:
    entries: list[ChunkEntry]
    warnings: list[str]
    exists: bool = False


def collect_entries(
    raws: Iterable[object], path: Path | str, warnings: list[str] | None = None
) -> IndexRead:
    """The entries of index.yaml's `chunks` list, in order: one that is not a valid entry, or
    repeats an id, is skipped with a warning (appended to `warnings`). Both of read_index's
    routes (scanned, strict) end here, so both accept and refuse the same entries."""
    warnings = [] if warnings is None else warnings
    entries: list[ChunkEntry] = []
    seen: set[str] = set()
    for i, raw in enumerate(raws, 1):
        try:
            entry = ChunkEntry.from_dict(raw, f"{path}: chunk {i}")
        except SessionMemoryError as exc:
            warnings.append(f"{exc}; entry skipped")
            continue
        if entry.chunk_id in seen:
            warnings.append(f"{path}: chunk {i}: duplicate chunk id {entry.chunk_id!r}; skipped")
            continue
        seen.add(entry.chunk_id)
        entries.append(entry)
    return IndexRead(entries, warnings, exists=True)


class _IndexDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Multi-line strings as `|` block scalars so summaries read naturally in the file
    (libyaml's emitter when available: the same text, ~4x faster). Never an alias: the
    reader refuses them (see core.yaml_safe)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_LINE_BREAKS = "\n\x85\u2028\u2029"


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """A `|` block scalar for multi-line text, except text ending in more than one line
    break: that needs keep-chomping (`|+`), after which the emitter closes the document
    with a `...` line, and an entry written or appended after it makes index.yaml
    unreadable. Such text is double-quoted instead (the same string read back)."""
    if "\n" in value:
        keeps = value[-1] in _LINE_BREAKS and (len(value) == 1 or value[-2] in _LINE_BREAKS)
        style = '"' if keeps else "|"
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_IndexDumper.add_representer(str, _represent_str)


def render_index(entries: Sequence[ChunkEntry]) -> str:
    """index.yaml text; ChunkIdError when an entry has an invalid id."""
    doc = {"version": INDEX_VERSION, "chunks": [e.to_dict() for e in entries]}
    return yaml.dump(doc, Dumper=_IndexDumper, allow_unicode=True, sort_keys=False, width=100)


def next_chunk_id(existing: Iterable[str]) -> str:
    """`chunk_NNNN` after the highest `chunk_NNNN` in `existing` (other ids are ignored)."""
    highest = 0
    for cid in existing:
        match = _CHUNK_NUMBER_RE.match(cid) if isinstance(cid, str) else None
        if match:
            highest = max(highest, int(match.group(1)))
    return f"chunk_{highest + 1:04d}"


INDEX_HEAD = f"version: {INDEX_VERSION}\nchunks:\n".encode()
"""How an index.yaml the writer produced begins when it has entries; entries follow, each
starting with `- ` at column 0 (the only column-0 text after this head)."""
_ENTRY_START_RE = re.compile(rb"^- ", re.M)
_COLUMN0_RE = re.compile(rb"^(?!- )[^\s]", re.M)


def entry_text(entry: ChunkEntry) -> bytes:
    """The bytes of one entry in the writer's layout: what a pass appends for `entry`."""
    return render_index([entry]).encode("utf-8")[len(INDEX_HEAD) :]


def text_digest(data: bytes) -> str:
    """The digest a pass records of the entry text it appends (core.index.catalog
    truncate_torn_append compares it)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def entry_digest(entry: ChunkEntry) -> str:
    return text_digest(entry_text(entry))


def index_text(entries: Sequence[ChunkEntry]) -> tuple[bytes, list[bytes]]:
    """index.yaml written whole: the file's bytes and each entry's text (the same bytes as
    `render_index(entries)`)."""
    bodies = [entry_text(e) for e in entries]
    data = INDEX_HEAD + b"".join(bodies) if entries else render_index(entries).encode("utf-8")
    return data, bodies


def entry_spans(data: bytes, base: int) -> list[tuple[int, int]] | None:
    """Byte ranges of the entries after `base`, or None when the text is not in the writer's
    layout (column-0 text other than `- `, no final newline)."""
    if len(data) == base:
        return []
    if not data.endswith(b"\n") or _COLUMN0_RE.search(data, base):
        return None
    starts = [m.start() for m in _ENTRY_START_RE.finditer(data, base)]
    if not starts or starts[0] != base:
        return None
    return list(zip(starts, [*starts[1:], len(data)], strict=True))


def entries_after(
    data: bytes, base: int, known: Iterable[str], where: Path | str
) -> list[tuple[ChunkEntry, int, int]] | None:
    """The entries in data[base:] with their byte ranges in `data`, when that text is in the
    writer's layout and holds valid entries only, none with an id in `known` or repeated;
    else None (the caller parses the file whole)."""
    segments = entry_spans(data, base)
    if segments is None:
        return None
    if not segments:
        return []
    doc = scan_entries(data[base:])  # the strict loader's items, scanned (core.index.scan)
    if doc is None:
        try:
            doc = strict_load(data[base:])
        except yaml.YAMLError:
            return None
    if not isinstance(doc, list) or len(doc) != len(segments):
        return None
    out: list[tuple[ChunkEntry, int, int]] = []
    seen = set(known)
    for raw, (start, end) in zip(doc, segments, strict=True):
        try:
            entry = ChunkEntry.from_dict(raw, str(where))
        except (SessionMemoryError, BadInputError):
            return None
        if entry.chunk_id in seen:
            return None
        seen.add(entry.chunk_id)
        out.append((entry, start, end))
    return out


def ends_closed(data: bytes) -> bool:
    """index.yaml ends with a `...` document-end line (written after a `|+` summary by
    versions before the fix, with a catalog that took it for appendable): an entry appended
    after it would make the file unreadable, so the next pass writes the file whole. (A
    parse of the text finds no writer's layout there: `entry_spans` refuses column-0 text.)"""
    return data.endswith(b"\n...\n") or data.endswith(b"\n...")


def head_end(data: bytes, n: int) -> int | None:
    """Where the (n+1)th entry of the index text `data` (its start) begins, or None when
    `data` holds no more than n entries (a first page is read block by block until this
    answers)."""
    at, found = 0, 0
    while (at := data.find(b"\n- ", at)) >= 0:
        found += 1
        at += 1
        if found > n:
            return at
    return None


def head_entries(data: bytes, where: Path | str) -> list[ChunkEntry] | None:
    """The entries of the start of an index's text (a first page), as the reader would keep
    them; None when the text is not in the writer's shape (the full read decides). Entries
    that would be skipped are left out silently: the full read reports them."""
    text = decode_index(data)
    split = None if text is None else split_index(text)
    if split is None:
        return None
    out: list[ChunkEntry] = []
    seen: set[str] = set()
    for entry_text in split[1]:
        try:
            entry = ChunkEntry.from_dict(load_entry(entry_text), str(where))
        except (yaml.YAMLError, RecursionError, SessionMemoryError):
            continue
        if entry.chunk_id not in seen:
            seen.add(entry.chunk_id)
            out.append(entry)
    return out


_ID_LINE = re.compile(rb"\n- chunk_id: ([^\n]*)")


def count_entries(data: bytes) -> int | None:
    """The entries the reader would keep (valid, first of their id) in the index text `data`,
    from its `- chunk_id:` lines alone, without building any entry; None unless every entry
    starts with one in the emitter's shape."""
    if not data.startswith(b"version: ") or b"\nchunks:\n- chunk_id: " not in data[:64]:
        return None
    ids = _ID_LINE.findall(data)
    if len(ids) != data.count(b"\n- ") or b"\n..." in data or b"\n---" in data:
        return None
    seen: set[str] = set()
    try:
        for raw in ids:
            value = scan_scalar(raw.decode("utf-8"))
            valid = isinstance(value, str) and len(value) <= CHUNK_ID_MAX_LEN
            if valid and CHUNK_ID_RE.fullmatch(value):
                seen.add(value)
    except (Unrecognised, UnicodeDecodeError):
        return None
    return len(seen)


__all__ = [
    "CUT_META_KEYS",
    "INDEX_HEAD",
    "INDEX_VERSION",
    "ChunkEntry",
    "IndexRead",
    "collect_entries",
    "count_entries",
    "ends_closed",
    "entries_after",
    "entry_digest",
    "entry_spans",
    "entry_text",
    "head_end",
    "head_entries",
    "index_text",
    "next_chunk_id",
    "render_index",
    "text_digest",
]
