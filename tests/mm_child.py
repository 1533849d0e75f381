"""Child-process entry point for crash and concurrency tests: a real runtime in its own process.

usage: python tests/mm_child.py ROOT CONFIG_JSON COMMAND [ARGS]
  save [--force]            one maintenance pass; prints the PassResult as JSON
  save-openai URL           one forced pass with the openai summarizer at URL
  append PREFIX N           N single appends; prints the ids as JSON (one list)
  saves N                   N forced passes in a row; prints their results
  rotate                    rotate the session
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.config import CompactionConfig, SummarizerConfig
from core.manager import MemoryManager
from core.summarizer import make_summarizer


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
    elif command == "rotate":
        mm = MemoryManager(root, cfg)
        print(json.dumps(mm.rotate().to_json()))
    else:
        print(f"unknown command {command}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
