"""Soak (issue 6, "Concurrency"): writer processes and maintenance processes on one memory
root for a bounded time, with a rotation in the middle (one maintainer rotates half way).
Then the invariant over the session and the archive, and recall over a sample of the active
session's compacted events. The default run lasts about 40 s; `-m slow` runs 5 minutes.
The figures printed (-s) are the ones docs/RELIABILITY.md reports."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.manager import MemoryManager
from tests.helpers.invariants import (
    assert_each_once,
    assert_recall_finds,
    compacted_events,
    session_dirs,
)
from tests.helpers.mm_child_run import spawn_mm_child
from tests.helpers.reliability import SMALL, small_config

CONFIG: dict[str, Any] = {**SMALL, "count_compress_after_events": 40, "hot_window_events": 10}


def result_of(proc: subprocess.Popen[str], seconds: float) -> dict[str, Any]:
    out, err = proc.communicate(timeout=seconds + 120)
    assert proc.returncode == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def soak(tmp_path: Path, seconds: float, writers: int = 3, maintainers: int = 2) -> dict[str, Any]:
    root = tmp_path / "memory"
    duration = f"{seconds:g}"
    procs = [spawn_mm_child(root, CONFIG, "soak-write", f"w{i}", duration) for i in range(writers)]
    procs += [spawn_mm_child(root, CONFIG, "soak-maintain", duration, f"{seconds / 2:g}")]
    procs += [
        spawn_mm_child(root, CONFIG, "soak-maintain", duration) for _ in range(maintainers - 1)
    ]
    results = [result_of(p, seconds) for p in procs]
    written, maintained = results[:writers], results[writers:]
    ids = [i for r in written for i in r["ids"]]

    mm = MemoryManager(root, small_config(**CONFIG))
    final = mm.save(force=True)
    assert final.reason != "busy"
    assert_each_once(root, ids)
    pending = root / "session" / "chunks" / "pending"
    assert not (pending.exists() and any(pending.iterdir()))
    assert sum(m["rotations"] for m in maintained) == 1
    assert len(session_dirs(root)) == 2, "the active session and one archive"

    compacted = [e for evs in compacted_events(root / "session").values() for e in evs]
    sample = random.Random(7).sample(compacted, min(300, len(compacted)))
    assert_recall_finds(mm, sample, lambda e: str(e["content"]).split()[-1])

    figures = {
        "seconds": seconds,
        "writers": writers,
        "maintainers": maintainers,
        "events_appended": len(ids),
        "passes": sum(m["passes"] for m in maintained),
        "compactions": sum(m["compactions"] for m in maintained),
        "abandoned_passes": sum(m["abandoned"] for m in maintained),
        "busy_returns": sum(m["busy"] for m in maintained),
        "longest_append_wait_ms": round(max(r["max_append_s"] for r in written) * 1000, 1),
        "longest_pass_ms": round(max(m["longest_pass_s"] for m in maintained) * 1000, 1),
        "chunks_active": len(compacted_events(root / "session")),
        "recall_checked": len(sample),
    }
    print(f"\nsoak figures: {json.dumps(figures)}")
    assert figures["compactions"] > 0
    return figures


@pytest.mark.extended
def test_soak_bounded(tmp_path: Path) -> None:
    soak(tmp_path, seconds=40)


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_soak_full(tmp_path: Path) -> None:
    soak(tmp_path, seconds=300, writers=4, maintainers=3)
