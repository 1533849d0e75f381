"""A stand-in agent for the live `follow` tests: writes a log line by line, each line in two
writes (a torn last line the follower must wait out), then on `truncate` from stdin empties
the file, and on `write` writes the log again. Handshakes go over stdin/stdout, never sleeps."""

from __future__ import annotations

import sys
import time
from pathlib import Path


def write_log(src: Path, dst: Path, pause: float) -> int:
    lines = src.read_bytes().splitlines(keepends=True)
    with dst.open("ab") as out:
        for line in lines:
            half = len(line) // 2
            out.write(line[:half])
            out.flush()
            time.sleep(pause)  # pacing like an agent's, not synchronisation
            out.write(line[half:])
            out.flush()
    return len(lines)


def main(argv: list[str]) -> int:
    src, dst = Path(argv[0]), Path(argv[1])
    pause = float(argv[2]) if len(argv) > 2 else 0.002
    print(f"wrote {write_log(src, dst, pause)}", flush=True)
    for command in sys.stdin:
        if command.strip() == "truncate":
            with dst.open("r+b") as f:
                f.truncate(0)
            print("truncated", flush=True)
        elif command.strip() == "write":
            print(f"wrote {write_log(src, dst, pause)}", flush=True)
        elif command.strip() == "exit":
            return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
