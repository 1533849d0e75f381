"""Demo scenarios: each is a generator over a `DemoAgent`; every `yield` is one runtime
action already performed. The agent is imported for its type only and the player
(`inspector.demo.player`) runs a scenario, so no import runs back from the agent to here.
The small thresholds the demo runs with are in `inspector.demo.config`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspector.demo.agent import DemoAgent, DemoStep

DEFAULT_SCENARIO = "tour"
LONG_DEFAULT_EVENTS = 30_000


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
    yield agent.note(
        "8 Timeline (or T): every model call and pass so far; on a pass, r recalls what it "
        "dropped; g takes every tab back to that moment, b comes back to now"
    )
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
