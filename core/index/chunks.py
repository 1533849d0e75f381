"""chunks/index.yaml, chunk files and pending evidence (contract §6 and §8).

Every file name here comes from an id checked by `validate_chunk_id`, so nothing read from
index.yaml or a directory listing can open a file outside `chunks/`. The index is read by
core.index.scan when it is in the writer's shape, else with the strict safe loader
(core.yaml_safe) only: a tag that would construct a Python object is refused, never run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml

from core.errors import BadInputError, IndexCorruptError, SessionMemoryError, StoreError
from core.events import Event
from core.index.scan import scan_index
from core.jsonl import CorruptLine, parse_event_lines, stored_events_bytes
from core.store.atomic import atomic_write_bytes, fsync_dir, read_bytes_no_symlink
from core.store.faults import fault_point
from core.store.paths import CHUNK_ID_MAX_LEN, CHUNK_ID_RE, MemoryPaths, validate_chunk_id
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
_REPAIR_HINT = "run `session-inspector repair`"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


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


def _index_error(path: Path, what: str) -> IndexCorruptError:
    return IndexCorruptError(f"{path}: {what}; {_REPAIR_HINT}")


_INDEX_CACHE: dict[str, tuple[bytes, list[ChunkEntry], list[str]]] = {}
_INDEX_CACHE_GUARD = threading.Lock()


def _copy_entry(entry: ChunkEntry) -> ChunkEntry:
    """A copy whose mappings are its own (the constructor, not dataclasses.replace: 10,000
    of them per cold read of a long index)."""
    return ChunkEntry(
        entry.chunk_id,
        entry.created_at,
        entry.event_count,
        entry.first_event_id,
        entry.last_event_id,
        entry.summary,
        dict(entry.cut_meta) if entry.cut_meta is not None else None,
        dict(entry.extra),
    )


def read_index(paths: MemoryPaths) -> IndexRead:
    """Entries of index.yaml; IndexCorruptError when the file as a whole cannot be used.

    Single bad entries (not a mapping, invalid id, duplicate id) are skipped with a warning.
    The file is read every time, but parsed only when its bytes changed (a digest-keyed cache:
    a pass, a prompt and a status all read the index, and parsing 1,000 entries takes tens of
    milliseconds); callers get their own copies of the entries.
    """
    path = paths.index
    paths.ensure_inside_root(paths.chunks_dir)
    try:
        data = read_bytes_no_symlink(path)
    except FileNotFoundError:
        return IndexRead([], [], exists=False)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
    key = str(path)
    digest = hashlib.blake2b(data, digest_size=16).digest()
    with _INDEX_CACHE_GUARD:
        cached = _INDEX_CACHE.get(key)
    if cached is not None and cached[0] == digest:
        return IndexRead([_copy_entry(e) for e in cached[1]], list(cached[2]), exists=True)
    read = _parse_index(path, data)
    kept = [_copy_entry(e) for e in read.entries]
    with _INDEX_CACHE_GUARD:
        if len(_INDEX_CACHE) > 16:
            _INDEX_CACHE.clear()
        _INDEX_CACHE[key] = (digest, kept, list(read.warnings))
    return read


def _parse_index(path: Path, data: bytes) -> IndexRead:
    """The index's entries: scanned when the file is in the writer's shape (core.index.scan,
    ~5x faster), else through the strict loader, whose answer the scanner's always equals."""
    scanned = scan_index(data)
    if scanned is None:
        return _parse_index_strict(path, data)
    warnings: list[str] = []
    if scanned.version != INDEX_VERSION:
        warnings.append(f"{path}: version {scanned.version!r}, this program writes {INDEX_VERSION}")
    return collect_entries(scanned.entries, path, warnings)


def _parse_index_strict(path: Path, data: bytes) -> IndexRead:
    """The index through the strict YAML loader: the reference reading of any file."""
    try:
        doc = strict_load(data)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "unreadable"
        raise _index_error(path, f"not valid YAML{line} ({problem})") from exc
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "unreadable"
        raise _index_error(path, f"not valid YAML ({first})") from exc
    warnings: list[str] = []
    if doc is None:
        return IndexRead([], warnings, exists=True)
    if not isinstance(doc, dict):
        raise _index_error(path, f"not a mapping (a YAML {type(doc).__name__})")
    version = doc.get("version", INDEX_VERSION)
    if version != INDEX_VERSION:
        warnings.append(f"{path}: version {version!r}, this program writes {INDEX_VERSION}")
    raw_chunks = doc.get("chunks")
    if raw_chunks is None:
        return IndexRead([], warnings, exists=True)
    if not isinstance(raw_chunks, list):
        raise _index_error(path, f"`chunks` is not a list (a YAML {type(raw_chunks).__name__})")
    return collect_entries(raw_chunks, path, warnings)


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


def _make_dir(paths: MemoryPaths, folder: Path) -> None:
    """Create `folder` (and its parents); a new one is made durable in its parent, so files
    written in it (pending evidence) cannot outlive a power cut while their folder does not."""
    paths.ensure_inside_root(folder)
    if folder.is_dir():
        return
    missing = [folder, *(p for p in folder.parents if not p.exists())]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create {folder}: {_reason(exc)}") from exc
    for created in reversed(missing):
        fsync_dir(created.parent)


def write_index(paths: MemoryPaths, entries: Sequence[ChunkEntry]) -> None:
    """Atomically write index.yaml whole (caller holds the session lock), and its catalog
    (core.index.catalog) from the same entries, so the next reader needs no full parse.

    The text is `version`/`chunks:` and each entry rendered alone, one after the other:
    byte for byte what `render_index(entries)` gives, and what a pass appends to."""
    from core.index.catalog import INDEX_HEAD, entry_text, write_catalog_for

    bodies = [entry_text(e) for e in entries]
    data = INDEX_HEAD + b"".join(bodies) if entries else render_index(entries).encode("utf-8")
    _make_dir(paths, paths.chunks_dir)
    atomic_write_bytes(paths.index, data)
    if entries:
        write_catalog_for(paths, list(entries), bodies, data)


def write_chunk_file(paths: MemoryPaths, chunk_id: str, events: Sequence[Event]) -> Path:
    """Atomically write `chunks/<chunk_id>.jsonl`; returns its path."""
    path = paths.chunk_file(chunk_id)
    data = stored_events_bytes(events, f"chunk {chunk_id} event")
    _make_dir(paths, paths.chunks_dir)
    atomic_write_bytes(path, data)
    return path


def _read_jsonl(path: Path) -> tuple[list[Event], list[CorruptLine]]:
    try:
        data = read_bytes_no_symlink(path)
    except FileNotFoundError:
        raise StoreError(f"missing file {path}") from None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
    parsed = parse_event_lines(data, final=True)
    return parsed.events, parsed.corrupt


def read_chunk_events(paths: MemoryPaths, chunk_id: str) -> tuple[list[Event], list[CorruptLine]]:
    """The events of a chunk file and its unparsable lines; StoreError when it is missing."""
    path = paths.chunk_file(chunk_id)
    paths.ensure_inside_root(paths.chunks_dir)
    return _read_jsonl(path)


def next_chunk_id(existing: Iterable[str]) -> str:
    """`chunk_NNNN` after the highest `chunk_NNNN` in `existing` (other ids are ignored)."""
    highest = 0
    for cid in existing:
        match = _CHUNK_NUMBER_RE.match(cid) if isinstance(cid, str) else None
        if match:
            highest = max(highest, int(match.group(1)))
    return f"chunk_{highest + 1:04d}"


def _valid_stem(name: str, suffix: str) -> str | None:
    if not name.endswith(suffix):
        return None
    stem = name[: -len(suffix)]
    try:
        return validate_chunk_id(stem)
    except BadInputError:
        return None


def list_chunk_files(paths: MemoryPaths, warnings: list[str] | None = None) -> list[str]:
    """Ids of the `*.jsonl` files in chunks/ (sorted); files with invalid names are skipped."""
    return _jsonl_ids(paths, paths.chunks_dir, "chunk", warnings)


def chunk_file_names(paths: MemoryPaths, not_regular: set[str] | None = None) -> set[str]:
    """The stems of `chunks/*.jsonl`, from one listing (no stat, no id check): what is cheap
    to compare with the index's ids at 10,000 chunks. `list_chunk_files` is the checked list.

    With `not_regular`, the stems whose entry is no regular file (a FIFO, a folder) are put
    there instead: the directory entry's type says so without a stat, and status must warn
    about a chunk that cannot be recalled from."""
    folder = paths.chunks_dir
    paths.ensure_inside_root(folder)
    names: set[str] = set()
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                name = entry.name
                if not name.endswith(".jsonl") or name.startswith("."):
                    continue
                if not_regular is not None and not entry.is_file():
                    not_regular.add(name[:-6])
                else:
                    names.add(name[:-6])
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise StoreError(f"cannot list {folder}: {_reason(exc)}") from exc
    return names


def _jsonl_ids(
    paths: MemoryPaths, folder: Path, noun: str, warnings: list[str] | None
) -> list[str]:
    """Sorted ids of the `<id>.jsonl` files in `folder`; invalid names skipped with a warning."""
    paths.ensure_inside_root(folder)
    try:
        with os.scandir(folder) as listing:
            names = sorted(d.name for d in listing if d.is_file())
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"cannot list {folder}: {_reason(exc)}") from exc
    ids: list[str] = []
    for name in names:
        if not name.endswith(".jsonl") or name.startswith("."):
            continue
        cid = _valid_stem(name, ".jsonl")
        if cid is None:
            if warnings is not None:
                warnings.append(f"{folder / name}: not a valid {noun} id; ignored")
            continue
        ids.append(cid)
    return ids


# --------------------------------------------------------------------------- pending evidence


def new_pending_id() -> str:
    """`pending-<UTC time>-<6 hex>`: sorts by creation time."""
    return f"pending-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%fZ')}-{secrets.token_hex(3)}"


@dataclass
class PendingEvidence:
    """Events cut by a pass that is not finished yet, with its sidecar (summary, cut data)."""

    pending_id: str
    events: list[Event]
    meta: dict[str, Any]
    corrupt: list[CorruptLine]


def pending_meta_bytes(meta: dict[str, Any], where: Path) -> bytes:
    """A pending sidecar's bytes (indented JSON, UTF-8; ASCII escapes when the meta holds a
    lone surrogate): the one format `write_pending` and a pass's staging both write."""
    try:
        text = json.dumps(meta, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(meta, indent=2, allow_nan=False) + "\n").encode("ascii")
    except (TypeError, ValueError, RecursionError) as exc:
        raise StoreError(f"cannot write {where}: meta is not JSON ({exc})") from exc


def write_pending(
    paths: MemoryPaths, pending_id: str, events: Sequence[Event], meta: dict[str, Any]
) -> None:
    """Atomically write `<id>.jsonl`, then `<id>.meta.json` (caller holds the session lock):
    pending evidence in one step (a pass stages the same bytes unlocked and publishes them
    under the lock, core.maintenance.compaction_pass)."""
    events_path = paths.pending_file(pending_id)
    meta_path = paths.pending_meta_file(pending_id)
    data = stored_events_bytes(events, f"pending {pending_id} event")
    meta_bytes = pending_meta_bytes(meta, meta_path)
    _make_dir(paths, paths.pending_dir)
    atomic_write_bytes(events_path, data)
    fault_point("between_pending_writes")
    atomic_write_bytes(meta_path, meta_bytes)


def _read_meta(path: Path, warnings: list[str] | None) -> dict[str, Any]:
    try:
        obj = json.loads(read_bytes_no_symlink(path).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        if warnings is not None:
            warnings.append(f"{path}: unreadable ({exc}); using empty meta")
        return {}
    if not isinstance(obj, dict):
        if warnings is not None:
            warnings.append(f"{path}: not a JSON object; using empty meta")
        return {}
    return obj


def list_pending(paths: MemoryPaths, warnings: list[str] | None = None) -> list[PendingEvidence]:
    """Pending evidence sorted by id; a `.jsonl` without meta is listed with meta {}.

    Files with invalid ids are skipped, with a warning added to `warnings` when given.
    """
    out: list[PendingEvidence] = []
    for pid in _jsonl_ids(paths, paths.pending_dir, "pending", warnings):
        try:
            events, corrupt = _read_jsonl(paths.pending_file(pid))
        except StoreError as exc:
            if warnings is not None:
                warnings.append(f"{exc}; ignored")
            continue
        out.append(
            PendingEvidence(
                pid, events, _read_meta(paths.pending_meta_file(pid), warnings), corrupt
            )
        )
    return out


def delete_pending(paths: MemoryPaths, pending_id: str, *, durable: bool = True) -> None:
    """Remove the evidence and its sidecar (either may already be gone).

    `durable=False` skips the folder fsync: for evidence already indexed, where an unlink lost
    to a crash only leaves a file recovery deletes again.
    """
    targets = (paths.pending_file(pending_id), paths.pending_meta_file(pending_id))
    paths.ensure_inside_root(paths.pending_dir)
    removed = False
    for path in targets:
        if removed:
            fault_point("between_pending_deletes")
        try:
            path.unlink()
            removed = True
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(f"cannot delete {path}: {_reason(exc)}") from exc
    if removed and durable:
        with contextlib.suppress(StoreError):
            fsync_dir(paths.pending_dir)


__all__ = [
    "CHUNK_ID_MAX_LEN",
    "CHUNK_ID_RE",
    "CUT_META_KEYS",
    "INDEX_VERSION",
    "ChunkEntry",
    "IndexRead",
    "PendingEvidence",
    "chunk_file_names",
    "delete_pending",
    "list_chunk_files",
    "list_pending",
    "new_pending_id",
    "next_chunk_id",
    "pending_meta_bytes",
    "read_chunk_events",
    "read_index",
    "render_index",
    "validate_chunk_id",
    "write_chunk_file",
    "write_index",
    "write_pending",
]
