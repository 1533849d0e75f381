"""Child-process entry points for tests/store/test_store_processes.py (real processes, real lock).

    python tests/helpers/lock_child.py append ROOT WORKER COUNT   # "ready", waits for "go", appends
    python tests/helpers/lock_child.py hold ROOT                  # takes the lock, "locked", waits

Handshakes go over stdin/stdout so the tests never synchronise with sleeps.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from core.store.session_store import SessionStore


def append(root: str, worker: str, count: int) -> int:
    store = SessionStore(root, lock_timeout=60.0)
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return 3
    for i in range(count):
        store.append_events(
            [{"id": f"{worker}-{i:04d}", "type": "assistant_output", "content": f"{worker} {i}"}]
        )
    return 0


def hold(root: str) -> int:
    store = SessionStore(root, lock_timeout=30.0)
    with store.lock():
        print("locked", flush=True)
        sys.stdin.readline()  # held until the parent writes a line, closes stdin or kills us
    return 0


def main(argv: list[str]) -> int:
    if argv[0] == "append":
        return append(argv[1], argv[2], int(argv[3]))
    if argv[0] == "hold":
        return hold(argv[1])
    print(f"unknown command {argv[0]!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
