"""Session boundary rotation (design: Session Boundary Rotation; contract §10)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.config import CompactionConfig
from core.errors import BadInputError, SessionMemoryError, StoreError
from core.events import now_ts
from core.index.chunk_files import list_chunk_files
from core.index.pending import list_pending
from core.maintenance.recovery import maintenance_slot, recover_archive, recover_locked
from core.store.atomic import fsync_dir, refuse_link_or_kind
from core.store.faults import fault_point
from core.store.paths import validate_session_id
from core.store.session_store import SessionStore


@dataclass(frozen=True)
class RotationResult:
    closed_session_id: str | None
    archive_path: Path | None
    reason: str | None = None
    """Why nothing was closed (`empty`: the session held nothing), else None."""

    def to_json(self) -> dict[str, Any]:
        return {
            "closed_session_id": self.closed_session_id,
            "archive_path": str(self.archive_path) if self.archive_path else None,
            "reason": self.reason,
        }


def rotate(store: SessionStore, config: CompactionConfig) -> RotationResult:
    """Move M/session to M/session_archive/<id> in one rename and start an empty session.

    What a crashed pass left is recovered first, in the session (when no pass runs) and in
    the archive after the move in any case, so an archive never keeps pending evidence or a
    temporary file: a pass in flight in another process notices the new session id at its
    commit and abandons, so rotation never waits for a summarizer. A session whose start a
    rotation could not finish (no state.json, nothing in it) is completed, not archived: a
    retry must not add an empty archive. Once the rename is done the rotation has happened:
    a failure to start the new session is a warning (the next command creates it), never a
    failed rotation.
    """
    paths = store.paths
    if paths.is_archive:
        raise StoreError(f"{paths.session} is an archived session: it is read-only")
    with store.lock():
        if not paths.session.exists():
            store.ensure_session()
            return RotationResult(closed_session_id=None, archive_path=None)
        paths.ensure_inside_root()
        check_archive_root(store)
        if _half_created(store):
            store.ensure_session()
            return RotationResult(closed_session_id=None, archive_path=None)
        if _empty(store):
            # Nothing to close: an archive of nothing would only be junk in the Archive tab.
            return RotationResult(closed_session_id=None, archive_path=None, reason="empty")
        state = store.read_state()
        with maintenance_slot(store) as free:
            if free:
                recover_locked(store, config)
        try:
            session_id = validate_session_id(state.session_id)
        except BadInputError:
            session_id = "s-unknown-" + now_ts().replace(":", "").replace(".", "")[:17]
        try:
            paths.archive_root.mkdir(exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create {paths.archive_root}: {exc.strerror}") from exc
        check_archive_root(store)
        target = _free_name(paths.archive_root, session_id)
        _events_size(store, sync=True)
        fault_point("before_rotation_rename")
        try:
            os.rename(paths.session, target)
        except OSError as exc:
            raise StoreError(f"cannot move {paths.session} to {target}: {exc.strerror}") from exc
        # The rotation has happened: from here on a failure is a warning, not exit 1.
        try:
            fsync_dir(paths.archive_root)
            fsync_dir(paths.root)
            fault_point("during_rotation")
            recover_archive(store, target, config)
            store.ensure_session()
            fault_point("after_rotation_session_created")
            new_state = store.read_state()
            new_state.counters["rotations"] = new_state.counters.get("rotations", 0) + 1
            store.write_state(new_state)
        except SessionMemoryError as exc:
            store.warnings.append(
                f"session {target.name} was archived, but the rest did not finish ({exc}); "
                "the next command or `repair` completes it"
            )
    return RotationResult(closed_session_id=target.name, archive_path=target)


def check_archive_root(store: SessionStore) -> None:
    """Refuse a `session_archive` that is a symbolic link or anything but a folder inside the
    memory root: a rotation would otherwise write the whole session wherever it points."""
    archive_root = store.paths.archive_root
    refuse_link_or_kind(
        archive_root,
        stat.S_ISDIR,
        StoreError,
        unreadable=lambda where, exc: f"cannot inspect {where}: {exc.strerror}",
        link=f"refusing {archive_root}: it is a symbolic link (links are never followed here); "
        "move it away and retry",
        other=f"refusing {archive_root}: it is not a folder; move it away and retry",
    )
    store.paths.ensure_inside_root(archive_root)


def _half_created(store: SessionStore) -> bool:
    """Whether the session is one a rotation started and could not finish (no state.json yet,
    nothing in it): completing it is the retry's job, archiving it would add an empty one."""
    paths = store.paths
    if _events_size(store) > 0 or os.path.lexists(paths.state):
        return False
    if paths.summary.exists() or paths.corrupt.exists():
        return False
    return not list_chunk_files(paths) and not list_pending(paths)


def _empty(store: SessionStore) -> bool:
    """Whether the session holds nothing at all: no event, summary, chunk or pending evidence
    (a fresh session, or one just rotated in)."""
    paths = store.paths
    if _events_size(store) > 0 or paths.summary.exists() or paths.corrupt.exists():
        return False
    return not list_chunk_files(paths) and not list_pending(paths)


def _events_size(store: SessionStore, *, sync: bool = False) -> int:
    """Size of events.jsonl (0 when missing); StoreError when it is not a regular file, so a
    FIFO planted there stops the rotation before anything moves. `sync`: fsync it too (the
    appends not yet synced must not be lost to a power cut once the session is archived)."""
    fd = store.open_events()
    if fd is None:
        return 0
    try:
        if sync:
            os.fsync(fd)
        return os.fstat(fd).st_size
    except OSError as exc:
        raise StoreError(f"cannot sync {store.paths.events}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def _free_name(archive_root: Path, session_id: str) -> Path:
    target = archive_root / session_id
    n = 2
    while target.exists():
        target = archive_root / f"{session_id}-{n}"
        n += 1
    return target
