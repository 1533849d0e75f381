"""Demo scenarios and the small thresholds that make compaction visible within a minute.

Each scenario is a generator over a `DemoAgent`: every `yield` is one runtime action already
performed. The thresholds below are written to `<demo folder>/config/memory/extraction.yaml`
for a fresh demo root, so a later `session-inspector --memory-dir <demo folder>/memory status`
(or the TUI) sees the same numbers the demo ran with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from core.config import CompactionConfig

if TYPE_CHECKING:
    from inspector.demo.agent import DemoAgent, DemoStep

DEFAULT_SCENARIO = "tour"
LONG_DEFAULT_EVENTS = 30_000


def demo_config() -> CompactionConfig:
    """Small thresholds: a few turns fill the window, so every mechanism shows quickly."""
    return CompactionConfig(
        context_window=6000,
        reserve_tokens=1200,
        compress_at_percent=70,
        count_compress_after_events=30,
        keep_recent_tokens=1200,
        hot_window_events=24,
        summary_max_chunks=3,
        max_rolling_summary_lines=16,
        lock_timeout_seconds=10,
    )


def config_yaml(config: CompactionConfig) -> str:
    """extraction.yaml text for a config (read back by core.config.load_config)."""
    summarizer = {
        key: value
        for key, value in {
            "backend": config.summarizer.backend,
            "base_url": config.summarizer.base_url,
            "model": config.summarizer.model,
            "api_key_env": config.summarizer.api_key_env,
            "timeout_seconds": config.summarizer.timeout_seconds,
            "max_summary_tokens": config.summarizer.max_summary_tokens,
        }.items()
        if value is not None
    }
    section: dict[str, Any] = {
        "context_window": config.context_window,
        "reserve_tokens": config.reserve_tokens,
        "compress_at_percent": config.compress_at_percent,
        "count_compress_after_events": config.count_compress_after_events,
        "keep_recent_tokens": config.keep_recent_tokens,
        "hot_window_events": config.hot_window_events,
        "summary_max_chunks": config.summary_max_chunks,
        "max_rolling_summary_lines": config.max_rolling_summary_lines,
        "lock_timeout_seconds": config.lock_timeout_seconds,
        "models": dict(config.models),
        "summarizer": summarizer,
        "session_boundary": {"idle_gap_minutes": config.idle_gap_minutes},
    }
    header = (
        "# Written by `session-inspector demo`: small thresholds so that compaction happens\n"
        "# within a few turns. Real deployments use much larger values (see the README).\n"
    )
    return header + yaml.safe_dump(
        {"session_compaction": section}, sort_keys=False, allow_unicode=True
    )


def write_demo_config(path: Path, config: CompactionConfig) -> None:
    from core.atomic import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, config_yaml(config))


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    play: Callable[[DemoAgent, int | None], Iterator[DemoStep]]


def _tour(agent: DemoAgent, events: int | None) -> Iterator[DemoStep]:
    yield agent.note(
        "cold start: the model reports no token usage yet, so the event-count rule decides"
    )
    agent.record_tokens = False
    for task in ("wifi", "brightness", "alarm"):
        yield from agent.play_task(task)
    yield agent.note("the model now reports prompt sizes: the token rule decides")
    agent.record_tokens = True
    for task in ("crash_log", "bluetooth", "battery", "storage", "email", "photos_cjk"):
        yield from agent.play_task(task)
    yield agent.recall("crash log NullPointerException")
    yield agent.recall("护眼模式")
    yield agent.rotate("the user starts a new topic")
    for task in ("language_ja", "notes_zh", "article_zh", "wifi", "storage"):
        yield from agent.play_task(task)


def _split_turn(agent: DemoAgent, events: int | None) -> Iterator[DemoStep]:
    yield agent.note("long tool-heavy turns: the token cut lands inside a turn")
    for task in ("crash_log", "storage", "notes_zh", "battery", "photos_cjk", "crash_log"):
        yield from agent.play_task(task)
    yield agent.recall("Turn Context")


def _cjk(agent: DemoAgent, events: int | None) -> Iterator[DemoStep]:
    yield agent.note("中文与日文任务：CJK 字符按每字一个 token 估算")
    tasks = (
        "brightness",
        "article_zh",
        "alarm",
        "bluetooth",
        "photos_cjk",
        "language_ja",
        "notes_zh",
    )
    for task in tasks:
        yield from agent.play_task(task)
    yield agent.recall("模糊 照片")
    yield agent.recall("夜跑 入门计划")


def _long(agent: DemoAgent, events: int | None) -> Iterator[DemoStep]:
    from inspector.demo.content import long_run

    total = events if events is not None else LONG_DEFAULT_EVENTS
    agent.record_tokens = False
    run_size = max(40, min(1000, total // 10))
    open_tail = max(run_size, total // 5)
    batch = 250
    yield agent.note(
        f"a long session: about {total:,} events in runs of {run_size:,}; the last "
        f"{open_tail:,} events are a run still in progress (a big hot window)"
    )
    written = 0
    run = 0
    while written < total:
        left = total - written
        open_run = left <= open_tail
        size = left if open_run else min(run_size, left)
        stream = long_run(agent.rng, run, size + 1 if open_run else size)
        yield agent.user(str(stream[0]["content"]))
        body = stream[1:]
        for start in range(0, len(body), batch):
            part = body[start : start + batch]
            yield agent.batch(part, f"run {run + 1}: {len(part)} tool events appended")
        written += len(stream)
        if open_run:
            break
        yield agent.commit(f"Sweep {run + 1} done: every page rendered.")
        written += 1
        yield agent.settle()
        run += 1


def _crash(agent: DemoAgent, events: int | None) -> Iterator[DemoStep]:
    yield agent.note("compacts normally, then a pass crashes half way")
    for task in ("wifi", "crash_log", "bluetooth", "battery", "storage"):
        yield from agent.play_task(task)
    if agent.last_pass is not None and agent.last_pass.compacted:
        yield from agent.play_task("battery")
    yield agent.crash()
    yield agent.recall(agent.pending_query() or "battery usage")
    yield agent.note(
        "pending evidence left behind: recall shows it with source 'pending'; "
        "run `session-inspector repair` (or any pass) to finish it"
    )


SCENARIOS: dict[str, Scenario] = {
    "tour": Scenario(
        "tour",
        "count- and token-path compactions, a split turn, the pinned root, Recent Chunks "
        "overflowing into the Rolling Summary, recall, and a rotation into a second session",
        _tour,
    ),
    "split-turn": Scenario(
        "split-turn", "long tool-heavy turns that force split-turn compactions", _split_turn
    ),
    "cjk": Scenario("cjk", "Chinese and Japanese tasks (CJK-aware tokens and recall)", _cjk),
    "long": Scenario(
        "long", "tens of thousands of events, for performance and big-session views", _long
    ),
    "crash": Scenario(
        "crash", "a pass dies half way, leaving pending evidence for recall and repair", _crash
    ),
}
