"""append_us_p50_100k: one `MemoryManager.append` while the hot window holds 100k events.

An append must not read events.jsonl: its cost is the same with 10 events or 100k. The figure
is the median of single appends (each a separate call, timed alone).
"""

from __future__ import annotations

import time

from bench.common import Outcome, percentile, scratch, session_bytes, write_session
from core.config import CompactionConfig
from core.manager import MemoryManager


def run(quick: bool) -> Outcome:
    out = Outcome()
    n = 300 if quick else 2000
    with scratch("append100k") as root:
        write_session(root, session_bytes(100_000, "big"))
        manager = MemoryManager(root, CompactionConfig())
        for i in range(20):
            manager.append({"type": "tool_result", "role": "tool", "content": f"warm {i}"})
        times: list[float] = []
        for i in range(n):
            event = {"type": "tool_result", "role": "tool", "content": f"result {i} " * 20}
            start = time.perf_counter()
            manager.append(event)
            times.append(time.perf_counter() - start)
        size = manager.paths.events.stat().st_size
    out.values["append_us_p50_100k"] = percentile(times, 50) * 1e6
    out.details["append_100k"] = {
        "appends": n,
        "events_jsonl_mb": round(size / 1e6, 1),
        "p90_us": round(percentile(times, 90) * 1e6, 1),
        "p99_us": round(percentile(times, 99) * 1e6, 1),
    }
    return out
