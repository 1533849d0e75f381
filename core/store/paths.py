"""Every path under a memory root (contract §1), and the one check that keeps ids inside it.

No file outside the memory root is ever opened through a name taken from data: chunk ids,
pending ids and session ids all go through `core.ids.validate_safe_id` (as
`validate_chunk_id`, `validate_pending_id`, `validate_session_id`), and the session folder
itself (which may be a symlink) must resolve inside the root.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core.errors import StoreError
from core.ids import (
    CHUNK_ID_MAX_LEN,
    CHUNK_ID_RE,
    validate_chunk_id,
    validate_pending_id,
    validate_safe_id,
    validate_session_id,
)


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


@dataclass(frozen=True, init=False)
class MemoryPaths:
    """The files of one memory root. `session` is `root/session` unless it points at an
    archived session (`for_archive`) for read-only viewing."""

    root: Path
    session: Path

    def __init__(self, root: Path | str, session: Path | str | None = None) -> None:
        root_path = Path(os.path.abspath(root))
        object.__setattr__(self, "root", root_path)
        object.__setattr__(
            self,
            "session",
            root_path / "session" if session is None else Path(os.path.abspath(session)),
        )

    @classmethod
    def for_archive(cls, root: Path | str, session_id: str) -> MemoryPaths:
        """An archived session `root/session_archive/<session_id>` (the id is validated)."""
        sid = validate_session_id(session_id)
        base = Path(os.path.abspath(root))
        return cls(base, base / "session_archive" / sid)

    @property
    def events(self) -> Path:
        return self.session / "events.jsonl"

    @property
    def state(self) -> Path:
        return self.session / "state.json"

    @property
    def summary(self) -> Path:
        return self.session / "summary.md"

    @property
    def summary_archive(self) -> Path:
        return self.session / "summary_archive.md"

    @property
    def chunks_dir(self) -> Path:
        return self.session / "chunks"

    @property
    def index(self) -> Path:
        return self.chunks_dir / "index.yaml"

    @property
    def pending_dir(self) -> Path:
        return self.chunks_dir / "pending"

    @property
    def corrupt(self) -> Path:
        return self.session / "corrupt.jsonl"

    @property
    def lock(self) -> Path:
        return self.root / ".session.lock"

    @property
    def maintenance_lock(self) -> Path:
        return self.root / ".maintenance.lock"

    @property
    def archive_root(self) -> Path:
        return self.root / "session_archive"

    @property
    def is_archive(self) -> bool:
        return self.session != self.root / "session"

    def archived_sessions(self) -> list[Path]:
        """The archived session folders, oldest (lowest name) first: the real folders under
        session_archive/, never a link; [] when there is no readable archive folder. The one
        rule status, recovery, recall and the TUI's Archive tab list archives by."""
        try:
            children = sorted(self.archive_root.iterdir())
        except OSError:
            return []
        return [c for c in children if c.is_dir() and not c.is_symlink()]

    def chunk_file(self, chunk_id: str) -> Path:
        return self.chunks_dir / f"{validate_chunk_id(chunk_id)}.jsonl"

    def pending_file(self, pending_id: str) -> Path:
        return self.pending_dir / f"{validate_pending_id(pending_id)}.jsonl"

    def pending_meta_file(self, pending_id: str) -> Path:
        return self.pending_dir / f"{validate_pending_id(pending_id)}.meta.json"

    def ensure_inside_root(self, path: Path | None = None) -> Path:
        """Refuse (StoreError) when `path` (default: the session folder) resolves outside the
        root, e.g. through a `session/` symlink pointing elsewhere. Returns `path`."""
        target = self.session if path is None else path
        root = _resolved(self.root)
        real = _resolved(target)
        if real != root and not real.is_relative_to(root):
            raise StoreError(
                f"refusing {target}: it resolves to {real}, outside the memory root {root}"
            )
        return target


__all__ = [
    "CHUNK_ID_MAX_LEN",
    "CHUNK_ID_RE",
    "MemoryPaths",
    "validate_chunk_id",
    "validate_pending_id",
    "validate_safe_id",
    "validate_session_id",
]
