"""Recall (issue 11): ranking quality, cold and warm latency, the index's cost to a pass and on
disk, each beside the in-memory index as baseline.

- `recall_hit1`, `recall_hit5`: the quality corpus (bench/quality/corpus/) replayed as
  `python -m bench.quality` does, queried with its definition: identifiers said in exactly one
  chunk's events (`bench.quality.metrics.unique_identifiers`, the same even sample of at most
  RECALL_SAMPLE per transcript), the right chunk first / in the first five. Baseline: the
  ranking before issue 11 (bench/recall_baseline.py) on the same chunks.
- `recall_cold_ms_1k_chunks`, `recall_cold_ms_10k_chunks`: a fresh process imports the
  project, opens the memory root and answers one query (timed inside the child from before the
  import to the answer; the interpreter's own start is not counted); median over the queries,
  one process each (`recall_once` parses only the chunk lines that can hold a query term).
  Baseline: the same with the in-memory index (it reads every chunk file).
- `recall_p50_ms_10k_chunks`: warm queries at 10,000 chunks / 1M events, one read-only
  manager reused (recall.sqlite opened read-only, as the CLI and a `--read-only` TUI open it).
- `recall_index_share_of_pass`: the pass hook's time adding the new chunk to recall.sqlite
  over the pass's own time (no-op summarizer, 2,000 events of ~1 KB, 1,000 chunks indexed).
- `recall_index_size_ratio`: recall.sqlite's size over the chunk files' size (10k fixture).

Fixtures: chunk files of 100 events built on disk, with a vocabulary of ~20k words, file
paths, dotted and CamelCase names, ticket ids and Chinese text. The 10k one (about 500 MB and
its index) is built once and kept under /tmp/bench-cache/; `--quick` uses it only when it is
already there (and says so), and measures the 1k one otherwise.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, Outcome, median, percentile, python_env, scratch
from core.config import CompactionConfig
from core.index.catalog import write_index
from core.index.format import ChunkEntry
from core.jsonl import serialize_event
from core.manager import MemoryManager
from core.recall.sqlite_index import index_path
from core.store.session_store import SessionStore

CACHE = Path("/tmp/bench-cache")
FIXTURE_VERSION = "v1"
PER_CHUNK = 100
QUERY_COUNT = 12

_SYLLABLES = [
    "ka", "ro", "mi", "sen", "tu", "vo", "lek", "dra", "pi", "nor", "gam", "zi", "bel",
    "qua", "sto", "fen", "yul", "ter", "osh", "wim", "cal", "dex", "jor", "hap",
]  # fmt: skip
_CJK = (
    "用户要求整理今天的会议记录并把待办事项发给项目组"
    "助手打开了日历确认时间后回复夜跑入门计划网络设置"
)


def _vocabulary(rng: random.Random, n: int) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _chunk_events(rng: random.Random, vocab: list[str], c: int) -> list[dict[str, Any]]:
    """One chunk: turns of a user request, tool calls and results, answers; every event names
    a few identifiers, one in five carries Chinese."""
    events: list[dict[str, Any]] = []
    topic = rng.sample(vocab[:4000], 12)
    for i in range(PER_CHUNK):
        words = [
            rng.choice(topic)
            if rng.random() < 0.3
            else vocab[int(rng.paretovariate(1.1)) % len(vocab)]
            for _ in range(45)
        ]
        a, b, d = rng.choice(topic), rng.choice(vocab), rng.choice(vocab)
        ident = rng.choice(
            [
                f"src/{a}/{b}_{d}.py",
                f"{a.capitalize()}{b.capitalize()}Error",
                f"{a}.{b}.{d}",
                f"TKT-{c}-{i}",
                f"{a}_{b}:{rng.randint(1, 999)}",
            ]
        )
        text = f"{' '.join(words[:20])} {ident} {' '.join(words[20:])}"
        if i % 5 == 0:
            start = rng.randrange(len(_CJK) - 12)
            text += " " + _CJK[start : start + 12]
        kind = ("user_input", "tool_call", "tool_result", "assistant_output")[i % 4]
        event: dict[str, Any] = {
            "id": f"c{c}-{i}",
            "type": kind,
            "ts": "2026-11-30T10:00:00.000Z",
        }
        if kind == "tool_call":
            event["name"] = "shell"
            event["arguments"] = {"cmd": text}
        else:
            event["content"] = text
        events.append(event)
    return events


def build_fixture(root: Path, chunks: int, seed: int = 11) -> list[str]:
    """Chunk files and index.yaml of `chunks` chunks; returns queries (rare words, an
    identifier of one chunk, a path, CamelCase, Chinese)."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng, 20_000)
    store = SessionStore(root)
    store.ensure_session()
    paths = store.paths
    paths.chunks_dir.mkdir(parents=True, exist_ok=True)
    entries: list[ChunkEntry] = []
    queries: list[str] = []
    for c in range(chunks):
        events = _chunk_events(rng, vocab, c)
        cid = f"chunk_{c + 1:05d}"
        paths.chunk_file(cid).write_bytes(b"".join(serialize_event(e) for e in events))
        summary = f"Chunk {c + 1}: worked on {events[0]['content'][:160]}"
        entries.append(
            ChunkEntry(
                cid, "2026-11-30T10:00:00Z", len(events), events[0]["id"], events[-1]["id"], summary
            )
        )
        if c % max(1, chunks // QUERY_COUNT) == 7 and len(queries) < QUERY_COUNT:
            text = events[14]["content"]
            pick = [w for w in text.split() if any(ch in w for ch in "_./-:") or w[:1].isupper()]
            queries.append(pick[0] if pick else text.split()[3])
    write_index(paths, entries)
    queries += [f"{vocab[5]} {vocab[900]}", "会议记录 待办", vocab[12_345], "TKT-7-13"]
    return queries


def fixture(chunks: int, *, build: bool) -> tuple[Path, list[str]] | None:
    """The cached fixture of `chunks` chunks with its index (built when `build`)."""
    folder = CACHE / f"recall-{chunks}-{FIXTURE_VERSION}"
    done = folder / "queries.json"
    if done.exists():
        return folder / "memory", json.loads(done.read_text())
    if not build:
        return None
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    queries = build_fixture(folder / "memory", chunks)
    # A writable manager: a read-only one never writes recall.sqlite (it would answer from a
    # copy in memory), and the fixture keeps its index.
    MemoryManager(folder / "memory", CompactionConfig()).recall("warmup")
    done.write_text(json.dumps(queries))
    return folder / "memory", queries


_CHILD = """
import sys, time, json
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
warnings = []
result = None
t_import = None
if {fast!r}:
    from core.recall.sqlite_index import recall_once
    t_import = time.perf_counter()
    result = recall_once({memory!r}, {query!r}, limit=5)
if result is None:
    from core.manager import MemoryManager
    mm = MemoryManager({memory!r}, read_only=True)
    mm.persistent_recall = {persistent!r}
    result = mm.recall({query!r}, limit=5)
    warnings = mm.recall_warnings
t1 = time.perf_counter()
print(json.dumps({{"ms": (t1 - t0) * 1000, "n": len(result.results), "warnings": warnings,
                  "import_ms": None if t_import is None else (t_import - t0) * 1000}}))
"""


def _child_env() -> dict[str, str]:
    """The children import compiled bytecode, as an installed package does: written once under
    /tmp/bench-cache/pycache (this machine's environment sets PYTHONDONTWRITEBYTECODE, which
    would make every fresh process compile the project's sources again, ~25 ms)."""
    env = python_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    return env


IMPORT_MS: list[float] = []
"""The import part of each fast cold recall (the project and the stdlib it pulls in)."""


def cold_ms(memory: Path, query: str, *, persistent: bool = True, fast: bool = True) -> float:
    """One fresh process: import, open, query (ms, timed inside the child). `fast`: through
    `core.recall.sqlite_index.recall_once` (what an agent's recall tool imports), else through
    `MemoryManager` (which imports the store, the passes and the summarizers)."""
    code = _CHILD.format(
        root=str(ROOT),
        memory=str(memory),
        persistent=persistent,
        query=query,
        fast=fast and persistent,
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_child_env(), timeout=900
    )
    if proc.returncode != 0:
        raise RuntimeError(f"cold recall child failed: {proc.stderr.strip()[-300:]}")
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    if doc["warnings"]:
        raise RuntimeError(f"cold recall warned: {doc['warnings']}")
    if doc["import_ms"] is not None:
        IMPORT_MS.append(float(doc["import_ms"]))
    return float(doc["ms"])


def chunk_bytes(memory: Path) -> int:
    folder = memory / "session" / "chunks"
    return sum(p.stat().st_size for p in folder.glob("*.jsonl"))


def warm(memory: Path, queries: list[str], rounds: int, *, persistent: bool = True) -> list[float]:
    mm = MemoryManager(memory, CompactionConfig(), read_only=True)
    mm.persistent_recall = persistent
    mm.recall(queries[0])
    times: list[float] = []
    for _ in range(rounds):
        for q in queries:
            start = time.perf_counter()
            mm.recall(q)
            times.append((time.perf_counter() - start) * 1000)
    return times


def index_share_of_pass(
    memory_1k: Path | None, passes: int, *, noop: bool = True
) -> dict[str, float]:
    """Passes adding a chunk to a session whose recall.sqlite already holds 1,000 chunks (a
    copy of the 1k fixture; None: a fresh 100-chunk one, for --quick): each
    pass timed without the index (its own time), then the index update it calls for (what the
    pass hook or the next recall does) timed alone. index.yaml's parse cache is emptied before
    each, so neither profits from the other having parsed the new index.yaml."""
    import core.index.reader
    from bench.common import make_events
    from bench.passes import NoopSummarizer
    from core.recall.sqlite_index import PersistentRecallIndex, read_chunk_file
    from core.store.paths import MemoryPaths

    with scratch("recall-pass") as tmp:
        root = tmp / "memory"
        if memory_1k is None:
            build_fixture(root, 100)
        else:
            shutil.copytree(memory_1k, root)
        mm = MemoryManager(root, CompactionConfig(), summarizer=NoopSummarizer() if noop else None)
        # The copy has new inodes: its index is rebuilt once here, before any timing.
        PersistentRecallIndex(MemoryPaths(root), read_chunk_file).refresh()
        mm.persistent_recall = False  # no hook: the pass's own time
        pass_ms: list[float] = []
        index_ms: list[float] = []
        added = 0
        for p in range(passes):
            mm.append_many(make_events(2000, prefix=f"p{p}", size=1000, seed=p))
            core.index.reader._CACHE.clear()
            result = mm.save(force=True)
            if not result.compacted:
                continue
            pass_ms.append(float(result.timings_ms.get("total", 0.0)))
            core.index.reader._CACHE.clear()
            index = PersistentRecallIndex(mm.paths, read_chunk_file)
            start = time.perf_counter()
            report = index.refresh()
            index_ms.append((time.perf_counter() - start) * 1000)
            index.close()
            added += report.added
            if report.rebuilt:
                raise RuntimeError("the index was rebuilt instead of updated")
    return {
        "share": median(index_ms) / median(pass_ms) if pass_ms else float("nan"),
        "pass_ms_median": median(pass_ms) if pass_ms else float("nan"),
        "index_update_ms_median": median(index_ms) if index_ms else float("nan"),
        "passes": float(len(pass_ms)),
        "chunks_added": float(added),
    }


def quality(quick: bool) -> dict[str, Any]:
    """hit@1 / hit@5 on the quality corpus, new ranking and the baseline on the same chunks."""
    import tempfile

    from bench import recall_baseline as old
    from bench.quality import harness
    from bench.quality import metrics as m
    from core.index.chunk_files import read_chunk_events
    from core.index.reader import read_index
    from core.transcripts.importers import load_transcript
    from core.transcripts.replay import replay

    entries = [e for e in harness.CORPUS if e.quick] if quick else list(harness.CORPUS)
    totals = {"queries": 0, "hit1": 0, "hit5": 0, "base_hit1": 0, "base_hit5": 0}
    misses: list[str] = []
    for entry in entries:
        transcript, _ = harness.with_ids(
            load_transcript(harness.CORPUS_DIR / entry.file, entry.fmt), entry.name
        )
        tmp = Path(tempfile.mkdtemp(prefix="bench-recall-quality-"))
        try:
            mm = MemoryManager(tmp / "memory", entry.config)
            replay(transcript, mm)
            mm.close()
            index = read_index(mm.paths).entries
            chunks = {e.chunk_id: read_chunk_events(mm.paths, e.chunk_id)[0] for e in index}
            unique = m.unique_identifiers(chunks)
            names = sorted(unique)
            if len(names) > harness.RECALL_SAMPLE:
                step = len(names) / harness.RECALL_SAMPLE
                names = [names[int(i * step)] for i in range(harness.RECALL_SAMPLE)]
            base = old.RecallIndex(
                old.RecallDoc(e.chunk_id, "active", e.summary, chunks[e.chunk_id]) for e in index
            )
            fresh = MemoryManager(tmp / "memory", entry.config, read_only=True)
            for ident in names:
                got = [h.chunk_id for h in fresh.recall(ident, limit=5).results]
                was = [h.chunk_id for h in base.search(ident, limit=5).results]
                want = unique[ident]
                totals["queries"] += 1
                totals["hit1"] += bool(got) and got[0] == want
                totals["hit5"] += want in got
                totals["base_hit1"] += bool(was) and was[0] == want
                totals["base_hit5"] += want in was
                if not (got and got[0] == want) and len(misses) < 12:
                    misses.append(f"{entry.name}: {ident!r} -> {got[:3]} (want {want})")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    n = max(1, totals["queries"])
    return {
        "transcripts": [e.name for e in entries],
        "queries": totals["queries"],
        "hit1": totals["hit1"] / n,
        "hit5": totals["hit5"] / n,
        "baseline_hit1": totals["base_hit1"] / n,
        "baseline_hit5": totals["base_hit5"] / n,
        "misses": misses,
    }


def fixture_hits(memory: Path, sample: int = 300) -> dict[str, Any]:
    """hit@1 / hit@5 on a fixture: identifiers (a word with a joiner or CamelCase) that occur
    in exactly one chunk, an even sample; new ranking and the baseline."""
    from bench import recall_baseline as old
    from core.index.chunk_files import read_chunk_events
    from core.index.reader import read_index
    from core.recall.ranking import event_search_text
    from core.store.paths import MemoryPaths

    paths = MemoryPaths(memory)
    entries = read_index(paths).entries
    where: dict[str, set[str]] = {}
    chunks: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        events = read_chunk_events(paths, e.chunk_id)[0]
        chunks[e.chunk_id] = events
        for ev in events:
            for word in event_search_text(ev).split():
                if any(ch in word for ch in "_./-:") or word[1:] != word[1:].lower():
                    where.setdefault(word, set()).add(e.chunk_id)
    unique = sorted(w for w, cids in where.items() if len(cids) == 1)
    step = max(1, len(unique) // sample)
    names = unique[::step][:sample]
    base = old.RecallIndex(
        old.RecallDoc(e.chunk_id, "active", e.summary, chunks[e.chunk_id]) for e in entries
    )
    mm = MemoryManager(memory, CompactionConfig(), read_only=True)
    n = hit1 = hit5 = b1 = b5 = 0
    for ident in names:
        (want,) = where[ident]
        got = [h.chunk_id for h in mm.recall(ident, limit=5).results]
        was = [h.chunk_id for h in base.search(ident, limit=5).results]
        n += 1
        hit1 += bool(got) and got[0] == want
        hit5 += want in got
        b1 += bool(was) and was[0] == want
        b5 += want in was
    return {
        "queries": n,
        "hit1": round(hit1 / max(1, n), 3),
        "hit5": round(hit5 / max(1, n), 3),
        "baseline_hit1": round(b1 / max(1, n), 3),
        "baseline_hit5": round(b5 / max(1, n), 3),
    }


def fixture_details(
    chunks: int,
    memory: Path,
    cold: list[float],
    import_ms: float,
    warm_ms: list[float],
    *,
    baseline: tuple[list[float], list[float]] | None = None,
) -> dict[str, Any]:
    """One fixture's figures for the JSON document, in its order; `baseline` (the in-memory
    index's cold and warm times, where it ran) adds its two keys beside ours."""
    details: dict[str, Any] = {
        "chunks": chunks,
        "events": chunks * PER_CHUNK,
        "cold_ms_median": round(median(cold), 1),
        "cold_ms_max": round(max(cold), 1),
        "cold_import_ms_median": round(import_ms, 1),
    }
    if baseline is not None:
        details["baseline_cold_ms_median"] = round(median(baseline[0]), 1)
    details["warm_p50_ms"] = round(percentile(warm_ms, 50), 2)
    details["warm_p90_ms"] = round(percentile(warm_ms, 90), 2)
    if baseline is not None:
        base_warm = baseline[1]
        details["baseline_warm_p50_ms"] = round(percentile(base_warm, 50), 2) if base_warm else None
    details["index_mb"] = round(index_path_size(memory) / 1e6, 1)
    details["chunk_files_mb"] = round(chunk_bytes(memory) / 1e6, 1)
    return details


def run(quick: bool) -> Outcome:
    out = Outcome()
    details: dict[str, Any] = {}

    q = quality(quick)
    out.values["recall_hit1"] = q["hit1"]
    out.values["recall_hit5"] = q["hit5"]
    details["quality"] = q
    if quick:
        out.notes["recall_hit1"] = "quick: the quick transcripts of the quality corpus only"

    small = fixture(1000, build=True)
    assert small is not None
    memory_1k, queries_1k = small
    cold_ms(memory_1k, queries_1k[0])  # writes the bytecode cache; not counted
    IMPORT_MS.clear()
    cold_1k = [cold_ms(memory_1k, q) for q in (queries_1k[::3] if quick else queries_1k)]
    import_1k = median(IMPORT_MS)
    out.values["recall_cold_ms_1k_chunks"] = median(cold_1k)
    base_cold_1k = [  # the in-memory index a new manager builds: seconds each
        cold_ms(memory_1k, q, persistent=False) for q in queries_1k[: 1 if quick else 6]
    ]
    warm_1k = warm(memory_1k, queries_1k, 1 if quick else 5)
    base_warm_1k = [] if quick else warm(memory_1k, queries_1k, 5, persistent=False)
    out.values["recall_p50_ms_1k_chunks"] = percentile(warm_1k, 50)
    details["1k"] = fixture_details(
        1000, memory_1k, cold_1k, import_1k, warm_1k, baseline=(base_cold_1k, base_warm_1k)
    )

    start = time.perf_counter()
    big = fixture(10_000, build=not quick)
    built_s = time.perf_counter() - start
    if big is None:
        out.values["recall_cold_ms_10k_chunks"] = None
        out.values["recall_p50_ms_10k_chunks"] = None
        out.values["recall_index_size_ratio"] = None
        for key in (
            "recall_cold_ms_10k_chunks",
            "recall_p50_ms_10k_chunks",
            "recall_index_size_ratio",
        ):
            out.notes[key] = (
                f"--quick: the 10k fixture is not cached under {CACHE}; run without --quick once"
            )
    else:
        memory_10k, queries_10k = big
        IMPORT_MS.clear()
        cold_10k = [cold_ms(memory_10k, q) for q in (queries_10k[::3] if quick else queries_10k)]
        import_10k = median(IMPORT_MS)
        warm_10k = warm(memory_10k, queries_10k, 1 if quick else 5)
        size_ratio = index_path_size(memory_10k) / chunk_bytes(memory_10k)
        out.values["recall_cold_ms_10k_chunks"] = median(cold_10k)
        out.values["recall_p50_ms_10k_chunks"] = percentile(warm_10k, 50)
        out.values["recall_index_size_ratio"] = size_ratio
        details["10k"] = {
            **fixture_details(10_000, memory_10k, cold_10k, import_10k, warm_10k),
            "fixture_build_s": round(built_s, 1),
            "baseline": "not run at 10k: the in-memory index would analyse all 1M events "
            "first (the 1k baseline's cold figure times ten)",
        }
    if not quick:
        details["1k"]["identifier_hits"] = fixture_hits(memory_1k)
    size_1k = index_path_size(memory_1k) / chunk_bytes(memory_1k)
    details["1k"]["index_size_ratio"] = round(size_1k, 3)

    share = index_share_of_pass(None if quick else memory_1k, 2 if quick else 6)
    if quick:
        out.notes["recall_index_share_of_pass"] = "quick: 100 chunks indexed before the passes"
    out.values["recall_index_share_of_pass"] = share["share"]
    details["index_update_vs_pass_noop_summarizer"] = {k: round(v, 3) for k, v in share.items()}
    if not quick:
        default = index_share_of_pass(memory_1k, 4, noop=False)
        details["index_update_vs_pass_default_summarizer"] = {
            k: round(v, 3) for k, v in default.items()
        }
    out.details["recall"] = details
    return out


def index_path_size(memory: Path) -> int:
    from core.store.paths import MemoryPaths

    path = index_path(MemoryPaths(memory))
    total = 0
    for suffix in ("", "-wal"):
        p = Path(f"{path}{suffix}")
        if p.exists():
            total += p.stat().st_size
    return total


if __name__ == "__main__":  # python -m bench.recall [--quick]: this group alone, as JSON
    result = run("--quick" in sys.argv)
    print(
        json.dumps(
            {"values": result.values, "notes": result.notes, "details": result.details}, indent=2
        )
    )
    os._exit(0)
