"""Pending evidence, `chunks/pending/<id>.jsonl` and its `<id>.meta.json` sidecar (contract §8):
the events a pass cut, kept until its commit is published, so recovery can finish or undo it.

Every file name here comes from an id checked as a chunk id is (core.ids), so nothing read from
a directory listing can open a file outside `chunks/pending/`.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.errors import StoreError
from core.events import Event
from core.index.chunk_files import jsonl_ids, make_dir, read_jsonl
from core.jsonl import CorruptLine, stored_events_bytes
from core.store.atomic import atomic_write_bytes, fsync_dir, read_bytes_no_symlink
from core.store.faults import fault_point
from core.store.paths import MemoryPaths


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
    make_dir(paths, paths.pending_dir)
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
    for pid in jsonl_ids(paths, paths.pending_dir, "pending", warnings):
        try:
            events, corrupt = read_jsonl(paths.pending_file(pid))
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
            raise StoreError(f"cannot delete {path}: {exc.strerror or exc}") from exc
    if removed and durable:
        with contextlib.suppress(StoreError):
            fsync_dir(paths.pending_dir)


__all__ = [
    "PendingEvidence",
    "delete_pending",
    "list_pending",
    "new_pending_id",
    "pending_meta_bytes",
    "write_pending",
]
