"""Session boundary rotation (design: Session Boundary Rotation; contract §10)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.atomic import fsync_dir
from core.config import CompactionConfig
from core.errors import StoreError
from core.events import now_ts
from core.faults import fault_point
from core.maintenance import maintenance_slot, recover_locked
from core.paths import validate_chunk_id
from core.store import SessionStore


@dataclass(frozen=True)
class RotationResult:
    closed_session_id: str | None
    archive_path: Path | None

    def to_json(self) -> dict[str, Any]:
        return {
            "closed_session_id": self.closed_session_id,
            "archive_path": str(self.archive_path) if self.archive_path else None,
        }


def rotate(store: SessionStore, config: CompactionConfig) -> RotationResult:
    """Move M/session to M/session_archive/<id> in one rename and start an empty session.

    A pass in flight in another process notices the new session id at its commit and
    abandons, so rotation never waits for a summarizer.
    """
    paths = store.paths
    if paths.is_archive:
        raise StoreError(f"{paths.session} is an archived session: it is read-only")
    with store.lock():
        if not paths.session.exists():
            store.ensure_session()
            return RotationResult(closed_session_id=None, archive_path=None)
        paths.ensure_inside_root()
        with maintenance_slot(store) as free:
            if free:
                recover_locked(store, config)
        try:
            session_id = validate_chunk_id(store.read_state().session_id)
        except Exception:
            session_id = "s-unknown-" + now_ts().replace(":", "").replace(".", "")[:17]
        paths.archive_root.mkdir(parents=True, exist_ok=True)
        target = _free_name(paths.archive_root, session_id)
        fault_point("before_rotation_rename")
        try:
            os.rename(paths.session, target)
        except OSError as exc:
            raise StoreError(f"cannot move {paths.session} to {target}: {exc.strerror}") from exc
        fsync_dir(paths.archive_root)
        fsync_dir(paths.root)
        fault_point("during_rotation")
        store.ensure_session()
        fault_point("after_rotation_session_created")
        state = store.read_state()
        state.counters["rotations"] = state.counters.get("rotations", 0) + 1
        store.write_state(state)
    return RotationResult(closed_session_id=target.name, archive_path=target)


def _free_name(archive_root: Path, session_id: str) -> Path:
    target = archive_root / session_id
    n = 2
    while target.exists():
        target = archive_root / f"{session_id}-{n}"
        n += 1
    return target
