"""DemoPlayer: plays one demo scenario into a MemoryManager, one runtime action per step.

`DemoPlayer.steps()` is one shared iterator: each `next()` performs one runtime action and
yields a `DemoStep` describing it. The TUI drives it from a worker thread (start, pause,
single step); `play()` runs it to the end. It sits above the agent and the scenarios (it
imports both; neither imports it), which is what broke the agent <-> scenarios import cycle.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.errors import BadInputError
from inspector.demo.agent import DemoAgent, DemoStats, DemoStep
from inspector.demo.scenarios import SCENARIOS

if TYPE_CHECKING:
    from core.manager import MemoryManager


class _DryAgent(DemoAgent):
    """A DemoAgent whose actions only describe themselves: counts a scenario's steps."""

    def _dry(self, kind: str) -> DemoStep:
        return DemoStep("", kind)

    def user(self, text: str) -> DemoStep:
        return self._dry("begin_run")

    def model_call(self) -> DemoStep:
        return self._dry("prompt_tokens")

    def append(self, event: Mapping[str, Any], description: str) -> DemoStep:
        return self._dry("append")

    def batch(self, events: Sequence[Mapping[str, Any]], description: str) -> DemoStep:
        return self._dry("batch")

    def commit(self, text: str) -> DemoStep:
        return self._dry("commit")

    def settle(self) -> DemoStep:
        return self._dry("maintenance")

    def rotate(self, why: str) -> DemoStep:
        return self._dry("rotate")

    def recall(self, query: str) -> DemoStep:
        return self._dry("recall")

    def crash(self) -> DemoStep:
        return self._dry("crash")

    def pending_query(self) -> str | None:
        return None


class DemoPlayer:
    """Plays one scenario into a MemoryManager, one runtime action per step."""

    def __init__(
        self,
        manager: MemoryManager,
        scenario: str = "tour",
        *,
        seed: int = 0,
        events: int | None = None,
        speed: float | None = None,
    ) -> None:
        if scenario not in SCENARIOS:
            raise BadInputError(
                f"unknown demo scenario {scenario!r} (choose from {', '.join(SCENARIOS)})"
            )
        self.manager = manager
        self.scenario = scenario
        self.seed = seed
        self.events = events
        self.speed = speed
        """Steps per second the user asked for (`demo --speed`); None: the player's default."""
        self.stats = DemoStats()
        self.agent = DemoAgent(manager, random.Random(seed), self.stats)
        self.finished = False
        self._iter: Iterator[DemoStep] | None = None
        self._expected: int | None = None

    @property
    def description(self) -> str:
        return SCENARIOS[self.scenario].description

    def expected_steps(self) -> int:
        """About how many steps the play takes (for "step N of ~M"), counted by a dry run of
        the scenario that touches no file; cached."""
        if self._expected is None:
            dry = _DryAgent(self.manager, random.Random(self.seed), DemoStats())
            played = SCENARIOS[self.scenario].play(dry, self.events)
            self._expected = 2 + sum(1 for _ in played)
        return self._expected

    def steps(self) -> Iterator[DemoStep]:
        """The play as one shared iterator: each next() performs one action."""
        if self._iter is None:
            self._iter = self._play()
        return self._iter

    def _play(self) -> Iterator[DemoStep]:
        scenario = SCENARIOS[self.scenario]
        self.stats.steps += 1
        yield DemoStep(f"scenario {self.scenario}: {scenario.description}", "scenario")
        for step in scenario.play(self.agent, self.events):
            self.stats.steps += 1
            yield step
        self.manager.wait_for_maintenance()
        self.finished = True
        self.stats.steps += 1
        yield DemoStep(
            f"scenario {self.scenario} finished: {_plural(self.stats.events_appended, 'event')}, "
            f"{_plural(self.stats.compactions, 'compaction')}, "
            f"{_plural(self.stats.rotations, 'rotation')}",
            "done",
            {**self.stats.to_json(), "chunks_here": self._chunks_here()},
        )

    def _chunks_here(self) -> int | None:
        """Chunks in the active session at the end (the rest of the compactions are in the
        archived sessions): the TUI's closing line says where each part is."""
        try:
            from core.index.reader import read_index

            return len(read_index(self.manager.paths).entries)
        except Exception:
            return None

    def play(
        self, speed: float = 0.0, on_step: Callable[[DemoStep], None] | None = None
    ) -> DemoStats:
        """Run to the end: speed 0 as fast as possible, else `speed` steps per second."""
        delay = 1.0 / speed if speed > 0 else 0.0
        for step in self.steps():
            if on_step is not None:
                on_step(step)
            if delay:
                time.sleep(delay)
        return self.stats


def scenario_names() -> list[str]:
    return list(SCENARIOS)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


__all__ = ["DemoPlayer", "scenario_names"]
