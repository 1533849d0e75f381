"""Child process for the append benchmarks: appends on an open-loop schedule.

    python -m bench.appender MEMORY_DIR RATE_PER_S

Prints `ready` once warm, starts on a `go` line on stdin, stops on a `stop` line, then prints
one JSON line: `{"samples": [[intended_start, latency_s], ...]}` (time.monotonic, which is one
clock for every process on Linux). Arrivals are Poisson at RATE; an append's latency is measured
from its intended start, so an append that was due while an earlier one was blocked counts
its wait (no coordinated omission).
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time

from bench.common import ROOT  # noqa: F401  (puts the project on sys.path)
from core.config import CompactionConfig
from core.manager import MemoryManager


def main() -> None:
    root, rate = sys.argv[1], float(sys.argv[2])
    manager = MemoryManager(root, CompactionConfig())
    for i in range(20):
        manager.append({"type": "tool_result", "role": "tool", "content": f"warm {i}"})
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    stop = threading.Event()

    def wait_stop() -> None:
        sys.stdin.readline()
        stop.set()

    threading.Thread(target=wait_stop, daemon=True).start()
    rng = random.Random(11)
    samples: list[tuple[float, float]] = []
    due = time.monotonic()
    n = 0
    while not stop.is_set():
        due += rng.expovariate(rate)
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        n += 1
        manager.append(
            {"type": "tool_result", "role": "tool", "content": f"appended during the pass {n}"}
        )
        samples.append((due, time.monotonic() - due))
    print(json.dumps({"samples": samples}), flush=True)


if __name__ == "__main__":
    main()
