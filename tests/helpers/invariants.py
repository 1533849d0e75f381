"""Shared checks over a memory root: every appended event id exactly once, nowhere lost."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from bench.common import read_jsonl as read_jsonl  # the tests read session files with it


def yaml_entries(index: Path) -> list[dict[str, Any]]:
    """index.yaml's chunk entries as plain JSON values (timestamps as strings), to compare."""
    entries = yaml.safe_load(index.read_text(encoding="utf-8"))["chunks"]
    return [json.loads(json.dumps(e, default=str)) for e in entries]


def session_dirs(root: Path) -> list[Path]:
    dirs = [root / "session"] if (root / "session").exists() else []
    archive = root / "session_archive"
    if archive.exists():
        dirs.extend(sorted(p for p in archive.iterdir() if p.is_dir()))
    return dirs


def indexed_chunk_ids(session: Path) -> list[str]:
    index = session / "chunks" / "index.yaml"
    if not index.exists():
        return []
    data = yaml.safe_load(index.read_text(encoding="utf-8")) or {}
    return [c["chunk_id"] for c in data.get("chunks", [])]


def stored_id_counts(root: Path, *, include_pending: bool = False) -> Counter[str]:
    """Ids across every hot window and indexed chunk file (session and archives).

    Synthetic split-turn events are created by passes, not appended, so they are left out.
    """
    counts: Counter[str] = Counter()
    for session in session_dirs(root):
        for event in read_jsonl(session / "events.jsonl"):
            if (event.get("meta") or {}).get("synthetic") != "split_turn_prefix":
                counts[event["id"]] += 1
        for chunk_id in indexed_chunk_ids(session):
            for event in read_jsonl(session / "chunks" / f"{chunk_id}.jsonl"):
                if (event.get("meta") or {}).get("synthetic") != "split_turn_prefix":
                    counts[event["id"]] += 1
        if include_pending:
            for pending in sorted((session / "chunks" / "pending").glob("*.jsonl")):
                for event in read_jsonl(pending):
                    counts[event["id"]] += 1
    return counts


def assert_each_once(root: Path, appended_ids: list[str], *, optional: Iterable[str] = ()) -> None:
    """The contract's invariant: each appended id appears exactly once, nothing else appears.

    `optional` ids (appends in flight when a process was killed) may be stored once or not
    at all, never twice.
    """
    counts = stored_id_counts(root)
    doubled = {i: n for i, n in counts.items() if n > 1}
    assert not doubled, f"ids stored more than once: {list(doubled)[:5]}"
    missing = [i for i in appended_ids if i not in counts]
    assert not missing, f"{len(missing)} appended ids lost, e.g. {missing[:5]}"
    unknown = set(counts) - set(appended_ids) - set(optional)
    assert not unknown, f"ids nobody appended: {list(unknown)[:5]}"


def compacted_events(session: Path) -> dict[str, list[dict[str, Any]]]:
    """Events of each indexed chunk of one session, by chunk id (synthetic ones left out)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for chunk_id in indexed_chunk_ids(session):
        out[chunk_id] = [
            e
            for e in read_jsonl(session / "chunks" / f"{chunk_id}.jsonl")
            if (e.get("meta") or {}).get("synthetic") != "split_turn_prefix"
        ]
    return out


def assert_recall_finds(
    manager: Any, events: Iterable[dict[str, Any]], query_of: Callable[[dict[str, Any]], str]
) -> int:
    """Recall with each event's own query returns a hit holding that event (the "no compacted
    history becomes unreachable" half of the promise). Returns how many were checked."""
    checked = 0
    for event in events:
        query = query_of(event)
        hits = manager.recall(query, limit=5).results
        found = [h for h in hits if any(e.get("id") == event["id"] for e in h.events)]
        assert found, f"recall {query!r} does not reach compacted event {event['id']}"
        assert all(h.source in ("active", "pending") for h in found)
        checked += 1
    return checked
