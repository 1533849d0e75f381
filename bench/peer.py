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

import importlib.metadata
import random
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


def project_turns(root: Path, n: int, turns: int) -> float:
    """Mean seconds per turn of the project at a session of about n messages."""
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
    start = time.perf_counter()
    for _ in range(turns):
        manager.begin_run(message_text(rng))
        manager.commit_run(message_text(rng))
        manager.wait_for_maintenance()
        manager.build_prompt("You are a helpful agent.", "continue")
    elapsed = time.perf_counter() - start
    manager.close()
    return elapsed / turns


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
    if version is None:
        for key in keys:
            out.values[key] = None
            out.notes[key] = (
                "peer not installed: pip install 'langmem>=0.0.30' (the optional bench extra)"
            )
        out.details["peer"] = {"name": "langmem", "version": None}
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
    }
    return out
