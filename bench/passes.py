"""pass_ms_{1k,10k,100k} and pass_ratio_vs_io_*: one maintenance pass against plain I/O.

The pass runs through `MemoryManager.save()` with a no-op summarizer on a hot window of N
events of about 1 KB (the default config: the count trigger fires, the token path keeps the
newest ~20k tokens), without the recall.sqlite update `save()` runs once the pass has
committed (`recall_index_share_of_pass` measures that update against the pass). The
baseline, timed on the same bytes in the same run, is the least any rewrite must do: read
events.jsonl, parse every line, serialize every event again and write the result with an
fsync, with the same JSON library the store uses (`json`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import Outcome, events_bytes, make_events, median, scratch, write_session
from core.config import CompactionConfig
from core.events import Event
from core.manager import MemoryManager
from core.store.atomic import write_all


class NoopSummarizer:
    """Returns at once: the pass is timed without any summarizer work."""

    name = "noop"

    def summarize(self, events: Sequence[Event], **_: Any) -> str:
        return f"{len(events)} events"


def io_baseline(src: Path, dst: Path) -> float:
    """Seconds to read, parse, serialize and write+fsync every line of `src`."""
    start = time.perf_counter()
    data = src.read_bytes()
    events = [json.loads(line) for line in data.splitlines() if line]
    out = b"".join(
        json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        for e in events
    )
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_all(fd, out)
        os.fsync(fd)
    finally:
        os.close(fd)
    return time.perf_counter() - start


def one_pass(root: Path, data: bytes) -> tuple[float, float, dict[str, float]]:
    """(pass seconds, baseline seconds, pass timings) on a fresh session holding `data`."""
    write_session(root, data)
    baseline = io_baseline(root / "session" / "events.jsonl", root / "baseline.jsonl")
    os.unlink(root / "baseline.jsonl")
    manager = MemoryManager(root, CompactionConfig(), summarizer=NoopSummarizer())
    manager.persistent_recall = False  # the post-commit index update: measured apart
    start = time.perf_counter()
    result = manager.save()
    elapsed = time.perf_counter() - start
    if not result.compacted:
        raise RuntimeError(f"the pass did not compact: {result.reason}")
    return elapsed, baseline, dict(result.timings_ms)


def run(quick: bool) -> Outcome:
    out = Outcome()
    sizes = (("1k", 1_000), ("10k", 10_000), ("100k", 100_000))
    reps = {"1k": 5, "10k": 3, "100k": 1} if quick else {"1k": 9, "10k": 5, "100k": 3}
    for label, n in sizes:
        data = events_bytes(make_events(n, prefix=f"p{label}"))
        passes: list[float] = []
        ratios: list[float] = []
        timings: list[dict[str, float]] = []
        for rep in range(reps[label]):
            with scratch(f"pass{label}-{rep}") as root:
                t_pass, t_io, t = one_pass(root, data)
            passes.append(t_pass)
            ratios.append(t_pass / t_io)
            timings.append(t)
        out.values[f"pass_ms_{label}"] = median(passes) * 1000
        out.values[f"pass_ratio_vs_io_{label}"] = median(ratios)
        out.details[f"pass_{label}"] = {
            "events": n,
            "bytes": len(data),
            "reps": reps[label],
            "pass_ms": [round(p * 1000, 1) for p in passes],
            "ratios": [round(r, 3) for r in ratios],
            "timings_ms_last": {k: round(v, 1) for k, v in timings[-1].items()},
        }
    p10, p100 = out.values["pass_ms_10k"], out.values["pass_ms_100k"]
    assert p10 is not None and p100 is not None
    out.values["pass_growth_100k_over_10k"] = p100 / p10
    return out
