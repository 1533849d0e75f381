"""The session's files on disk: the lock, events.jsonl, state.json and corrupt.jsonl.

Appends are the hot path of an agent turn, so they never read events.jsonl: a line handed to
write() on an O_APPEND descriptor is in the page cache and survives a crash of this process.
When it reaches the disk (what a power cut can lose) is the `durability` setting: `always`
fsyncs before the append returns, `run` (the default) syncs at the end of a CLI append, at
`commit_run` and in the background within `fsync_interval_ms`, `relaxed` leaves it to the OS.
Every rewrite (compaction, repair, state) is fsynced. Everything that changes files under
`session/` holds the session lock (`M/.session.lock`, a flock: a process that dies releases
it).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import filelock

from core.atomic import (
    atomic_write_bytes,
    fsync_dir,
    open_no_symlink,
    read_bytes_no_symlink,
    stage_bytes,
    write_all,
)
from core.errors import (
    BadInputError,
    EventError,
    LockTimeoutError,
    StoreError,
)
from core.events import Event, new_event_id, now_ts, validate_event
from core.paths import MemoryPaths, validate_chunk_id
from core.scrub import strip_screenshot_data
from core.tokens import estimate_event_tokens
from core.trigger import PromptSize, prompt_size

DURABILITY_MODES = ("run", "always", "relaxed")
"""When appends reach the disk (the config's `durability`; see SessionStore)."""

MAX_PROMPT_TOKENS = 10**12
"""Largest prompt size kept (a sanity cap: larger is a bug upstream, and would overflow floats)."""

MAX_EVENT_BYTES = 8 * 1024 * 1024
"""Largest serialized event line (without its newline) that is appended or read as an event."""

_LOCK_POLL_SECONDS = 0.002
_DIGEST_SIZE = 32
_READ_BLOCK = 1 << 20


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _digest() -> Any:
    return hashlib.blake2b(digest_size=_DIGEST_SIZE)


def _file_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def new_session_id() -> str:
    """`s-<UTC time>-<6 hex>`: sortable, unique, and a valid folder name for the archive."""
    return f"s-{_file_stamp()}-{secrets.token_hex(3)}"


# --------------------------------------------------------------------------- state.json


class StateCorruptError(StoreError):
    """state.json was read but its content is not a state (moved aside by the next writer)."""


@dataclass
class SessionState:
    """state.json. Keys this version does not know are kept in `extra` and written back."""

    session_id: str
    created_at: str
    model: str | None = None
    last_prompt_tokens: int | None = None
    """The trigger's base figure: the latest recorded provider size, or a pass's reset estimate."""
    prompt_tokens_source: str | None = None
    """`recorded` (a provider figure) or `estimated` (a pass's reset); None in older files."""
    prompt_tokens_after_event_id: str | None = None
    """Id of the last event in events.jsonl when the figure was set (None: the file was empty).
    Events after it are added to the figure by estimate (contract §5, Prompt size)."""
    prompt_tokens_anchored: bool = False
    """Whether `prompt_tokens_after_event_id` was written (older files have no anchor)."""
    run_started_at: str | None = None
    last_event_at: str | None = None
    counters: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def fresh(cls) -> SessionState:
        return cls(session_id=new_session_id(), created_at=now_ts())

    @property
    def ever_recorded(self) -> bool:
        """Whether a provider prompt size was ever recorded in this session (an older file
        with a figure and no source counts as recorded)."""
        if self.counters.get("prompt_tokens_recorded", 0) > 0:
            return True
        return self.prompt_tokens_source is None and self.last_prompt_tokens is not None

    def prompt_size(self, event_ids: Sequence[object], tokens: Sequence[int]) -> PromptSize:
        """The trigger's prompt size over the hot window `event_ids`/`tokens` (contract §5)."""
        return prompt_size(
            base=self.last_prompt_tokens,
            base_source=self.prompt_tokens_source,
            anchored=self.prompt_tokens_anchored,
            after_event_id=self.prompt_tokens_after_event_id,
            ever_recorded=self.ever_recorded,
            event_ids=event_ids,
            tokens=tokens,
        )

    def reset_prompt_tokens(self, estimate: int, last_event_id: str | None) -> None:
        """After a pass: the new hot window plus summary.md, by estimate, anchored at the new
        window's last event so later appends grow it again (contract §5)."""
        self.last_prompt_tokens = estimate
        self.prompt_tokens_source = "estimated"
        self.prompt_tokens_after_event_id = last_event_id
        self.prompt_tokens_anchored = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        out.update(
            session_id=self.session_id,
            created_at=self.created_at,
            model=self.model,
            last_prompt_tokens=self.last_prompt_tokens,
            prompt_tokens_source=self.prompt_tokens_source,
            run_started_at=self.run_started_at,
            last_event_at=self.last_event_at,
            counters=dict(self.counters),
        )
        if self.prompt_tokens_anchored:
            out["prompt_tokens_after_event_id"] = self.prompt_tokens_after_event_id
        return out

    @classmethod
    def from_json(cls, obj: object, where: str) -> SessionState:
        """Raise StoreError naming `where` when required fields are missing or mistyped."""
        if not isinstance(obj, dict):
            raise StoreError(f"{where}: state must be a JSON object, got {type(obj).__name__}")
        sid = obj.get("session_id")
        try:
            validate_chunk_id(sid)
        except BadInputError as exc:
            raise StoreError(f"{where}: bad session_id ({exc})") from exc
        created = obj.get("created_at")
        if not isinstance(created, str):
            raise StoreError(f"{where}: created_at must be a string")
        for key in (
            "model",
            "run_started_at",
            "last_event_at",
            "prompt_tokens_source",
            "prompt_tokens_after_event_id",
        ):
            if obj.get(key) is not None and not isinstance(obj[key], str):
                raise StoreError(f"{where}: {key} must be a string or null")
        lpt = obj.get("last_prompt_tokens")
        if lpt is not None and (
            not isinstance(lpt, int) or isinstance(lpt, bool) or not 0 <= lpt <= MAX_PROMPT_TOKENS
        ):
            raise StoreError(
                f"{where}: last_prompt_tokens must be an integer from 0 to {MAX_PROMPT_TOKENS} "
                "or null"
            )
        raw_counters = obj.get("counters") or {}
        if not isinstance(raw_counters, dict):
            raise StoreError(f"{where}: counters must be an object")
        counters = {
            str(k): v
            for k, v in raw_counters.items()
            if isinstance(v, int) and not isinstance(v, bool)
        }
        known = {f.name for f in fields(cls)} - {"extra", "prompt_tokens_anchored"}
        assert isinstance(sid, str)
        return cls(
            session_id=sid,
            created_at=created,
            model=obj.get("model"),
            last_prompt_tokens=lpt,
            prompt_tokens_source=obj.get("prompt_tokens_source"),
            prompt_tokens_after_event_id=obj.get("prompt_tokens_after_event_id"),
            prompt_tokens_anchored="prompt_tokens_after_event_id" in obj,
            run_started_at=obj.get("run_started_at"),
            last_event_at=obj.get("last_event_at"),
            counters=counters,
            extra={k: v for k, v in obj.items() if k not in known},
        )


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class CorruptLine:
    """A line of a .jsonl file that is not an event, kept byte for byte."""

    line_no: int
    offset: int
    raw: bytes
    error: str


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """One non-blank line: `event` when it parsed, else `error` and the verbatim `raw` bytes."""

    line_no: int
    offset: int
    length: int
    event: Event | None
    error: str | None
    raw: bytes


@dataclass
class ParsedLines:
    """`consumed` bytes were parsed into `lines`; `tail` is an unterminated rest (final=False).

    `events` and `corrupt` are the good and the bad lines of `lines`, in file order.
    """

    lines: list[ParsedLine]
    consumed: int
    tail: bytes
    next_line: int
    events: list[Event] = field(default_factory=list)
    corrupt: list[CorruptLine] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.events and not self.corrupt:
            for p in self.lines:
                if p.event is not None:
                    self.events.append(p.event)
                elif p.error is not None:
                    self.corrupt.append(CorruptLine(p.line_no, p.offset, p.raw, p.error))


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    """A line holding NaN or an overflowing number could never be written back (JSON has no
    such values), so it would block every pass: it is a corrupt line instead."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
"""One decoder for every line: `json.loads` with hooks builds a new decoder and scanner per
call, which was a fifth of the time a pass spent parsing."""


def _classify(raw: bytes) -> tuple[Event | None, str | None]:
    if len(raw) > MAX_EVENT_BYTES:
        return None, f"line of {len(raw)} bytes exceeds the {MAX_EVENT_BYTES}-byte limit"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start})"
    try:
        obj = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at column {exc.colno})"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    except RecursionError:
        return None, "not valid JSON (nested too deeply)"
    if not isinstance(obj, dict):
        return None, f"not a JSON object (a JSON {type(obj).__name__})"
    return obj, None


def parse_event_lines(
    data: bytes, *, base_offset: int = 0, base_line: int = 1, final: bool
) -> ParsedLines:
    """Split .jsonl bytes into events and corrupt lines; never raises on bad data.

    Blank lines are skipped (they hold nothing). An unterminated last line is returned as
    `tail` unless `final`, in which case it is a corrupt line (a writer stopped mid-line).
    """
    lines: list[ParsedLine] = []
    pos = 0
    end_of_data = len(data)
    line_no = base_line
    while pos < end_of_data:
        nl = data.find(b"\n", pos)
        if nl < 0:
            if not final:
                break
            raw = data[pos:]
            if raw.strip():
                lines.append(
                    ParsedLine(
                        line_no,
                        base_offset + pos,
                        len(raw),
                        None,
                        "unterminated last line (a writer stopped mid-line)",
                        raw,
                    )
                )
            pos = end_of_data
            line_no += 1
            break
        raw = data[pos:nl]
        if raw.strip():
            event, error = _classify(raw)
            lines.append(
                ParsedLine(
                    line_no,
                    base_offset + pos,
                    nl + 1 - pos,
                    event,
                    error,
                    b"" if error is None else raw,
                )
            )
        pos = nl + 1
        line_no += 1
    return ParsedLines(lines=lines, consumed=pos, tail=data[pos:], next_line=line_no)


_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""Built once (as `_DECODER`): every append and every pass writes lines through it."""


def serialize_event(event: Mapping[str, Any], where: str = "event") -> bytes:
    """One compact JSON line with its newline; EventError when it cannot be stored.

    UTF-8 is kept as is; a lone surrogate (from a JSON `\\ud800` escape) falls back to ASCII
    escapes for that line so the event is still written, losslessly.
    """
    try:
        text = _LINE_ENCODER.encode(event)
    except (TypeError, ValueError, RecursionError) as exc:
        raise EventError(f"{where}: cannot be written as JSON ({exc})") from exc
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(event, separators=(",", ":"), allow_nan=False).encode("ascii")
    if len(data) > MAX_EVENT_BYTES:
        raise EventError(
            f"{where}: serialized event is {len(data)} bytes, over the {MAX_EVENT_BYTES}-byte limit"
        )
    return data + b"\n"


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


def _empty_snapshot() -> EventsSnapshot:
    return EventsSnapshot([], [], [], 0, 0, _digest().digest())


# --------------------------------------------------------------------------- the lock


class _ProcessLock:
    """One per lock file per process: a thread RLock in front of a flock.

    Threads of one process queue on the RLock (re-entrant for the owner); only the owning
    thread at depth 0 touches the file lock, so filelock's own thread semantics never matter.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rlock = threading.RLock()
        self._depth = 0
        self._owner: int | None = None
        self._file = filelock.FileLock(
            str(path), thread_local=False, poll_interval=_LOCK_POLL_SECONDS
        )

    def held_by_me(self) -> bool:
        return self._owner == threading.get_ident()

    def acquire(self, timeout: float, *, blocking: bool = True) -> bool:
        start = time.monotonic()
        if not self._rlock.acquire(blocking, timeout if blocking else -1):
            if not blocking:
                return False
            raise LockTimeoutError(
                f"could not lock {self.path} within {timeout} s: "
                "another thread of this process holds it"
            )
        try:
            if self._depth == 0:
                remaining = max(0.0, timeout - (time.monotonic() - start)) if blocking else 0.0
                try:
                    self._file.acquire(timeout=remaining)
                except filelock.Timeout:
                    if not blocking:
                        self._rlock.release()
                        return False
                    raise LockTimeoutError(
                        f"could not lock {self.path} within {timeout} s: another process holds it"
                    ) from None
                except OSError as exc:
                    raise StoreError(f"cannot lock {self.path}: {_reason(exc)}") from exc
                self._owner = threading.get_ident()
            self._depth += 1
        except BaseException:
            self._rlock.release()
            raise
        return True

    def release(self) -> None:
        self._depth -= 1
        try:
            if self._depth == 0:
                self._owner = None
                self._file.release()
        finally:
            self._rlock.release()


_LOCKS: dict[str, _ProcessLock] = {}
_LOCKS_GUARD = threading.Lock()


def _process_lock(path: Path) -> _ProcessLock:
    key = os.path.realpath(path)
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = _ProcessLock(path)
        return lock


def _forget_locks_in_child() -> None:
    """A forked child holds none of its parent's locks."""
    global _LOCKS_GUARD
    _LOCKS.clear()
    _LOCKS_GUARD = threading.Lock()


os.register_at_fork(after_in_child=_forget_locks_in_child)


# --------------------------------------------------------------------------- the store


class SessionStore:
    """The active session (or an archived one, read-only, via `session=`) of a memory root."""

    def __init__(
        self,
        root: Path | str,
        *,
        lock_timeout: float = 10.0,
        session: Path | None = None,
        durability: str = "run",
        fsync_interval_ms: int = 1000,
    ) -> None:
        self.paths = MemoryPaths(root, session)
        self.lock_timeout = float(lock_timeout)
        self.warnings: list[str] = []
        if durability not in DURABILITY_MODES:
            raise BadInputError(
                f"durability must be one of {', '.join(DURABILITY_MODES)}, got {durability!r}"
            )
        self.durability = durability
        """`always`: each append is fsynced before it returns; `run`: appends are fsynced by
        `sync_appends` (a CLI append's exit, `commit_run`) and by a background flush at most
        `fsync_interval_ms` after they were written; `relaxed`: never (docs/RELIABILITY.md)."""
        self.fsync_interval = max(1, int(fsync_interval_ms)) / 1000.0
        self._unsynced = False
        self._flush_timer: threading.Timer | None = None
        self._flush_guard = threading.Lock()
        self._lock = _process_lock(self.paths.lock)
        # Appends since this store last wrote state.json, folded in at the next state write
        # (keeps state.json out of the append path); tied to the session they happened in.
        self._delta_session: str | None = None
        self._delta_appended = 0
        self._delta_last_event_at: str | None = None
        self._delta_run_started_at: str | None = None

    parse_event_lines = staticmethod(parse_event_lines)
    """The module's parser, reachable from a store (for bytes from `snapshot_still_prefix`)."""

    # ---- locking

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold `M/.session.lock` (re-entrant per thread); LockTimeoutError after lock_timeout."""
        self._lock.acquire(self.lock_timeout)
        try:
            yield
        finally:
            self._lock.release()

    @contextlib.contextmanager
    def try_lock(self) -> Iterator[bool]:
        """Take the session lock only if it is free right now; yields whether it was taken."""
        got = self._lock.acquire(0.0, blocking=False)
        try:
            yield got
        finally:
            if got:
                self._lock.release()

    @contextlib.contextmanager
    def maintenance_lock(self) -> Iterator[bool]:
        """`M/.maintenance.lock` without waiting (contract §8); yields whether it was taken."""
        lock = _process_lock(self.paths.maintenance_lock)
        got = lock.acquire(0.0, blocking=False)
        try:
            yield got
        finally:
            if got:
                lock.release()

    def holds_lock(self) -> bool:
        return self._lock.held_by_me()

    def _require_writable(self) -> None:
        """Only the active session is ever written; an archived one is a read-only log."""
        if self.paths.is_archive:
            raise StoreError(f"{self.paths.session} is read-only: it is not the active session")

    def _require_lock(self, what: str) -> None:
        if not self._lock.held_by_me():
            raise StoreError(f"{what} needs the session lock {self.paths.lock} held by the caller")

    # ---- session and state

    def exists(self) -> bool:
        return self.paths.state.is_file() or self.paths.events.is_file()

    def ensure_session(self) -> SessionState:
        """Create what is missing of the session (root, folder, events.jsonl, state.json)."""
        self._require_writable()
        with self.lock():
            return self._merged(self._ensure_session_locked())

    def _ensure_session_locked(self, *, fast: bool = False) -> SessionState:
        """The state as on disk (creating what is missing); not merged with this store's
        pending append bookkeeping. `fast`: when state.json reads fine, trust the rest exists
        (the append path creates events.jsonl itself)."""
        paths = self.paths
        if fast:
            paths.ensure_inside_root()
            with contextlib.suppress(OSError, StoreError):
                return self._load_state_file()
        try:
            paths.root.mkdir(parents=True, exist_ok=True)
            paths.ensure_inside_root()
            created_dir = not paths.session.is_dir()
            paths.session.mkdir(exist_ok=True)
            if created_dir:
                fsync_dir(paths.root)
            if not paths.events.exists():
                fd = open_no_symlink(paths.events, os.O_WRONLY | os.O_CREAT)
                os.close(fd)
                fsync_dir(paths.session)
        except OSError as exc:
            raise StoreError(
                f"cannot create the session at {paths.session}: {_reason(exc)}"
            ) from exc
        try:
            return self._load_state_file()
        except FileNotFoundError:
            pass
        except StateCorruptError as exc:
            aside = self._move_aside(paths.state)
            self.warnings.append(f"{exc}; moved to {aside.name} and started a fresh state")
        state = SessionState.fresh()
        self._write_state_file(state)
        return state

    def _move_aside(self, path: Path) -> Path:
        aside = path.with_name(f"{path.name}.corrupt-{_file_stamp()}")
        n = 2
        while aside.exists():
            aside = path.with_name(f"{path.name}.corrupt-{_file_stamp()}-{n}")
            n += 1
        try:
            os.replace(path, aside)
        except OSError as exc:
            raise StoreError(f"cannot move {path} aside: {_reason(exc)}") from exc
        return aside

    def _load_state_file(self) -> SessionState:
        """Raises FileNotFoundError when missing, StateCorruptError when its content is bad,
        StoreError when it cannot be read (EACCES, a FIFO): that is not corruption, and moving
        it aside would give the session a new id."""
        path = self.paths.state
        try:
            data = read_bytes_no_symlink(path)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
        try:
            obj = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise StateCorruptError(f"{path}: not valid JSON ({exc})") from exc
        try:
            return SessionState.from_json(obj, str(path))
        except StoreError as exc:
            raise StateCorruptError(str(exc)) from exc

    def _merged(self, state: SessionState) -> SessionState:
        """The state with this store's not-yet-written append bookkeeping applied."""
        if self._delta_session == state.session_id and self._delta_appended:
            state.counters["appended"] = state.counters.get("appended", 0) + self._delta_appended
            state.last_event_at = self._delta_last_event_at
            if self._delta_run_started_at is not None:
                state.run_started_at = self._delta_run_started_at
        return state

    def _write_state_file(self, state: SessionState, *, sync_folder: bool = True) -> None:
        data = json.dumps(state.to_json(), ensure_ascii=False, indent=2) + "\n"
        atomic_write_bytes(self.paths.state, data.encode("utf-8"), sync_folder=sync_folder)
        self._delta_session = state.session_id
        self._delta_appended = 0
        self._delta_last_event_at = None
        self._delta_run_started_at = None

    def write_state(self, state: SessionState, *, sync_folder: bool = True) -> None:
        """Write state.json as given (caller holds the lock and read it with `read_state`).
        `sync_folder=False`: the caller fsyncs session/ itself (see atomic_write_bytes)."""
        self._require_lock("write_state")
        self._require_writable()
        self._write_state_file(state, sync_folder=sync_folder)

    def read_state(self) -> SessionState:
        """state.json; StoreError when there is no session, a fresh stand-in (with a warning)
        when it is corrupt. Never creates anything."""
        self.paths.ensure_inside_root()
        try:
            return self._merged(self._load_state_file())
        except FileNotFoundError:
            raise StoreError(f"no session at {self.paths.session}") from None
        except StateCorruptError as exc:
            self.warnings.append(f"{exc}; using a fresh state until the session is repaired")
            return SessionState.fresh()

    def flush_state(self) -> None:
        """Write pending append bookkeeping (counters.appended, last_event_at) to state.json."""
        if not self._delta_appended:
            return
        with self.lock():
            self._write_state_file(self._merged(self._ensure_session_locked()))

    def update_state(self, fn: Callable[[SessionState], SessionState | None]) -> SessionState:
        """Read, change (fn mutates or returns a new state) and write state.json under the lock."""
        self._require_writable()
        with self.lock():
            state = self._merged(self._ensure_session_locked())
            result = fn(state)
            if result is not None:
                state = result
            self._write_state_file(state)
            return state

    def set_state(self, **changes: Any) -> SessionState:
        """Set fields of state.json; unknown names go to `extra`."""
        known = {f.name for f in fields(SessionState)} - {"extra", "session_id"}

        def apply(state: SessionState) -> None:
            for key, value in changes.items():
                if key in known:
                    setattr(state, key, value)
                else:
                    state.extra[key] = value

        return self.update_state(apply)

    def record_prompt_tokens(self, n: int, *, model: str | None = None) -> SessionState:
        """Record the provider's prompt size of the latest model call (contract §5): the latest
        figure wins, anchored at the last event now in events.jsonl, so events appended after
        it are added by estimate until the next figure."""
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_PROMPT_TOKENS:
            raise BadInputError(
                f"prompt tokens must be an integer from 0 to {MAX_PROMPT_TOKENS}, got {n!r:.40}"
            )

        def apply(state: SessionState) -> None:
            state.last_prompt_tokens = n
            state.prompt_tokens_source = "recorded"
            state.prompt_tokens_after_event_id = self._last_event_id_locked()
            state.prompt_tokens_anchored = True
            state.counters["prompt_tokens_recorded"] = (
                state.counters.get("prompt_tokens_recorded", 0) + 1
            )
            if model is not None:
                state.model = model

        return self.update_state(apply)

    def _last_event_id_locked(self) -> str | None:
        """Id of the last parsable event line of events.jsonl, read from its end (the caller
        holds the lock, so no append is half-written; an unterminated last line is a crashed
        writer's leftover and is skipped). None when the file holds no event."""
        path = self.paths.events
        try:
            fd = open_no_symlink(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
        try:
            end = os.fstat(fd).st_size
            pos = end
            rest = b""
            while pos > 0:
                start = max(0, pos - max(65536, len(rest)))
                rest = os.pread(fd, pos - start, start) + rest
                pos = start
                lines = rest.split(b"\n")
                # lines[0] may be cut at `start` (unless start is 0); the last piece is the
                # unterminated remainder after the final newline.
                whole = lines[1:-1] if pos > 0 else lines[:-1]
                for raw in reversed(whole):
                    if not raw.strip():
                        continue
                    event, _error = _classify(raw)
                    if event is not None:
                        eid = event.get("id")
                        return eid if isinstance(eid, str) else None
                rest = lines[0] + b"\n" if pos > 0 else b""
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
        finally:
            os.close(fd)
        return None

    # ---- events

    def append_events(
        self, events: Sequence[Mapping[str, Any]], *, where: str = "event"
    ) -> list[Event]:
        """Validate, scrub, stamp and append events as whole lines; all or nothing.

        One os.write on an O_APPEND descriptor under the lock, no fsync (see the module
        docstring). A `user_input` starts a new run (`run_started_at`); the recorded prompt size
        stays, and the trigger adds the new events to it by estimate (contract §5).
        """
        self._require_writable()
        stored: list[Event] = []
        for i, obj in enumerate(events, 1):
            event = strip_screenshot_data(validate_event(obj, f"{where} {i}"))
            if event.get("id") is None:
                event["id"] = new_event_id()
            if event.get("ts") is None:
                event["ts"] = now_ts()
            stored.append(event)
        if not stored:
            return stored
        payload = b"".join(serialize_event(e, f"{where} {i}") for i, e in enumerate(stored, 1))
        run_start = next((e["ts"] for e in reversed(stored) if e.get("type") == "user_input"), None)
        with self.lock():
            state = self._ensure_session_locked(fast=True)
            self._append_bytes(payload)
            if self._delta_session != state.session_id:
                self._delta_session = state.session_id
                self._delta_appended = 0
                self._delta_run_started_at = None
            self._delta_appended += len(stored)
            self._delta_last_event_at = now_ts()
            if run_start is not None:
                # The event is stored now: a failed state.json rewrite (disk full, read-only
                # folder) must not report the append as failed (a retry would double it). The
                # run start is kept and written with the next state write instead.
                self._delta_run_started_at = run_start
                try:
                    self._write_state_file(self._merged(state))
                except StoreError as exc:
                    self.warnings.append(
                        f"appended, but state.json was not updated ({exc}); "
                        "the next write of the session updates it"
                    )
        return stored

    def _append_bytes(self, payload: bytes) -> None:
        path = self.paths.events
        try:
            fd = open_no_symlink(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        except OSError as exc:
            raise StoreError(f"cannot append to {path}: {_reason(exc)}") from exc
        size = -1
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload
            write_all(fd, payload)
            if self.durability == "always":
                # On failure the lines are taken back: an append is stored and reported
                # stored, or neither.
                _datasync(fd)
        except OSError as exc:
            if size >= 0:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
            raise StoreError(f"cannot append to {path}: {_reason(exc)}") from exc
        finally:
            os.close(fd)
        if self.durability == "run":
            self._schedule_flush()

    # ---- durability

    def _schedule_flush(self) -> None:
        """Note unsynced appends; the first one since the last flush starts a timer that
        syncs them `fsync_interval` later (the append itself never waits on the disk)."""
        with self._flush_guard:
            self._unsynced = True
            if self._flush_timer is None:
                timer = threading.Timer(self.fsync_interval, self._background_flush)
                timer.daemon = True
                timer.name = "session-fsync"
                self._flush_timer = timer
                timer.start()

    def _background_flush(self) -> None:
        with self._flush_guard:
            self._flush_timer = None
        self.settle_appends()

    def settle_appends(self) -> None:
        """`sync_appends` for callers that already stored the events: a failure is a warning
        (the events are stored; only a power cut could still lose them), never an error."""
        try:
            self.sync_appends()
        except StoreError as exc:
            self.warnings.append(f"{exc}; the last appends may not survive a power loss")

    def sync_appends(self) -> bool:
        """fsync events.jsonl when appends were written since the last sync; returns whether
        it synced. No lock: fsync covers every write that finished before it, and a pass that
        replaced the file synced what it carried over."""
        with self._flush_guard:
            if not self._unsynced:
                return False
            self._unsynced = False
        path = self.paths.events
        try:
            fd = open_no_symlink(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        except OSError as exc:
            self._unsynced = True
            raise StoreError(f"cannot sync {path}: {_reason(exc)}") from exc
        try:
            _datasync(fd)
        except OSError as exc:
            self._unsynced = True
            raise StoreError(f"cannot sync {path}: {_reason(exc)}") from exc
        finally:
            os.close(fd)
        return True

    def read_events(self, *, locked: bool = False) -> EventsSnapshot:
        """Parse events.jsonl; bad lines become CorruptLine, nothing raises on bad data.

        `locked=True` (the caller holds the lock): an unterminated last line can only be a
        crashed writer's leftover, so it is corrupt. Otherwise it may be a write in flight and is
        left out as `partial_tail`.
        """
        self.paths.ensure_inside_root()
        path = self.paths.events
        try:
            with os.fdopen(open_no_symlink(path, os.O_RDONLY), "rb") as fh:
                inode = os.fstat(fh.fileno()).st_ino
                data = fh.read()
        except FileNotFoundError:
            return _empty_snapshot()
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
        parsed = parse_event_lines(data, final=locked)
        events = parsed.events
        digest = _digest()
        digest.update(memoryview(data)[: parsed.consumed])
        return EventsSnapshot(
            events=events,
            tokens=[estimate_event_tokens(e) for e in events],
            corrupt=parsed.corrupt,
            size=parsed.consumed,
            inode=inode,
            digest=digest.digest(),
            partial_tail=parsed.tail,
            next_line=parsed.next_line,
        )

    def pin_events(self) -> PinnedEvents | None:
        """Open events.jsonl at its current size (caller holds the lock); None when missing.

        Everything up to that size is whole lines of finished appends (appends write whole
        lines under the lock), so the pinned bytes can be read later without the lock.
        """
        self._require_lock("pin_events")
        self.paths.ensure_inside_root()
        path = self.paths.events
        try:
            fd = open_no_symlink(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
        try:
            st = os.fstat(fd)
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
        return PinnedEvents(fd=fd, size=st.st_size, device=st.st_dev, inode=st.st_ino)

    def read_pinned(self, pinned: PinnedEvents) -> EventsSnapshot:
        """Parse the pinned bytes (no lock needed) into a snapshot that keeps the pin.

        As with `read_events(locked=True)`, an unterminated last line is corrupt: under the lock
        it can only be a crashed writer's leftover. The caller closes the snapshot.
        """
        path = self.paths.events
        try:
            data = _pread_all(pinned.fd, pinned.size, 0)
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
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
            end_digest=hashlib.blake2b(end, digest_size=_DIGEST_SIZE).digest(),
            raw=data,
            spans=spans,
        )

    def _pinned_still_prefix(self, snap: EventsSnapshot, pin: PinnedEvents) -> tuple[bool, bytes]:
        path = self.paths.events
        try:
            fd = open_no_symlink(path, os.O_RDONLY)
        except FileNotFoundError:
            return False, b""
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (pin.device, pin.inode) or st.st_size < snap.size:
                return False, b""
            start = max(0, snap.size - END_CHECK_BYTES)
            end = _pread_all(fd, snap.size - start, start)
            if hashlib.blake2b(end, digest_size=_DIGEST_SIZE).digest() != snap.end_digest:
                return False, b""
            return True, _pread_all(fd, st.st_size - snap.size, snap.size)
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc
        finally:
            os.close(fd)

    def snapshot_still_prefix(self, snap: EventsSnapshot) -> tuple[bool, bytes]:
        """Whether events.jsonl still begins with `snap`'s bytes, and what was appended since.

        The prefix is compared by digest, not by inode: inode numbers are reused after a
        rewrite, so an equal inode proves nothing — unless the snapshot pins the file open
        (`read_pinned`), which keeps its inode from being reused. Caller holds the lock.
        """
        self._require_lock("snapshot_still_prefix")
        if snap.pinned is not None and snap.pinned.fd >= 0:
            return self._pinned_still_prefix(snap, snap.pinned)
        path = self.paths.events
        try:
            with os.fdopen(open_no_symlink(path, os.O_RDONLY), "rb") as fh:
                if os.fstat(fh.fileno()).st_size < snap.size:
                    return False, b""
                digest = _digest()
                left = snap.size
                while left:
                    block = fh.read(min(left, _READ_BLOCK))
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
            raise StoreError(f"cannot read {path}: {_reason(exc)}") from exc

    def quarantine(self, lines: Sequence[CorruptLine], *, source: str | None = None) -> int:
        """Append corrupt lines verbatim to corrupt.jsonl (fsynced); returns how many.

        Each record is recoverable: `raw` holds the text, or `raw_b64` the bytes when they are
        not UTF-8. Caller holds the lock.
        """
        if not lines:
            return 0
        self._require_lock("quarantine")
        self._require_writable()
        if source is None:
            source = os.path.relpath(self.paths.events, self.paths.root)
        stamp = now_ts()
        out = bytearray()
        for line in lines:
            record: dict[str, Any] = {
                "source": source,
                "line": line.line_no,
                "offset": line.offset,
                "quarantined_at": stamp,
                "error": line.error,
            }
            try:
                record["raw"] = line.raw.decode("utf-8")
            except UnicodeDecodeError:
                record["raw_b64"] = base64.b64encode(line.raw).decode("ascii")
            out += json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            out += b"\n"
        path = self.paths.corrupt
        try:
            fd = open_no_symlink(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                size = os.fstat(fd).st_size
                data = bytes(out)
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data
                write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise StoreError(f"cannot write {path}: {_reason(exc)}") from exc
        return len(lines)

    def replace_events(
        self, events: Sequence[Event], *, quarantine: Sequence[CorruptLine] = ()
    ) -> int:
        """Quarantine `quarantine` first, then atomically rewrite events.jsonl with `events`.

        Caller holds the lock. Returns the bytes written.
        """
        self._require_lock("replace_events")
        self._require_writable()
        self.paths.ensure_inside_root()
        data = b"".join(
            serialize_event(strip_screenshot_data(e), f"hot-window event {i}")
            for i, e in enumerate(events, 1)
        )
        self.quarantine(quarantine)
        atomic_write_bytes(self.paths.events, data)
        return len(data)

    def quarantine_corrupt_lines(self) -> int:
        """Move corrupt lines of events.jsonl to corrupt.jsonl; returns how many.

        The file is read and its new content staged without the session lock (a big store
        takes minutes to read, and appends must not wait for that); only the check that it
        still begins with what was read, the lines appended since, and the rename happen
        under a short lock, as in a pass's commit. When the file was rewritten meanwhile (a
        rotation), the rewrite is done again under the lock.
        """
        self._require_writable()
        with self.lock():
            pin = self.pin_events()
        if pin is None:
            return 0
        snap = self.read_pinned(pin)
        try:
            if not snap.corrupt:
                return 0
            kept = snap.lines_of(range(len(snap.events)))
            if kept is None:
                kept = b"".join(
                    serialize_event(strip_screenshot_data(e), f"event {i}")
                    for i, e in enumerate(snap.events, 1)
                )
            staged = stage_bytes(self.paths.events, kept)
            try:
                with self.lock():
                    still, appended = self.snapshot_still_prefix(snap)
                    if not still:
                        fresh = self.read_events(locked=True)
                        self.replace_events(fresh.events, quarantine=fresh.corrupt)
                        return len(fresh.corrupt)
                    tail = parse_event_lines(
                        appended, base_offset=snap.size, base_line=snap.next_line, final=True
                    )
                    if tail.events:
                        extra = b"".join(
                            serialize_event(strip_screenshot_data(e), f"appended event {i}")
                            for i, e in enumerate(tail.events, 1)
                        )
                        fd = os.open(staged, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
                        try:
                            write_all(fd, extra)
                            os.fsync(fd)
                        finally:
                            os.close(fd)
                    lines = [*snap.corrupt, *tail.corrupt]
                    self.quarantine(lines)
                    os.replace(staged, self.paths.events)
                    fsync_dir(self.paths.session)
                    return len(lines)
            except OSError as exc:
                raise StoreError(f"cannot write {self.paths.events}: {_reason(exc)}") from exc
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(staged)
        finally:
            snap.close()

    def count_corrupt_quarantined(self) -> int:
        """Records in corrupt.jsonl (0 when it does not exist)."""
        try:
            data = read_bytes_no_symlink(self.paths.corrupt)
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise StoreError(f"cannot read {self.paths.corrupt}: {_reason(exc)}") from exc
        return sum(1 for line in data.split(b"\n") if line.strip())


def _datasync(fd: int) -> None:
    """fdatasync where there is one (an append's new size is synced with its data)."""
    sync = getattr(os, "fdatasync", os.fsync)
    sync(fd)


def _pread_all(fd: int, length: int, offset: int) -> bytes:
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
    "DURABILITY_MODES",
    "END_CHECK_BYTES",
    "MAX_EVENT_BYTES",
    "CorruptLine",
    "EventsSnapshot",
    "ParsedLine",
    "ParsedLines",
    "PinnedEvents",
    "SessionState",
    "SessionStore",
    "StateCorruptError",
    "new_session_id",
    "parse_event_lines",
    "serialize_event",
]
