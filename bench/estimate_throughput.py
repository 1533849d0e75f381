"""How fast is estimate_tokens on mixed English/Chinese text? (not a test: timings vary)

    python bench/estimate_throughput.py [MEGABYTES]

The estimate runs on every event a reader or the TUI sees, so it should stay far faster than
the disk: the target is at least 50 MB/s of UTF-8 input.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.tokens import estimate_tokens

ENGLISH = (
    "The agent opened the settings page, found the network panel and reported the status. "
    "Tool call returned 200 OK with 3 results; the user asked for a summary of each one. "
)
CHINESE = "用户要求整理今天的会议记录，并把待办事项发给项目组。助手打开了日历，确认时间后回复。"


def sample_text(megabytes: float, seed: int = 7) -> str:
    """Event-sized pieces (a few hundred bytes), ~60% English and ~40% Chinese by pieces."""
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    parts: list[str] = []
    size = 0
    while size < target:
        piece = ENGLISH if rng.random() < 0.6 else CHINESE
        if rng.random() < 0.3:
            piece = piece + " " + (CHINESE if piece is ENGLISH else ENGLISH)
        parts.append(piece)
        size += len(piece.encode("utf-8"))
    return "".join(parts)


def measure(texts: list[str], repeat: int = 3) -> float:
    """Best of `repeat` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            estimate_tokens(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    text = sample_text(megabytes)
    size_mb = len(text.encode("utf-8")) / 1_000_000
    chunk = 400
    pieces = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    whole = measure([text])
    per_event = measure(pieces)
    chinese = [p for p in pieces if not p.isascii()]
    chinese_mb = sum(len(p.encode("utf-8")) for p in chinese) / 1_000_000
    chinese_time = measure(chinese)
    print(f"input: {size_mb:.1f} MB UTF-8, {len(text):,} code points, {len(pieces):,} pieces")
    print(f"one string:          {size_mb / whole:8.1f} MB/s")
    print(f"{chunk}-char pieces:     {size_mb / per_event:8.1f} MB/s")
    print(f"non-ASCII pieces:    {chinese_mb / chinese_time:8.1f} MB/s (no ASCII fast path)")


if __name__ == "__main__":
    main()
