"""The prompt ledger's figures (issue 24): what a ledger line adds to `build_prompt`, a past
prompt rebuilt in a fresh process at 10k chunks, and the timeline read at 10k calls.

- `ledger_append_us_p50`: p50 of `build_prompt` with its ledger line minus p50 of the same
  call as a preview (`record=False`, no line), interleaved, on a session of 10 chunks and a
  40-event hot window (1 KB events), the same system prompt and task each call (a runtime's
  tool loop; a new task costs one text file more, once).
- `prompt_rebuild_cold_ms_10k_chunks`: `session-inspector prompt --at N --json` in a fresh
  process (median; interpreter start included, as the other cold figures), for a call in the
  middle of a session of 10,000 chunks (2,000 with --quick) whose ledger holds a call per chunk.
  The root is written by the project's writers (chunk files, index.yaml, the catalog,
  summary.md) and its ledger by `PromptLedger.record_call`, with each call's hot window the
  events that were not compacted yet then.
- `timeline_open_ms_10k_calls`: `core.timeline.build_timeline(light=True)` (what the TUI's
  Timeline reads when it opens: a call as a point, its parts read with its rebuild) on a
  session of 10,000 calls and 1,000 passes (2,000 / 200 with --quick) played by the real
  runtime API (`build_prompt`, passes), median of 5; `timeline_full_ms` in the details is the
  `timeline` command's full read of the same ledger.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

from bench.common import Outcome, make_events, scratch
from bench.scale import cold_command
from core.config import CompactionConfig
from core.events import Event
from core.index.catalog import rebuild_catalog, write_index
from core.index.chunk_files import write_chunk_file
from core.index.format import ChunkEntry
from core.maintenance.recovery import write_summaries
from core.manager import MemoryManager
from core.store.ledger import PromptLedger
from core.store.session_store import SessionStore
from core.timeline import build_timeline

SYSTEM = "You are a coding agent. Follow the repository's conventions. " * 40


def append_cost(tmp: Path, reps: int) -> dict[str, float]:
    config = CompactionConfig(
        count_compress_after_events=40, hot_window_events=40, keep_recent_tokens=10**9
    )
    mm = MemoryManager(tmp / "append", config)
    for k in range(10):
        mm.append_many(make_events(45, prefix=f"w{k}", size=1000, seed=k))
        mm.save(force=True)
    mm.append_many(make_events(40 - len(mm.store.read_events().events), prefix="hot", size=1000))
    with_line: list[float] = []
    without: list[float] = []
    for _ in range(50):  # warm: caches, page cache
        mm.build_prompt(SYSTEM, "continue")
        mm.build_prompt(SYSTEM, "continue", record=False)
    for _ in range(reps):
        t = time.perf_counter()
        mm.build_prompt(SYSTEM, "continue")
        with_line.append(time.perf_counter() - t)
        t = time.perf_counter()
        mm.build_prompt(SYSTEM, "continue", record=False)
        without.append(time.perf_counter() - t)
    p50_with = statistics.median(with_line) * 1e6
    p50_without = statistics.median(without) * 1e6
    return {
        "build_prompt_us_p50_with_ledger": round(p50_with, 1),
        "build_prompt_us_p50_without": round(p50_without, 1),
        "ledger_append_us_p50": max(0.0, p50_with - p50_without),
        "hot_events": float(len(mm.store.read_events().events)),
    }


def _small_events(prefix: str, n: int) -> list[Event]:
    events: list[Event] = [
        {"id": f"{prefix}-u", "type": "user_input", "role": "user", "content": f"request {prefix}"}
    ]
    for k in range(n - 1):
        events.append(
            {
                "id": f"{prefix}-{k}",
                "type": "assistant_output",
                "role": "assistant",
                "content": f"step {k} of {prefix}: checked /srv/app/main.py, 200 OK in 40 ms",
            }
        )
    return events


def chunk_root(root: Path, n_chunks: int) -> int:
    """A session of `n_chunks` chunks (10 events each) whose ledger holds one call before each
    pass; returns the call number to rebuild (the middle one)."""
    store = SessionStore(root)
    store.ensure_session()
    paths = store.paths
    config = CompactionConfig()
    root_event: Event = {"id": "root", "type": "user_input", "role": "user", "content": "go"}
    chunks = [_small_events(f"k{i}", 10) for i in range(n_chunks + 1)]
    entries: list[ChunkEntry] = []
    for i in range(n_chunks):
        cid = f"chunk_{i + 1:04d}"
        write_chunk_file(paths, cid, chunks[i])
        entries.append(
            ChunkEntry(
                chunk_id=cid,
                created_at=f"2026-12-01T00:{i // 600 % 60:02d}:{i % 60:02d}.000Z",
                event_count=10,
                first_event_id=chunks[i][0]["id"],
                last_event_id=chunks[i][-1]["id"],
                summary=f"chunk {i}: request k{i}, checked /srv/app/main.py",
            )
        )
    write_index(paths, entries)
    rebuild_catalog(paths)
    write_summaries(store, config, entries)
    with store.lock():
        store.replace_events([root_event, *chunks[n_chunks]])
    ledger = PromptLedger(paths)
    summary = paths.summary.read_text(encoding="utf-8")
    for i in range(n_chunks):
        ledger.record_call(
            SYSTEM,
            summary if i else None,
            [root_event, *chunks[i]],
            "continue",
            model=None,
            chunk_count=i,
            last_chunk_id=entries[i - 1].chunk_id if i else None,
            message_count=len(chunks[i]) + 3,
        )
    return n_chunks // 2 + 1


def rebuild_cold(tmp: Path, n_chunks: int, reps: int) -> dict[str, float]:
    root = tmp / "rebuild"
    t = time.perf_counter()
    number = chunk_root(root, n_chunks)
    build_s = time.perf_counter() - t
    args = ["prompt", "--at", str(number), "--json"]
    cold_command(root, args)  # bytecode, page cache
    times = [cold_command(root, args) for _ in range(reps)]
    floor = [cold_command(root, ["--help"]) for _ in range(reps)]
    return {
        "prompt_rebuild_cold_ms": statistics.median(times) * 1000,
        "cli_help_cold_ms": round(statistics.median(floor) * 1000, 1),
        "chunks": float(n_chunks),
        "fixture_build_s": round(build_s, 1),
    }


def timeline_open(tmp: Path, calls: int, reps: int) -> dict[str, float]:
    config = CompactionConfig(
        count_compress_after_events=20, hot_window_events=10, keep_recent_tokens=10**9
    )
    mm = MemoryManager(tmp / "timeline", config)
    rng = random.Random(3)
    t = time.perf_counter()
    for k in range(calls):
        if k % 5 == 0:
            mm.begin_run(f"request {k}: fix /srv/app/main.py")
        mm.append({"type": "assistant_output", "content": f"step {k}: " + "x" * rng.randrange(40)})
        mm.build_prompt(SYSTEM, f"task {k // 5}")
        if k % 10 == 9:
            mm.save(force=True)
    build_s = time.perf_counter() - t
    times = []
    rows = 0
    passes = 0
    full = []
    for _ in range(reps):
        t = time.perf_counter()
        timeline = build_timeline(mm.paths, mm.config, light=True)
        times.append(time.perf_counter() - t)
        rows, passes = len(timeline.rows), timeline.passes
        t = time.perf_counter()
        build_timeline(mm.paths, mm.config)
        full.append(time.perf_counter() - t)
    return {
        "timeline_open_ms": statistics.median(times) * 1000,
        "timeline_full_ms": round(statistics.median(full) * 1000, 1),
        "calls": float(calls),
        "passes": float(passes),
        "rows": float(rows),
        "fixture_build_s": round(build_s, 1),
    }


def run(quick: bool) -> Outcome:
    out = Outcome()
    with scratch("ledger") as tmp:
        append = append_cost(tmp, 500 if quick else 3000)
        out.values["ledger_append_us_p50"] = append["ledger_append_us_p50"]
        n_chunks = 2_000 if quick else 10_000
        rebuild = rebuild_cold(tmp, n_chunks, 3 if quick else 7)
        out.values["prompt_rebuild_cold_ms_10k_chunks"] = rebuild["prompt_rebuild_cold_ms"]
        calls = 2_000 if quick else 10_000
        tl = timeline_open(tmp, calls, 5)
        out.values["timeline_open_ms_10k_calls"] = tl["timeline_open_ms"]
        if quick:
            for key in ("prompt_rebuild_cold_ms_10k_chunks", "timeline_open_ms_10k_calls"):
                out.notes[key] = "--quick: 2,000 chunks / 2,000 calls"
    out.details["ledger"] = {"append": append, "rebuild": rebuild, "timeline": tl}
    return out
