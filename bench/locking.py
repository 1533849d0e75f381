"""append_p99_ms_during_pass, append_p99_ratio_vs_locked, lock_hold_p99_ms_10k.

Appends come from a second process (`bench.appender`) on an open-loop Poisson schedule while
this process runs a pass over a 10k-event hot window (1 KB events) with a summarizer that
waits 1 s. The baseline is the same pass on the same store with the session lock held from
start to end, summarizing included: the one-phase design the two-phase pass replaces.

The lock hold is measured by wrapping the session lock's process-level acquire/release (a
bench-only patch of `core.store.locks.ProcessLock`): from the moment the flock is taken to the
moment it is released, for every hold a pass makes.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    ROOT,
    Outcome,
    events_bytes,
    make_events,
    percentile,
    python_env,
    scratch,
    write_session,
)
from core.config import CompactionConfig
from core.events import Event
from core.manager import MemoryManager
from core.store import locks as lock_module

APPEND_RATE = 500.0


class SleepSummarizer:
    """A summarizer that takes `seconds` (a stand-in for a model call)."""

    name = "sleep"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def summarize(self, events: Sequence[Event], **_: Any) -> str:
        time.sleep(self.seconds)
        return f"{len(events)} events summarized"


@contextlib.contextmanager
def lock_holds(lock_path: Path) -> Iterator[list[float]]:
    """Record how long each hold of the session lock at `lock_path` lasts, in seconds."""
    cls = lock_module.ProcessLock
    orig_acquire, orig_release = cls.acquire, cls.release
    holds: list[float] = []
    started: dict[int, float] = {}
    target = str(lock_path)

    def acquire(self: Any, timeout: float, *, blocking: bool = True) -> bool:
        got: bool = orig_acquire(self, timeout, blocking=blocking)
        if got and self._depth == 1 and str(self.path) == target:
            started[id(self)] = time.perf_counter()
        return got

    def release(self: Any) -> None:
        t0 = started.pop(id(self), None) if self._depth == 1 else None
        orig_release(self)
        if t0 is not None:
            holds.append(time.perf_counter() - t0)

    cls.acquire = acquire  # type: ignore[method-assign]
    cls.release = release  # type: ignore[method-assign]
    try:
        yield holds
    finally:
        cls.acquire = orig_acquire  # type: ignore[method-assign]
        cls.release = orig_release  # type: ignore[method-assign]


def _pass_with_appender(root: Path, locked: bool, summarizer_s: float) -> tuple[list[float], float]:
    """Append latencies (s) that were due while the pass ran, and the pass's duration."""
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.appender", str(root), str(APPEND_RATE)],
        cwd=ROOT,
        env=python_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the appender process did not start")
        manager = MemoryManager(root, CompactionConfig(), summarizer=SleepSummarizer(summarizer_s))
        child.stdin.write("go\n")
        child.stdin.flush()
        time.sleep(0.2)  # let the appender reach its steady rate before the pass begins
        start = time.monotonic()
        if locked:
            with manager.store.lock():
                result = manager.save()
        else:
            result = manager.save()
        end = time.monotonic()
        time.sleep(0.05)
        child.stdin.write("stop\n")
        child.stdin.flush()
        out = child.stdout.read()
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if not result.compacted:
        raise RuntimeError(f"the pass did not compact: {result.reason}")
    samples = json.loads(out.strip().splitlines()[-1])["samples"]
    during = [lat for due, lat in samples if start <= due <= end]
    return during, end - start


def run(quick: bool) -> Outcome:
    out = Outcome()
    reps = 1 if quick else 3
    n = 10_000
    project: list[float] = []
    baseline: list[float] = []
    durations: dict[str, list[float]] = {"two_phase": [], "locked": []}
    for rep in range(reps):
        for locked, sink in ((False, project), (True, baseline)):
            with scratch(f"append-{rep}-{int(locked)}") as root:
                write_session(root, events_bytes(make_events(n, prefix=f"a{rep}{int(locked)}")))
                lat, dur = _pass_with_appender(root, locked, 1.0)
                sink.extend(lat)
                durations["locked" if locked else "two_phase"].append(dur)
    p99 = percentile(project, 99) * 1000
    p99_locked = percentile(baseline, 99) * 1000
    out.values["append_p99_ms_during_pass"] = p99
    out.values["append_p99_ratio_vs_locked"] = p99 / p99_locked
    out.details["append_during_pass"] = {
        "hot_window_events": n,
        "rate_per_s": APPEND_RATE,
        "samples": len(project),
        "samples_locked": len(baseline),
        "p50_ms": round(percentile(project, 50) * 1000, 3),
        "max_ms": round(max(project) * 1000, 3),
        "p99_ms_locked_baseline": round(p99_locked, 1),
        "pass_s": [round(d, 3) for d in durations["two_phase"]],
        "locked_pass_s": [round(d, 3) for d in durations["locked"]],
    }

    holds: list[float] = []
    passes = 3 if quick else 10
    with scratch("lockhold") as root:
        write_session(root, b"")
        manager = MemoryManager(root, CompactionConfig(), summarizer=SleepSummarizer(0.0))
        for rep in range(passes):
            data = events_bytes(make_events(n, prefix=f"h{rep}", seed=rep))
            with open(manager.paths.events, "ab") as fh:
                fh.write(data)
            with lock_holds(manager.paths.lock) as got:
                result = manager.save(force=True)
            if not result.compacted:
                raise RuntimeError(f"the pass did not compact: {result.reason}")
            holds.extend(got)
    out.values["lock_hold_p99_ms_10k"] = percentile(holds, 99) * 1000
    out.details["lock_hold_10k"] = {
        "passes": passes,
        "holds": len(holds),
        "holds_ms_sorted_top": [round(h * 1000, 2) for h in sorted(holds, reverse=True)[:6]],
    }
    return out
