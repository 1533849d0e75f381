"""estimate_mb_s: `estimate_tokens` throughput on event-sized mixed English/Chinese text.

The text is cut into 400-character pieces (the size of a typical event's content), ~60% English
and ~40% Chinese pieces, some mixed; MB/s of UTF-8 input, best of three.
"""

from __future__ import annotations

import random
import time

from bench.common import CHINESE, ENGLISH, Outcome
from core.tokens import estimate_tokens


def sample_text(megabytes: float, seed: int = 7) -> str:
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


def run(quick: bool) -> Outcome:
    out = Outcome()
    text = sample_text(2.0 if quick else 10.0)
    pieces = [text[i : i + 400] for i in range(0, len(text), 400)]
    size_mb = len(text.encode("utf-8")) / 1e6
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for piece in pieces:
            estimate_tokens(piece)
        best = min(best, time.perf_counter() - start)
    out.values["estimate_mb_s"] = size_mb / best
    non_ascii = [p for p in pieces if not p.isascii()]
    start = time.perf_counter()
    for piece in non_ascii:
        estimate_tokens(piece)
    t = time.perf_counter() - start
    out.details["estimate"] = {
        "input_mb": round(size_mb, 2),
        "pieces": len(pieces),
        "non_ascii_mb_s": round(sum(len(p.encode()) for p in non_ascii) / 1e6 / t, 1),
    }
    return out
