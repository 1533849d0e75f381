"""The "other process" of the TUI benchmarks: appends through `MemoryManager.append`.

python -m bench.tui_appender one MEMORY_DIR      # an id per stdin line -> appends it,
                                                 # prints time.monotonic() at its start
python -m bench.tui_appender burst MEMORY_DIR RATE SECONDS
                                                 # RATE appends/s, ids burst-0000000…;
                                                 # prints {"appended": n, "behind_s": …}
"""

from __future__ import annotations

import json
import sys
import time

from bench.common import ROOT  # noqa: F401  (puts the project on sys.path)
from core.config import CompactionConfig
from core.manager import MemoryManager


def main() -> None:
    mode, root = sys.argv[1], sys.argv[2]
    manager = MemoryManager(root, CompactionConfig())
    print("ready", flush=True)
    if mode == "one":
        for line in sys.stdin:
            event_id = line.strip()
            if not event_id:
                continue
            start = time.monotonic()
            manager.append(
                {"id": event_id, "type": "tool_result", "role": "tool", "content": "live row"}
            )
            print(repr(start), flush=True)
        return
    rate, seconds = float(sys.argv[3]), float(sys.argv[4])
    total = int(rate * seconds)
    begin = time.monotonic()
    worst = 0.0
    for i in range(total):
        due = begin + i / rate
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        else:
            worst = max(worst, now - due)
        manager.append(
            {
                "id": f"burst-{i:07d}",
                "type": "tool_result" if i % 2 else "tool_call",
                "role": "tool" if i % 2 else "assistant",
                "content": f"burst event {i}: the agent read a file and got 200 OK",
            }
        )
    print(json.dumps({"appended": total, "behind_s": worst}), flush=True)


if __name__ == "__main__":
    main()
