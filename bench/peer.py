"""peer_turn_ratio_{100,1k,10k}: per-turn memory-management overhead against a peer library.

The peer is langmem's `summarize_messages` (the LangGraph short-term memory helper), installed
with the optional `bench` extra; when it is missing the keys are null with the reason. Model
time is excluded on both sides: the peer gets langchain's `FakeListChatModel`, the project a
summarizer that returns a fixed text at once.

A turn, on each side, at a session that already holds N messages:
- project: `begin_run(user text)`, `commit_run(assistant text)` (which schedules the
  background pass), `wait_for_maintenance()`, `build_prompt(system, task)`, with the session on
  disk (appends, compactions with fsync, summary.md) — what an agent runtime pays per turn;
- peer: append the two messages to the in-memory list, `summarize_messages(...)` with the
  running summary (what its docs put before each model call), in memory, nothing persisted.
Thresholds are set so that both summarize at about the same cadence (every ~80–120 messages of
~200 characters). Both states at N are built outside the timing (the project's by real
appends and passes; the peer's as the state its own loop would have reached: N messages, all
but the newest 40 summarized); then K turns are timed, K large enough to include summarizing.
"""

from __future__ import annotations

import cProfile
import importlib.metadata
import pstats
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import ENGLISH, WORDS, Outcome, scratch
from core.config import CompactionConfig
from core.manager import MemoryManager

SIZES = (("100", 100), ("1k", 1_000), ("10k", 10_000))
KEEP_UNSUMMARIZED = 40


class FixedSummarizer:
    name = "fixed"

    def summarize(self, events: Any, **_: Any) -> str:
        return "The user and the assistant discussed the deployment; nothing is pending."


def message_text(rng: random.Random) -> str:
    start = rng.randrange(0, 60)
    return (ENGLISH[start : start + 180] + " " + rng.choice(WORDS)).strip()


def project_config() -> CompactionConfig:
    return CompactionConfig(
        count_compress_after_events=120, hot_window_events=40, keep_recent_tokens=2000
    )


def project_session(root: Path, n: int) -> tuple[MemoryManager, random.Random]:
    """A manager on a session of about n messages, built by real appends and passes."""
    rng = random.Random(3)
    manager = MemoryManager(root, project_config(), summarizer=FixedSummarizer())
    done = 0
    while done < n:
        batch = []
        for _ in range(min(100, n - done)):
            kind = "user_input" if done % 2 == 0 else "assistant_output"
            role = "user" if kind == "user_input" else "assistant"
            batch.append({"type": kind, "role": role, "content": message_text(rng)})
            done += 1
        manager.append_many(batch)
        manager.save()
    return manager, rng


def project_turn(manager: MemoryManager, rng: random.Random) -> None:
    """One turn as an agent runtime makes it."""
    manager.begin_run(message_text(rng))
    manager.commit_run(message_text(rng))
    manager.wait_for_maintenance()
    manager.build_prompt("You are a helpful agent.", "continue")


def project_turns(root: Path, n: int, turns: int) -> float:
    """Mean seconds per turn of the project at a session of about n messages."""
    manager, rng = project_session(root, n)
    start = time.perf_counter()
    for _ in range(turns):
        project_turn(manager, rng)
    elapsed = time.perf_counter() - start
    manager.close()
    return elapsed / turns


def _top(stats: pstats.Stats, turns: int, limit: int) -> list[dict[str, Any]]:
    """The `limit` functions with the most cumulative time, in ms per turn."""
    rows: list[dict[str, Any]] = []
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, line, func), (_cc, calls, own, cum, _callers) in table.items():
        if func in PROFILE_SKIP or (filename == "~" and "method 'disable'" in func):
            continue
        where = Path(filename)
        short = f"{where.parent.name}/{where.name}" if where.parent.name else where.name
        name = f"{short}:{line}({func})" if line else func
        rows.append(
            {
                "function": name,
                "cum_ms": round(cum * 1000 / turns, 3),
                "own_ms": round(own * 1000 / turns, 3),
                "calls": round(calls / turns, 1),
            }
        )
    rows.sort(key=lambda r: -r["cum_ms"])
    return rows[:limit]


PROFILE_SKIP = frozenset({"<module>", "<built-in method builtins.exec>"})


def profile_turns(n: int = 10_000, turns: int = 100, limit: int = 18) -> dict[str, Any]:
    """Where one project turn at n messages spends its time: cProfile of the calling thread
    (begin_run, commit_run, wait, build_prompt) and, separately, of the background maintenance
    threads (the passes), in ms per turn."""
    threads: list[cProfile.Profile] = []
    guard = threading.Lock()

    def start_thread_profile(*_: Any) -> None:
        if threading.current_thread().name != "session-maintenance":
            sys.setprofile(None)
            return
        prof = cProfile.Profile()
        with guard:
            threads.append(prof)
        prof.enable()  # replaces this hook for the rest of the thread

    with scratch("peer-profile") as root:
        manager, rng = project_session(root, n)
        project_turn(manager, rng)  # the first turn after the setup passes is not typical
        caller = cProfile.Profile()
        threading.setprofile(start_thread_profile)
        try:
            start = time.perf_counter()
            caller.enable()
            for _ in range(turns):
                project_turn(manager, rng)
            caller.disable()
            elapsed = time.perf_counter() - start
        finally:
            threading.setprofile(None)
            manager.close()
    main_stats = pstats.Stats(caller)
    out: dict[str, Any] = {
        "messages": n,
        "turns": turns,
        "turn_ms_profiled": round(elapsed * 1000 / turns, 3),
        "caller_thread": _top(main_stats, turns, limit),
        "maintenance_threads": [],
        "passes": len(threads),
    }
    if threads:
        bg = pstats.Stats(threads[0])
        for prof in threads[1:]:
            bg.add(prof)
        out["maintenance_threads"] = _top(bg, turns, limit)
    return out


def peer_turns(n: int, turns: int) -> float:
    """Mean seconds per turn of langmem at a session of about n messages."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from langmem.short_term import RunningSummary, summarize_messages

    rng = random.Random(3)
    model = FakeListChatModel(
        responses=["The user and the assistant discussed the deployment; nothing is pending."]
    )

    def make(i: int) -> BaseMessage:
        cls = HumanMessage if i % 2 == 0 else AIMessage
        return cls(content=message_text(rng), id=f"m{i}")

    messages: list[BaseMessage] = [make(i) for i in range(n)]
    cut = max(0, n - KEEP_UNSUMMARIZED)
    summary: RunningSummary | None = None
    if cut:
        summary = RunningSummary(
            summary="The user and the assistant discussed the deployment; nothing is pending.",
            summarized_message_ids={str(m.id) for m in messages[:cut]},
            last_summarized_message_id=str(messages[cut - 1].id),
        )
    start = time.perf_counter()
    i = n
    for _ in range(turns):
        messages.append(make(i))
        messages.append(make(i + 1))
        i += 2
        result = summarize_messages(
            messages,
            running_summary=summary,
            model=model,
            max_tokens=6500,
            max_tokens_before_summary=4500,
            max_summary_tokens=256,
        )
        summary = result.running_summary or summary
    return (time.perf_counter() - start) / turns


def peer_version() -> str | None:
    try:
        return importlib.metadata.version("langmem")
    except importlib.metadata.PackageNotFoundError:
        return None


def run(quick: bool) -> Outcome:
    out = Outcome()
    version = peer_version()
    keys = [f"peer_turn_ratio_{label}" for label, _ in SIZES]
    profile = {} if quick else profile_turns()
    if version is None:
        for key in keys:
            out.values[key] = None
            out.notes[key] = (
                "peer not installed: pip install 'langmem>=0.0.30' (the optional bench extra)"
            )
        out.details["peer"] = {"name": "langmem", "version": None, "profile_10k": profile}
        return out
    turns = 60 if quick else 200
    per: dict[str, dict[str, float]] = {}
    for label, n in SIZES:
        with scratch(f"peer{label}") as root:
            ours = project_turns(root, n, turns)
        theirs = peer_turns(n, turns)
        out.values[f"peer_turn_ratio_{label}"] = ours / theirs
        per[label] = {"project_ms": round(ours * 1000, 3), "peer_ms": round(theirs * 1000, 3)}
    out.details["peer"] = {
        "name": "langmem summarize_messages",
        "version": version,
        "langchain_core": importlib.metadata.version("langchain-core"),
        "turns_timed": turns,
        "per_turn": per,
        "profile_10k": profile,
    }
    return out
