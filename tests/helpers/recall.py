"""A compacted memory root with searchable turns, and the in-memory recall answer the persistent
recall index (chunks/recall.sqlite) must equal: shared by the recall-index tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from core.config import CompactionConfig
from core.manager import MemoryManager
from core.recall.ranking import RecallResult
from core.recall.sqlite_index import INDEX_FILE
from tests.helpers.memory import SMALL

QUERIES = ["module_3.py", "TKT-1", "camera error", "ticket", "module_0.py camera", "E5"]
"""File names, ticket ids, plain words and codes: each kind of term the index must answer."""


def config() -> CompactionConfig:
    """The small config the recall roots are written with."""
    return CompactionConfig(**SMALL)


def fill(mm: MemoryManager, turns: int, start: int = 0) -> None:
    """`turns` committed turns, turn n naming ticket TKT-<n>, code E<n> and src/module_<n>.py."""
    for n in range(start, start + turns):
        mm.begin_run(f"turn {n}: ticket TKT-{n} about the camera error E{n}")
        mm.append({"type": "tool_call", "name": "shell", "tool_call_id": f"k{n}", "arguments": {}})
        mm.append(
            {
                "type": "tool_result",
                "name": "shell",
                "tool_call_id": f"k{n}",
                "content": f"Traceback in src/module_{n}.py: camera busy",
            }
        )
        mm.commit_run(f"logged TKT-{n}")
        mm.wait_for_maintenance()


def compacted_root(tmp_path: Path, passes: int = 3) -> Path:
    """`tmp_path/m` after `passes` forced passes of three turns each (one chunk a pass)."""
    root = tmp_path / "m"
    mm = MemoryManager(root, config())
    for p in range(passes):
        fill(mm, 3, start=3 * p)
        assert mm.save(force=True).compacted
    mm.close()
    return root


def pass_without_hook(root: Path, start: int) -> None:
    """A pass (three turns from `start`, forced) that leaves recall.sqlite behind: it catches up
    on its next use."""
    writer = MemoryManager(root, config())
    writer.persistent_recall = False
    fill(writer, 3, start=start)
    assert writer.save(force=True).compacted
    writer.close()


def in_memory(root: Path, query: str, limit: int = 5, **kw: Any) -> RecallResult:
    """The answer without the persistent index: what the index's answers must equal."""
    mm = MemoryManager(root, config(), read_only=True)
    mm.persistent_recall = False
    return mm.recall(query, limit=limit, **kw)


def assert_same_as_in_memory(root: Path, **kw: Any) -> None:
    """Every query in QUERIES answers through the index as the in-memory build does."""
    for q in QUERIES:
        fresh = MemoryManager(root, config(), read_only=True)
        assert fresh.recall(q, limit=10, **kw) == in_memory(root, q, limit=10, **kw), q


def index_file(root: Path, session: str = "session") -> Path:
    """Where a session's persistent recall index lives."""
    return root / session / "chunks" / INDEX_FILE


def indexed_ids(path: Path) -> list[str]:
    """The chunk ids the index holds, in chunk order."""
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT chunk_id FROM chunks ORDER BY no")]
