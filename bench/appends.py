"""append_us_p50_100k: one `MemoryManager.append` while the hot window holds 100k events.

An append must not read events.jsonl: its cost is the same with 10 events or 100k. The figure
is the median of single appends (each a separate call, timed alone), at the default
`durability: run`; `append_durability` gives p50/p99 under each setting.
"""

from __future__ import annotations

import time

from bench.common import Outcome, percentile, scratch, session_bytes, write_session
from core.config import CompactionConfig
from core.manager import MemoryManager


def _time_appends(manager: MemoryManager, n: int) -> list[float]:
    for i in range(20):
        manager.append({"type": "tool_result", "role": "tool", "content": f"warm {i}"})
    times: list[float] = []
    for i in range(n):
        event = {"type": "tool_result", "role": "tool", "content": f"result {i} " * 20}
        start = time.perf_counter()
        manager.append(event)
        times.append(time.perf_counter() - start)
    return times


def run(quick: bool) -> Outcome:
    out = Outcome()
    n = 300 if quick else 2000
    with scratch("append100k") as root:
        write_session(root, session_bytes(100_000, "big"))
        manager = MemoryManager(root, CompactionConfig())  # durability: run (the default)
        times = _time_appends(manager, n)
        manager.close()
        size = manager.paths.events.stat().st_size
    out.values["append_us_p50_100k"] = percentile(times, 50) * 1e6
    out.details["append_100k"] = {
        "appends": n,
        "events_jsonl_mb": round(size / 1e6, 1),
        "p90_us": round(percentile(times, 90) * 1e6, 1),
        "p99_us": round(percentile(times, 99) * 1e6, 1),
    }
    # What each `durability` setting costs an append (a smaller file: the cost is the sync,
    # not the size). `run`'s background flush happens off the append's path.
    per_setting: dict[str, dict[str, float]] = {}
    for durability in ("relaxed", "run", "always"):
        with scratch(f"append-{durability}") as root:
            manager = MemoryManager(root, CompactionConfig(durability=durability))
            times = _time_appends(manager, n // 2 if durability == "always" else n)
            manager.close()
        per_setting[durability] = {
            "p50_us": round(percentile(times, 50) * 1e6, 1),
            "p99_us": round(percentile(times, 99) * 1e6, 1),
        }
    out.details["append_durability"] = per_setting
    return out
