"""A long-lived memory root for the scale benchmarks (issue 14), built once and cached.

`ensure_scale_root(quick)` gives a root whose active session holds 10,000 chunks (2,000 with
`quick`) of 100 compacted events each, plus one archived session per 100 chunks (100 at 10k).
Everything is written by the project's own writers, as passes and rotations would leave it:
chunk files by `write_chunk_file`, index.yaml by `write_index`, summary.md and
summary_archive.md by `write_summaries`, the hot window by `SessionStore.append_events`, the
archives by `core.maintenance.rotation.rotate`, chunks/recall.sqlite by `MemoryManager.recall`. Each
chunk's summary is the extractive summarizer's output on that chunk's own events. Building 10k
chunks takes minutes, so the root is cached under `CACHE_DIR`, keyed by `GENERATOR_VERSION` and
its size; a build is staged in a temporary folder and renamed into place when complete, under a
file lock, so two benchmarks never see half a root or build the same one twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from core.config import CompactionConfig
from core.events import Event
from core.index.catalog import write_index
from core.index.chunk_files import write_chunk_file
from core.index.format import ChunkEntry
from core.maintenance.recovery import write_summaries
from core.maintenance.rotation import rotate
from core.manager import MemoryManager
from core.store.session_store import SessionStore
from core.summarizer import ExtractiveSummarizer

GENERATOR_VERSION = 2
"""Bump when the fixture's content or the project's on-disk layout changes (2: chunks/index.catalog
written with index.yaml): cached roots of an older version are not reused."""

CACHE_DIR = Path(tempfile.gettempdir()) / "bench-cache"
EVENTS_PER_CHUNK = 100
ARCHIVE_CHUNKS = 10
"""Chunks in each archived session (archives are closed sessions of ordinary length)."""
HOT_EVENTS = 60
"""Events left in each session's hot window: under the count trigger, so nothing is pending."""
RECALL_READY = "recall.ready"
FULL_CHUNKS = 10_000
QUICK_CHUNKS = 2_000

_PATHS = (
    "/srv/app/main.py",
    "/srv/app/core/billing.py",
    "/etc/nginx/sites-enabled/default",
    "/var/log/app_main.log",
    "/sdcard/Download/城市夜跑的兴起.txt",
    "/sdcard/Recordings/周会_1128.m4a",
    "/home/agent/project/tests/test_checkout.py",
    "/home/agent/project/README.md",
)
_COMMANDS = (
    "pytest -q tests/test_checkout.py -x",
    "git status --short",
    "kubectl rollout status deploy/api -n staging",
    "grep -rn 'retry' src/ | head -20",
    "ls -la /sdcard/Download/*.txt",
    "psql -c 'select count(*) from invoices where paid = false'",
    "systemctl restart firmware-updater",
)
_REQUESTS_EN = (
    "Deploy the checkout service to staging and tell me if the smoke tests pass.",
    "Find out why the invoice webhook retries three times and fix the parser.",
    "Check the battery sensor log for errors since Monday and summarize them.",
    "Migrate the tenant quota table and keep a rollback plan ready.",
    "Read the latency dashboard numbers and compare them with last week's budget.",
)
_REQUESTS_CJK = (
    "帮我读一下下载目录里那篇关于夜跑的文章，用三句话总结，再给我一个入门计划。",
    "把今天产品周会的录音转成文字，整理成会议纪要，保存到备忘录。",
    "システムの言語を日本語に切り替えて、キーボードも日本語入力を追加してください。",
)
_PROSE_EN = (
    "The service started cleanly and the health check answered 200 OK within 40 ms. "
    "Two warnings about a deprecated cache option were logged at startup. "
    "The migration touched 1,204 rows in the tenant table and finished in 3.2 seconds. "
    "A retry loop in the webhook parser treats a 409 as transient, which explains the "
    "three attempts. The rollback script was checked against the staging snapshot. "
)
_PROSE_CJK = (
    "同步功能修复了附件上传的崩溃问题，灰度百分之五。本周计划完成离线模式，优化缩略图生成，"
    "减少耗电。风险：存储清理工具会误删附件，需要和系统团队确认白名单。"
)


def _text(rng: random.Random, size: int, cjk: bool) -> str:
    """About `size` characters of prose cut from the pools (Chinese when `cjk`)."""
    pool = _PROSE_CJK if cjk else _PROSE_EN
    reps = size // len(pool) + 2
    start = rng.randrange(len(pool))
    return (pool * reps)[start : start + size]


def _run_events(rng: random.Random, prefix: str, n: int, clock: list[int]) -> list[Event]:
    """One run (a user request, tool calls with their results, the answer): `n` events."""
    cjk = rng.random() < 0.2
    run_id = f"{prefix}-run"
    events: list[Event] = []

    def stamp() -> str:
        clock[0] += rng.randrange(1, 20)
        s = clock[0]
        day, rest = divmod(s, 86_400)
        month, mday = divmod(day, 28)
        h, rest = divmod(rest, 3600)
        m, sec = divmod(rest, 60)
        return f"2026-{1 + month % 12:02d}-{1 + mday:02d}T{h:02d}:{m:02d}:{sec:02d}.000Z"

    request = rng.choice(_REQUESTS_CJK if cjk else _REQUESTS_EN)
    events.append(
        {
            "id": f"{prefix}-u",
            "type": "user_input",
            "role": "user",
            "ts": stamp(),
            "run_id": run_id,
            "content": request,
        }
    )
    pairs = (n - 2) // 2
    for k in range(pairs):
        call_id = f"{prefix}-c{k}"
        choice = rng.random()
        if choice < 0.4:
            name, args = "read_file", {"path": rng.choice(_PATHS)}
        elif choice < 0.75:
            name, args = "shell", {"cmd": rng.choice(_COMMANDS)}
        else:
            name, args = (
                "edit_file",
                {"path": rng.choice(_PATHS), "patch": _text(rng, rng.randrange(80, 400), False)},
            )
        events.append(
            {
                "id": f"{prefix}-t{k}",
                "type": "tool_call",
                "role": "assistant",
                "ts": stamp(),
                "run_id": run_id,
                "name": name,
                "tool_call_id": call_id,
                "arguments": args,
            }
        )
        size = int(rng.lognormvariate(6.3, 0.8))  # median ~550 characters, a long tail
        events.append(
            {
                "id": f"{prefix}-r{k}",
                "type": "tool_result",
                "role": "tool",
                "ts": stamp(),
                "run_id": run_id,
                "name": name,
                "tool_call_id": call_id,
                "content": _text(rng, min(size, 6000), cjk and rng.random() < 0.5),
            }
        )
    while len(events) < n:
        events.append(
            {
                "id": f"{prefix}-a{len(events)}",
                "type": "assistant_output",
                "role": "assistant",
                "ts": stamp(),
                "run_id": run_id,
                "content": _text(rng, rng.randrange(150, 900), cjk),
            }
        )
    return events


def chunk_events(rng: random.Random, prefix: str, clock: list[int]) -> list[Event]:
    """The `EVENTS_PER_CHUNK` events of one chunk: ten runs of ten events."""
    out: list[Event] = []
    for r in range(EVENTS_PER_CHUNK // 10):
        out.extend(_run_events(rng, f"{prefix}-{r}", 10, clock))
    return out


def _fill_session(
    store: SessionStore,
    config: CompactionConfig,
    n_chunks: int,
    rng: random.Random,
    tag: str,
    clock: list[int],
) -> None:
    """Write `n_chunks` chunks, their index and summaries, and a hot window into the session."""
    summarizer = ExtractiveSummarizer()
    max_tokens = config.summarizer.max_summary_tokens
    store.ensure_session()
    entries: list[ChunkEntry] = []
    previous: str | None = None
    for i in range(1, n_chunks + 1):
        chunk_id = f"chunk_{i:04d}"
        events = chunk_events(rng, f"{tag}-{i}", clock)
        summary = summarizer.summarize(
            events, kind="history", previous_summary=previous, max_tokens=max_tokens
        )
        previous = summary
        write_chunk_file(store.paths, chunk_id, events)
        entries.append(
            ChunkEntry(
                chunk_id=chunk_id,
                created_at=str(events[-1]["ts"])[:19] + "Z",
                event_count=len(events),
                first_event_id=str(events[0]["id"]),
                last_event_id=str(events[-1]["id"]),
                summary=summary,
                cut_meta={"first_kept_event_id": f"{tag}-{i + 1}-0-u"},
                extra={"summary_backend": "extractive", "path": "count", "trigger": "count"},
            )
        )
    if entries:
        write_index(store.paths, entries)
        write_summaries(store, config, entries)
    hot: list[Event] = []
    while len(hot) < HOT_EVENTS:
        hot.extend(_run_events(rng, f"{tag}-{n_chunks + 1}-{len(hot) // 10}", 10, clock))
    store.append_events(hot[:HOT_EVENTS])
    with store.lock():
        state = store.read_state()
        state.counters["compactions"] = n_chunks
        store.write_state(state)


def build_root(root: Path, n_chunks: int, n_archives: int, *, seed: int = 14) -> Path:
    """Build a memory root at `root` (which must not exist): `n_archives` closed sessions of
    `ARCHIVE_CHUNKS` chunks each, then an active session of `n_chunks` chunks."""
    rng = random.Random(seed)
    config = CompactionConfig()
    clock = [0]
    store = SessionStore(root)
    for a in range(n_archives):
        _fill_session(store, config, ARCHIVE_CHUNKS, rng, f"a{a}", clock)
        rotate(store, config)
        store = SessionStore(root)
    _fill_session(store, config, n_chunks, rng, "live", clock)
    build_recall_index(root)
    return root


def build_recall_index(root: Path) -> None:
    """chunks/recall.sqlite of the active session, as every pass of a live root keeps it
    (`MemoryManager` builds it on the first recall); without it the first pass timed would
    index the whole history."""
    manager = MemoryManager(root, CompactionConfig())
    try:
        manager.recall("deploy")
    finally:
        manager.close()


def archives_for(n_chunks: int) -> int:
    """One archived session per 100 chunks of history (at least one)."""
    return max(1, n_chunks // 100)


@contextlib.contextmanager
def _build_lock(name: str) -> Iterator[None]:
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / f".{name}.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def cached_root(n_chunks: int, n_archives: int | None = None) -> Path:
    """The cached root of this size (built now when missing); treat it as read-only."""
    archives = archives_for(n_chunks) if n_archives is None else n_archives
    name = f"scale-v{GENERATOR_VERSION}-{n_chunks}c-{archives}a"
    final = CACHE_DIR / name
    if (final / RECALL_READY).exists():
        return final / "memory"
    with _build_lock(name):
        if (final / RECALL_READY).exists():
            return final / "memory"
        if (final / "memory").is_dir():  # built before the recall index was part of it
            build_recall_index(final / "memory")
            (final / RECALL_READY).touch()
            return final / "memory"
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=CACHE_DIR))
        try:
            build_root(staging / "memory", n_chunks, archives)
            (staging / RECALL_READY).touch()
            os.rename(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return final / "memory"


def ensure_scale_root(quick: bool = False) -> Path:
    """The long-lived root: 10,000 chunks and 100 archives (2,000 and 20 with `quick`), or
    `BENCH_SCALE_CHUNKS` chunks when set (the smoke test's small root, as the scale group)."""
    given = os.environ.get("BENCH_SCALE_CHUNKS")
    if given:
        return cached_root(max(10, int(given)))
    return cached_root(QUICK_CHUNKS if quick else FULL_CHUNKS)


def copy_root(src: Path, dst: Path) -> Path:
    """A private copy of `src` at `dst` to change (a pass, a rotation): chunk files, which the
    project only ever replaces whole and never edits, are hard links; everything else is copied,
    so nothing done to the copy reaches the cached root."""

    def copy(s: str, d: str) -> object:
        if "/chunks/" in s and s.endswith(".jsonl"):
            try:
                os.link(s, d)
                return d
            except OSError:
                pass
        return shutil.copy2(s, d)

    shutil.copytree(src, dst, copy_function=copy, symlinks=True)
    return dst
