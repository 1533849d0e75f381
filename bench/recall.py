"""recall_p50_ms_1k_chunks: a recall query over 1,000 indexed chunks holding 100k events.

The session is built directly on disk (chunk files, index.yaml with a summary per chunk, an
empty hot window); the first query builds the recall index (reported as `cold_ms`), the figure
is the median of the queries after it (the index warm, the manager reused as an agent would).
Queries mix rare words, common words, a file path and Chinese text. The details also give the
recall right after an append (`after_append_max_ms`) and the memory the index takes
(`index_rss_mb`: it keeps term postings, and reads a returned chunk's events from its file).
"""

from __future__ import annotations

import time

from bench.common import Outcome, make_events, percentile, rss_mb, scratch
from core.chunks import ChunkEntry, write_index
from core.config import CompactionConfig
from core.manager import MemoryManager
from core.store import SessionStore, serialize_event

QUERIES = (
    "kubernetes rollback",
    "invoice refund",
    "/var/log/app_main.log",
    "会议记录",
    "battery status settings",
    "webhook retry quota",
    "待办事项 项目组",
    "firmware sensor",
    "postgres migration latency",
    "calendar",
)


def run(quick: bool) -> Outcome:
    out = Outcome()
    chunks, per_chunk = 1000, 100
    events = make_events(chunks * per_chunk, prefix="r", size=400)
    with scratch("recall") as root:
        store = SessionStore(root)
        store.ensure_session()
        paths = store.paths
        paths.chunks_dir.mkdir(parents=True, exist_ok=True)
        entries: list[ChunkEntry] = []
        for c in range(chunks):
            part = events[c * per_chunk : (c + 1) * per_chunk]
            cid = f"chunk_{c + 1:04d}"
            paths.chunk_file(cid).write_bytes(b"".join(serialize_event(e) for e in part))
            summary = (
                f"Chunk {c + 1}: the agent handled {part[0]['content'][:120]} "
                f"and answered; topic-{c % 97} follow-up."
            )
            entries.append(
                ChunkEntry(
                    cid, "2026-11-29T17:45:43Z", len(part), part[0]["id"], part[-1]["id"], summary
                )
            )
        write_index(paths, entries)
        del events, part
        manager = MemoryManager(root, CompactionConfig())
        rss_before = rss_mb()
        start = time.perf_counter()
        first = manager.recall(QUERIES[0])
        cold = time.perf_counter() - start
        index_rss = rss_mb() - rss_before
        times: list[float] = []
        rounds = 3 if quick else 10
        hits = 0
        for _ in range(rounds):
            for query in QUERIES:
                start = time.perf_counter()
                result = manager.recall(query)
                times.append(time.perf_counter() - start)
                hits += len(result.results)
        # An agent appends between recalls: the index must stay warm (it depends on the
        # chunks, not on the hot window).
        after_appends: list[float] = []
        for i in range(5):
            manager.append({"type": "assistant_output", "content": f"progress note {i}"})
            start = time.perf_counter()
            manager.recall(QUERIES[i % len(QUERIES)])
            after_appends.append(time.perf_counter() - start)
        cold_fresh: float | None = None
        if not quick:
            fresh = MemoryManager(root, CompactionConfig())
            start = time.perf_counter()
            fresh.recall(QUERIES[1])
            cold_fresh = time.perf_counter() - start
    out.values["recall_p50_ms_1k_chunks"] = percentile(times, 50) * 1000
    out.details["recall"] = {
        "chunks": chunks,
        "events": chunks * per_chunk,
        "queries": len(times),
        "p90_ms": round(percentile(times, 90) * 1000, 2),
        "cold_first_query_ms": round(cold * 1000, 1),
        "cold_new_manager_ms": None if cold_fresh is None else round(cold_fresh * 1000, 1),
        "after_append_max_ms": round(max(after_appends) * 1000, 2),
        "index_rss_mb": round(index_rss, 1),
        "results_first_query": len(first.results),
        "mean_results": round(hits / len(times), 2),
    }
    return out
