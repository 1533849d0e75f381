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
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from core.compaction.state import MAX_PROMPT_TOKENS, SessionState, StateCorruptError, file_stamp
from core.errors import BadInputError, StoreError
from core.events import Event, new_event_id, now_ts, validate_event
from core.jsonl import (
    CorruptLine,
    classify_line,
    parse_event_lines,
    serialize_event,
    stored_events_bytes,
)
from core.scrub import strip_screenshot_data
from core.store.atomic import (
    append_synced,
    atomic_write_bytes,
    fsync_dir,
    open_no_symlink,
    os_reason,
    read_bytes_no_symlink,
    stage_bytes,
    write_all,
)
from core.store.locks import process_lock
from core.store.paths import MemoryPaths
from core.store.snapshot import (
    EventsSnapshot,
    PinnedEvents,
    empty_snapshot,
    new_digest,
    pin_file,
    read_pinned,
    still_prefix,
)
from core.tokens import estimate_event_tokens, estimate_tokens

DURABILITY_MODES = ("run", "always", "relaxed")
"""When appends reach the disk (the config's `durability`; see SessionStore)."""


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
        self._lock = process_lock(self.paths.lock)
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
        lock = process_lock(self.paths.maintenance_lock)
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
                f"cannot create the session at {paths.session}: {os_reason(exc)}"
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
        aside = path.with_name(f"{path.name}.corrupt-{file_stamp()}")
        n = 2
        while aside.exists():
            aside = path.with_name(f"{path.name}.corrupt-{file_stamp()}-{n}")
            n += 1
        try:
            os.replace(path, aside)
        except OSError as exc:
            raise StoreError(f"cannot move {path} aside: {os_reason(exc)}") from exc
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
            raise StoreError(f"cannot read {path}: {os_reason(exc)}") from exc
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

    def record_prompt_tokens(
        self, n: int, *, model: str | None = None, after_event_id: str | None = None
    ) -> SessionState:
        """Record the provider's prompt size of the latest model call (contract §5): the latest
        figure wins, anchored at the last event now in events.jsonl (or at `after_event_id`,
        an event already stored: `import` appends a whole log in one write and anchors the
        log's last figure at its call), so events appended after it are added by estimate
        until the next figure."""
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_PROMPT_TOKENS:
            raise BadInputError(
                f"prompt tokens must be an integer from 0 to {MAX_PROMPT_TOKENS}, got {n!r:.40}"
            )

        def apply(state: SessionState) -> None:
            last_id, estimate = self._prompt_estimate_locked(state)
            if after_event_id is not None and after_event_id != last_id:
                # The figure is anchored at an earlier event: the prompt then held the
                # events up to it, not the ones stored after it.
                _last, tail, found = self._estimate_after_locked(after_event_id)
                estimate = max(0, estimate - tail) if found else estimate
            state.add_calibration_pair(n, estimate)
            state.last_prompt_tokens = n
            state.prompt_tokens_source = "recorded"
            state.prompt_tokens_after_event_id = (
                after_event_id if after_event_id is not None else last_id
            )
            state.prompt_tokens_anchored = True
            state.counters["prompt_tokens_recorded"] = (
                state.counters.get("prompt_tokens_recorded", 0) + 1
            )
            if model is not None:
                state.model = model

        return self.update_state(apply)

    def open_events(self) -> int | None:
        """events.jsonl opened read-only (no symlink, a regular file: a FIFO planted there is
        refused, never waited on); None when it is missing; StoreError naming it otherwise."""
        path = self.paths.events
        try:
            return open_no_symlink(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {os_reason(exc)}") from exc

    def _prompt_estimate_locked(self, state: SessionState) -> tuple[str | None, int]:
        """(last event id, E): the estimate of what the prompt holds now, summary.md plus the
        hot window (contract §5, Calibration). From the previous figure's estimate plus the
        events appended after its anchor, read from the end of events.jsonl; the whole file
        and summary.md when that estimate or its anchor is not known."""
        known = state.prompt_estimate is not None and state.prompt_tokens_anchored
        anchor = state.prompt_tokens_after_event_id if known else object()
        last_id, after, found = self._estimate_after_locked(anchor)
        if known and found and state.prompt_estimate is not None:
            return last_id, state.prompt_estimate + after
        return last_id, after + (self.summary_estimate() or 0)

    def summary_estimate(self) -> int | None:
        """summary.md's estimate (None when there is none): the prompt carries it."""
        try:
            data = read_bytes_no_symlink(self.paths.summary)
        except OSError:
            return None
        return estimate_tokens(data.decode("utf-8", errors="replace"))

    def _estimate_after_locked(self, anchor: object) -> tuple[str | None, int, bool]:
        """(last event id, estimate of the events after the one whose id is `anchor`, found):
        events.jsonl read from its end back to the anchor (None: the whole file, found);
        not found: the whole file's estimate."""
        fd = self.open_events()
        if fd is None:
            return None, 0, anchor is None
        last_id: str | None = None
        seen_last = False
        total = 0
        try:
            for event in _events_from_end(fd):
                eid = event.get("id")
                if not seen_last:
                    seen_last = True
                    last_id = eid if isinstance(eid, str) else None
                if anchor is not None and eid == anchor:
                    return last_id, total, True
                total += estimate_event_tokens(event)
        except OSError as exc:
            raise StoreError(f"cannot read {self.paths.events}: {os_reason(exc)}") from exc
        finally:
            os.close(fd)
        return last_id, total, anchor is None

    def _last_event_id_locked(self) -> str | None:
        """Id of the last parsable event line of events.jsonl, read from its end (the caller
        holds the lock, so no append is half-written; an unterminated last line is a crashed
        writer's leftover and is skipped). None when the file holds no event."""
        fd = self.open_events()
        if fd is None:
            return None
        try:
            for event in _events_from_end(fd):
                eid = event.get("id")
                return eid if isinstance(eid, str) else None
        except OSError as exc:
            raise StoreError(f"cannot read {self.paths.events}: {os_reason(exc)}") from exc
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
            raise StoreError(f"cannot append to {path}: {os_reason(exc)}") from exc
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
            raise StoreError(f"cannot append to {path}: {os_reason(exc)}") from exc
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
            raise StoreError(f"cannot sync {path}: {os_reason(exc)}") from exc
        try:
            _datasync(fd)
        except OSError as exc:
            self._unsynced = True
            raise StoreError(f"cannot sync {path}: {os_reason(exc)}") from exc
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
            return empty_snapshot()
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {os_reason(exc)}") from exc
        parsed = parse_event_lines(data, final=locked)
        events = parsed.events
        digest = new_digest()
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
        return pin_file(self.paths.events)

    def read_pinned(self, pinned: PinnedEvents) -> EventsSnapshot:
        """Parse the pinned bytes (no lock needed) into a snapshot that keeps the pin.

        As with `read_events(locked=True)`, an unterminated last line is corrupt: under the lock
        it can only be a crashed writer's leftover. The caller closes the snapshot.
        """
        return read_pinned(self.paths.events, pinned)

    def snapshot_still_prefix(self, snap: EventsSnapshot) -> tuple[bool, bytes]:
        """Whether events.jsonl still begins with `snap`'s bytes, and what was appended since.

        The prefix is compared by digest, not by inode: inode numbers are reused after a
        rewrite, so an equal inode proves nothing — unless the snapshot pins the file open
        (`read_pinned`), which keeps its inode from being reused. Caller holds the lock.
        """
        self._require_lock("snapshot_still_prefix")
        return still_prefix(self.paths.events, snap)

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
        append_synced(self.paths.corrupt, bytes(out), mend=True)
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
        data = stored_events_bytes(events, "hot-window event")
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
                kept = stored_events_bytes(snap.events, "event")
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
                        extra = stored_events_bytes(tail.events, "appended event")
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
                raise StoreError(f"cannot write {self.paths.events}: {os_reason(exc)}") from exc
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
            raise StoreError(f"cannot read {self.paths.corrupt}: {os_reason(exc)}") from exc
        return sum(1 for line in data.split(b"\n") if line.strip())


def _datasync(fd: int) -> None:
    """fdatasync where there is one (an append's new size is synced with its data)."""
    sync = getattr(os, "fdatasync", os.fsync)
    sync(fd)


__all__ = ["DURABILITY_MODES", "SessionStore"]


def _events_from_end(fd: int) -> Iterator[dict[str, Any]]:
    """The parsable events of events.jsonl (open as `fd`), last first, read backwards in
    blocks of 64 KiB or more; blank and unparsable lines are passed over, and so is an
    unterminated last line (a crashed writer's leftover). OSError from the reads."""
    pos = os.fstat(fd).st_size
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
            event, _error = classify_line(raw)
            if event is not None:
                yield event
        rest = lines[0] + b"\n" if pos > 0 else b""
