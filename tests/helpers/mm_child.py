"""Child-process entry point for crash and concurrency tests: a real runtime in its own process.

usage: python tests/helpers/mm_child.py ROOT CONFIG_JSON COMMAND [ARGS]
  save [--force]            one maintenance pass; prints the PassResult as JSON
  save-openai URL           one forced pass with the openai summarizer at URL
  append PREFIX N           N single appends; prints the ids as JSON (one list)
  saves N                   N forced passes in a row; prints their results
  rotate                    rotate the session
  repair                    MemoryManager.repair(); prints the counts
  soak-write PREFIX SECS    turns of appends (ids PREFIX-n, markers as in loop) for SECS
                            seconds; prints {ids, max_append_s}
  soak-maintain SECS [AT]   passes (every other one forced) for SECS seconds, rotating once
                            AT seconds in; prints the counts of what the passes did
  loop PREFIX SEED [OPS]    a runtime's life until killed (or OPS steps): turns of appends
                            (ids PREFIX-n, content with the marker `mk<PREFIX>x<n>`), passes
                            (synchronous and on the maintenance thread) and now and then a
                            rotation. Prints, flushed line by line: `W id` before an append,
                            `A id` once it returned, `P` before and `R reason` after a pass,
                            `T` before and `D` after a rotation.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from core.config import CompactionConfig, SummarizerConfig
from core.manager import MemoryManager
from core.summarizer import make_summarizer


def marker(prefix: str, n: int) -> str:
    """A recall term unique to one event (letters and digits only: one token)."""
    return f"mk{prefix}x{n}"


def loop(mm: MemoryManager, prefix: str, seed: int, ops: int | None) -> None:
    rng = random.Random(seed)
    n = 0

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def append(event: dict[str, object], begin: bool = False) -> None:
        nonlocal n
        eid = f"{prefix}-{n}"
        text = f"step {n} {marker(prefix, n)}"
        n += 1
        say(f"W {eid}")
        if begin:
            mm.begin_run(text, id=eid)
        elif event.get("type") == "assistant_output" and rng.random() < 0.3:
            mm.commit_run(text, id=eid)  # appends, then schedules a background pass
        else:
            mm.append({**event, "id": eid, "content": text})
        say(f"A {eid}")

    step = 0
    while ops is None or step < ops:
        step += 1
        append({}, begin=True)
        for _ in range(rng.randint(0, 2)):
            call = f"{prefix}-c{n}"
            append({"type": "tool_call", "name": "shell", "tool_call_id": call})
            append({"type": "tool_result", "name": "shell", "tool_call_id": call})
        append({"type": "assistant_output"})
        roll = rng.random()
        if roll < 0.5:
            say("P")
            say(f"R {mm.save(force=rng.random() < 0.5).reason}")
        elif roll < 0.53:
            say("T")
            mm.rotate()
            say("D")
    mm.close()


def soak_write(mm: MemoryManager, prefix: str, seconds: float) -> dict[str, object]:
    rng = random.Random(prefix)
    deadline = time.monotonic() + seconds
    ids: list[str] = []
    worst = 0.0

    def append(etype: str, **fields: object) -> None:
        nonlocal worst
        eid = f"{prefix}-{len(ids)}"
        start = time.perf_counter()
        mm.append(
            {"type": etype, "id": eid, "content": f"step {marker(prefix, len(ids))}", **fields}
        )
        worst = max(worst, time.perf_counter() - start)
        ids.append(eid)

    while time.monotonic() < deadline:
        append("user_input")
        for _ in range(rng.randint(0, 2)):
            call = f"{prefix}-call{len(ids)}"
            append("tool_call", name="shell", tool_call_id=call)
            append("tool_result", name="shell", tool_call_id=call)
        append("assistant_output")
    return {"ids": ids, "max_append_s": worst}


def soak_maintain(mm: MemoryManager, seconds: float, rotate_at: float | None) -> dict[str, object]:
    start = time.monotonic()
    counts = {"passes": 0, "compactions": 0, "abandoned": 0, "busy": 0, "rotations": 0}
    longest = 0.0
    forced = False
    while time.monotonic() - start < seconds:
        if rotate_at is not None and time.monotonic() - start >= rotate_at:
            mm.rotate()
            counts["rotations"] += 1
            rotate_at = None
        forced = not forced
        began = time.perf_counter()
        result = mm.save(force=forced)
        longest = max(longest, time.perf_counter() - began)
        if result.reason == "busy":  # another maintainer's pass: back off a little
            counts["busy"] += 1
            time.sleep(0.01)
            continue
        counts["passes"] += 1
        counts["compactions"] += result.compacted
        counts["abandoned"] += result.abandoned
    return {**counts, "longest_pass_s": longest}


def main(argv: list[str]) -> int:
    root, config_json, command, *args = argv
    cfg = CompactionConfig(**json.loads(config_json))
    if command == "save":
        mm = MemoryManager(root, cfg)
        print(json.dumps(mm.save(force="--force" in args).to_json()))
    elif command == "save-openai":
        summ = SummarizerConfig(
            backend="openai", base_url=args[0], model="test", timeout_seconds=60
        )
        mm = MemoryManager(root, cfg, summarizer=make_summarizer(summ))
        print(json.dumps(mm.save(force=True).to_json()))
    elif command == "append":
        prefix, n = args[0], int(args[1])
        mm = MemoryManager(root, cfg)
        ids = []
        worst = 0.0
        for i in range(n):
            etype = "user_input" if i % 5 == 0 else "assistant_output"
            start = time.perf_counter()
            ids.append(mm.append({"type": etype, "content": f"{prefix} event {i}"})["id"])
            worst = max(worst, time.perf_counter() - start)
        print(json.dumps({"ids": ids, "max_append_s": worst}))
    elif command == "saves":
        mm = MemoryManager(root, cfg)
        results = [mm.save(force=True).to_json() for _ in range(int(args[0]))]
        print(json.dumps(results))
    elif command == "repair":
        print(json.dumps(MemoryManager(root, cfg).repair()))
    elif command == "soak-write":
        print(json.dumps(soak_write(MemoryManager(root, cfg), args[0], float(args[1]))))
    elif command == "soak-maintain":
        at = float(args[1]) if args[1:] else None
        print(json.dumps(soak_maintain(MemoryManager(root, cfg), float(args[0]), at)))
    elif command == "loop":
        loop(MemoryManager(root, cfg), args[0], int(args[1]), int(args[2]) if args[2:] else None)
    elif command == "rotate":
        mm = MemoryManager(root, cfg)
        print(json.dumps(mm.rotate().to_json()))
    else:
        print(f"unknown command {command}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
