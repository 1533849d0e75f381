"""Crashes between any two writes of a pass, of recovery, of repair and of a rotation (issue 6,
"Crashes"), beyond the contract's fault points that tests/store/test_crash_recovery.py covers. A
real child process exits with status 99 at the point (core.store.faults.EXTRA_FAULT_POINTS); then
the next pass or `repair` recovers and the invariant holds: each appended id exactly once,
no pending evidence or temporary file left, summaries in step with the index, and recall
reaching every compacted event."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.compaction.summaries import render_summary
from core.manager import MemoryManager
from core.store.atomic import TEMP_NAME_RE
from core.store.faults import (
    EXTRA_FAULT_POINTS,
    FAULT_POINTS,
    PASS_FAULT_POINTS,
    RECOVERY_FAULT_POINTS,
    ROTATION_FAULT_POINTS,
)
from tests.helpers.invariants import (
    assert_each_once,
    assert_recall_finds,
    compacted_events,
    indexed_chunk_ids,
    yaml_entries,
)
from tests.helpers.memory import fill, run_child
from tests.helpers.paths import REPO
from tests.helpers.reliability import three_chunks

# A child killed at every fault point, ~7 s: CI runs it as its own step (-m extended);
# tests/store/test_crash_recovery.py covers the contract's points in the default run.
pytestmark = pytest.mark.extended

PASS_POINTS = list(PASS_FAULT_POINTS)
RECOVERY_POINTS = list(RECOVERY_FAULT_POINTS)
ROTATION_POINTS = list(ROTATION_FAULT_POINTS)


def test_every_extra_point_is_exercised_here() -> None:
    covered = {*PASS_POINTS, *RECOVERY_POINTS, *ROTATION_POINTS, "during_index_rebuild"}
    assert covered == set(EXTRA_FAULT_POINTS)


def test_every_fault_point_in_core_is_listed() -> None:
    """A point the code calls but neither list names is never crashed at by any test."""
    core = REPO / "core"
    called = {
        name
        for source in core.rglob("*.py")
        for name in re.findall(
            r"(?:fault_point|_fault_wanted)\(\s*\"([a-z_]+)\"", source.read_text("utf-8")
        )
    }
    assert called, "no fault point found: the scan is out of date"
    assert called <= {*FAULT_POINTS, *EXTRA_FAULT_POINTS}, called - {
        *FAULT_POINTS,
        *EXTRA_FAULT_POINTS,
    }


def error_code_query(event: dict[str, object]) -> str:
    """fill() gives every turn its own code: E<n> in the user input and the answers."""
    text = str(event.get("content") or event.get("arguments") or "")
    code = next((w for w in text.replace(":", " ").split() if w.startswith("E")), None)
    return code or text


def assert_recovered(root: Path, mm: MemoryManager, ids: list[str]) -> None:
    session = root / "session"
    pending = session / "chunks" / "pending"
    assert not (pending.exists() and any(pending.iterdir())), list(pending.iterdir())
    for folder in (session, session / "chunks"):
        assert not [p for p in folder.iterdir() if TEMP_NAME_RE.match(p.name)]
    assert_each_once(root, ids)
    chunks = indexed_chunk_ids(session)
    assert all((session / "chunks" / f"{c}.jsonl").exists() for c in chunks)
    if chunks:
        entries = yaml_entries(session / "chunks" / "index.yaml")
        expected = render_summary(
            [(e["chunk_id"], e["summary"]) for e in entries],
            summary_max_chunks=mm.config.summary_max_chunks,
            max_rolling_summary_lines=mm.config.max_rolling_summary_lines,
        )
        assert (session / "summary.md").read_text(encoding="utf-8") == expected.summary_md
    events = [e for evs in compacted_events(session).values() for e in evs]
    # tool results carry only the code: "E12" finds its chunk through the matched events.
    assert_recall_finds(mm, [e for e in events if e.get("type") != "tool_call"], error_code_query)


@pytest.mark.parametrize("point", PASS_POINTS)
@pytest.mark.parametrize("recover_with", ["pass", "repair"])
def test_crash_between_the_writes_of_a_pass(tmp_path: Path, point: str, recover_with: str) -> None:
    root = tmp_path / "memory"
    mm, ids = three_chunks(root)  # a fourth chunk pushes one into summary_archive.md
    crashed = run_child(root, "save", fault=point)
    assert crashed.returncode == 99, crashed.stderr or crashed.stdout
    ids += fill(mm, 1, start=50)
    if recover_with == "pass":
        mm.save()
    else:
        mm.repair()
    assert_recovered(root, mm, ids)


@pytest.mark.parametrize("point", RECOVERY_POINTS)
def test_crash_inside_recovery_is_itself_recovered(tmp_path: Path, point: str) -> None:
    root = tmp_path / "memory"
    mm, ids = three_chunks(root)
    first = run_child(root, "save", fault="after_events_replace")
    assert first.returncode == 99  # events cut, chunk not written: recovery has work to do
    second = run_child(root, "repair", fault=point)
    assert second.returncode == 99, second.stderr or second.stdout
    third = run_child(root, "save", fault=point)  # a pass recovers first; it may die again
    assert third.returncode in (0, 99)
    mm.repair()
    assert_recovered(root, mm, ids)


def test_crash_while_repair_rebuilds_the_index(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm, ids = three_chunks(root)
    (root / "session" / "chunks" / "index.yaml").write_text("chunks: [unclosed\n")
    crashed = run_child(root, "repair", fault="during_index_rebuild")
    assert crashed.returncode == 99
    assert not (root / "session" / "chunks" / "index.yaml").exists()
    mm.repair()
    assert len(indexed_chunk_ids(root / "session")) == 3
    assert_recovered(root, mm, ids)


@pytest.mark.parametrize("point", ROTATION_POINTS)
def test_crash_between_the_steps_of_a_rotation(tmp_path: Path, point: str) -> None:
    root = tmp_path / "memory"
    mm, ids = three_chunks(root)
    crashed = run_child(root, "rotate", fault=point)
    assert crashed.returncode == 99
    archives = (
        list((root / "session_archive").glob("*")) if point != "before_rotation_rename" else []
    )
    ids += fill(mm, 1, start=60)
    assert_each_once(root, ids)
    result = mm.rotate()
    assert result.closed_session_id is not None
    assert len(list((root / "session_archive").iterdir())) == len(archives) + 1
    ids += fill(mm, 3, start=70)
    assert mm.save(force=True).compacted
    assert_recovered(root, mm, ids)
