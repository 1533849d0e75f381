"""The pass as an object (issue 21): the stopwatch behind `PassResult.timings_ms`, and the
steps each kind of pass times — the keys a runtime's telemetry and `compact --json` report."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import core.compaction.stopwatch
from core.compaction.stopwatch import Stopwatch
from core.manager import MemoryManager
from core.summarizer import ExtractiveSummarizer
from tests.helpers.memory import fill, small_config

COMPACTING_STEPS = [
    "lock_read",
    "read",
    "plan",
    "stage_pending",
    "lock_pending",
    "summarize",
    "stage_commit",
    "lock_write",
    "lock_cleanup",
    "total",
]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """A clock the test moves by hand (seconds), for core.compaction.stopwatch alone."""
    now = [100.0]

    class FakeTime:
        @staticmethod
        def perf_counter() -> float:
            return now[0]

    monkeypatch.setattr(core.compaction.stopwatch, "time", FakeTime)
    yield now


def test_a_lap_counts_from_the_last_lap_and_a_restart_drops_what_ran_before(
    clock: list[float],
) -> None:
    watch = Stopwatch()
    clock[0] += 0.002
    assert watch.lap("read") == pytest.approx(2.0)
    clock[0] += 0.010  # not counted: the next step restarts the lap
    watch.restart()
    clock[0] += 0.003
    watch.lap("plan")
    clock[0] += 0.001
    watch.lap("write")
    assert watch.total() == pytest.approx(16.0)
    assert list(watch.timings) == ["read", "plan", "write", "total"]
    assert watch.timings["plan"] == pytest.approx(3.0)
    assert watch.timings["write"] == pytest.approx(1.0)


def manager(root: Path) -> MemoryManager:
    return MemoryManager(root, small_config(), summarizer=ExtractiveSummarizer())


def test_a_compacting_pass_times_every_step_in_order(tmp_path: Path) -> None:
    with manager(tmp_path / "m") as mm:
        fill(mm, 3)
        result = mm.save()
    assert result.compacted, result.reason
    assert list(result.timings_ms) == COMPACTING_STEPS
    assert all(ms >= 0 for ms in result.timings_ms.values())
    parts = sum(ms for step, ms in result.timings_ms.items() if step != "total")
    assert result.timings_ms["total"] >= parts
    assert list(result.to_json()["timings_ms"]) == COMPACTING_STEPS


def test_a_pass_that_is_not_needed_stops_after_reading(tmp_path: Path) -> None:
    with manager(tmp_path / "m") as mm:
        fill(mm, 1)
        result = mm.save()
    assert not result.compacted and not result.abandoned
    assert (result.reason or "").startswith("not needed:")
    assert result.kept_event_count == result.events_before == 4
    assert list(result.timings_ms) == ["lock_read", "read", "total"]
