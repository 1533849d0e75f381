"""Play the demo agent live: it starts playing when the inspector opens on a demo, at a pace that
finishes the tour in well under a minute; space pauses/resumes, s steps, the pace input changes
the seconds per step.

The player runs in a thread worker; each step posts `DemoControls.Stepped` (the worker never
touches widgets), and the files it writes reach the views through the watcher like any other
process's writes. The player (`inspector.demo.DemoPlayer`) only needs `steps()`: one shared
iterator whose every `next()` performs one runtime action and yields a step with a
`description` (a step of kind "done", or the iterator's end, finishes the play). Optional:
`speed` (steps per second the user asked for, `demo --speed X`; 0 is as fast as possible) and
`expected_steps()` (about how many steps the play has, for "step N of ~M").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol, runtime_checkable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Label, Static
from textual.worker import Worker, get_current_worker

from inspector.safe_text import one_line

DEFAULT_PACE = 0.12
"""Seconds per step: the ~315-step tour takes ~40 s, and a compaction stays on screen long
enough to see the rows go."""


@runtime_checkable
class DemoPlayerLike(Protocol):
    def steps(self) -> Iterator[Any]: ...


def pace_for(player: object) -> float:
    """Seconds per step from the player's `speed` (steps per second; 0: as fast as possible)."""
    speed = getattr(player, "speed", None)
    if isinstance(speed, int | float) and not isinstance(speed, bool) and speed >= 0:
        return 0.0 if speed == 0 else 1.0 / speed
    return DEFAULT_PACE


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"


def _count(value: object, word: str) -> str:
    n = value if isinstance(value, int) else 0
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def ending_line(stats: Mapping[str, Any]) -> str:
    """The demo's closing line from its final stats: the counts, then where the compactions
    are ("6 in the archived session: 6 then o; 1 here: 2")."""
    if not stats:
        return ""
    compactions = stats.get("compactions")
    line = ", ".join(
        (
            _count(stats.get("events_appended"), "event"),
            _count(compactions, "compaction"),
            _count(stats.get("rotations"), "rotation"),
        )
    )
    return line + (" · " + where if (where := ending_where(stats)) else "")


def ending_where(stats: Mapping[str, Any]) -> str:
    """Where the demo's compactions are: in the active session (the Chunks tab, `2`) and in
    the archived ones (the Archive tab, `6`, then `o` on a session), and the Timeline tab (`8`)
    with its time travel (`g`, `b`)."""
    total, here = stats.get("compactions"), stats.get("chunks_here")
    if not isinstance(total, int) or not isinstance(here, int) or not total:
        return ""
    archived = max(total - here, 0)
    travel = " · every call and pass: 8 Timeline, g goes back in time, b to now"
    if not archived:
        return f"all {total:,} here: 2 Chunks{travel}"
    return f"{archived:,} in archived sessions: 6 then o; {here:,} here: 2 Chunks{travel}"


def compaction_line(result: Mapping[str, Any]) -> str | None:
    """The activity-log line of a pass (`PassResult.to_json()`), e.g. `compaction chunk_0007:
    87 → 14 events, 41 ms + summarizer 1.2 s`; None when the pass did not compact."""
    if not result.get("compacted"):
        return None
    timings = result.get("timings_ms") or {}
    total = float(timings.get("total", 0.0))
    summarize = float(timings.get("summarize", 0.0))
    extra = [
        f"{result.get('path')} path" if result.get("path") else "",
        "split turn" if result.get("is_split_turn") else "",
        str(result.get("summary_backend") or ""),
    ]
    how = ", ".join(e for e in extra if e)
    return (
        f"compaction {result.get('chunk_id')}: {result.get('events_before')} → "
        f"{result.get('kept_event_count')} events, {_seconds(total - summarize)} + summarizer "
        f"{_seconds(summarize)}" + (f" ({how})" if how else "")
    )


class DemoControls(Horizontal):
    """One line: play state, progress, the latest step, and a pace input (seconds per step)."""

    @dataclass(eq=False)
    class Stepped(Message):
        """The player took a step (`done`: the scenario is over)."""

        number: int
        description: str | None
        elapsed_ms: float
        _: KW_ONLY
        done: bool = False
        kind: str | None = None
        detail: Mapping[str, Any] = field(default_factory=dict)

        @property
        def compaction(self) -> str | None:
            """The activity-log line of a compaction this step ran, if it ran one."""
            result = self.detail.get("pass")
            return compaction_line(result) if isinstance(result, Mapping) else None

    @dataclass(eq=False)
    class Failed(Message):
        """A step raised: the player stops."""

        error: str

    @dataclass(eq=False)
    class Estimated(Message):
        """How many steps the scenario has (for the progress counter)."""

        total: int

    def __init__(
        self,
        player: DemoPlayerLike,
        *,
        pace: float | None = None,
        autoplay: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.player = player
        self.pace = pace_for(player) if pace is None else pace
        self.autoplay = autoplay
        self.steps = 0
        self._taken = 0
        """Steps taken by the workers (ahead of `steps` until their messages are handled)."""
        self.expected: int | None = None
        self.ending = ""
        """The closing line once the play ended (`ending_line`)."""
        self.last_description = ""
        self.finished = False
        self.error: str | None = None
        self._wake = threading.Event()
        self._playing = False
        self._worker: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._status_text(), id="demo-status", markup=False)
        yield Label("s/step")
        yield Input(f"{self.pace:g}", id="demo-pace", type="number", compact=True)
        yield Label("space ⏯  s step", id="demo-keys")

    def on_mount(self) -> None:
        self._estimate()
        if self.autoplay:
            self.toggle()

    @property
    def playing(self) -> bool:
        return self._playing

    def _status_text(self) -> Text:
        if self.finished and self.ending:
            # The counts first, where they are after: a narrow bar cuts the end, not them.
            text = Text(no_wrap=True, overflow="ellipsis")
            text.append("■ done", style="bold green")
            text.append(" " + self.ending)
            return text
        if self.finished:
            state, style = "■ done", "bold green"
        elif self.error:
            state, style = "! failed", "bold red"
        elif self._playing:
            state, style = "▶ demo", "bold yellow"
        else:
            state, style = "⏸ paused", "bold"
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(state, style=style)
        total = self.expected
        if total:
            text.append(f" {self.steps}/~{max(total, self.steps)} ")
            width = 10
            done = width if self.finished else min(width, round(width * self.steps / total))
            text.append("█" * done, style="yellow")
            text.append("░" * (width - done), style="dim")
        else:
            text.append(f" step {self.steps}")
        if self.error:
            text.append(" " + one_line(self.error, 200), style="red")
        elif self.last_description:
            text.append(" " + one_line(self.last_description, 200), style="dim")
        return text

    def _refresh_status(self) -> None:
        self.query_one("#demo-status", Static).update(self._status_text())

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        try:
            pace = float(event.value)
        except ValueError:
            return
        if pace >= 0 and pace != float("inf"):
            self.pace = pace
            self._wake.set()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the pace input gives the keyboard back to the list (space plays again)."""
        event.stop()
        self.screen.focus_next()

    def toggle(self) -> None:
        if self.finished:
            return
        self._playing = not self._playing
        self._wake.set()
        if self._playing and (self._worker is None or self._worker.is_finished):
            self._worker = self._play()
        self._refresh_status()

    def step_once(self) -> None:
        if self.finished or self._playing:
            return
        self._step_worker()

    def stop(self) -> None:
        self._playing = False
        self._wake.set()

    @work(thread=True, group="demo-estimate", exit_on_error=False)
    def _estimate(self) -> None:
        count = getattr(self.player, "expected_steps", None)
        if not callable(count):
            return
        try:
            total = int(count())
        except Exception:
            return
        self.post_message(self.Estimated(total))

    def _do_step(self) -> bool:
        start = time.perf_counter()
        try:
            step = next(self.player.steps())
        except StopIteration:
            self.post_message(self.Stepped(self._taken, None, 0.0, done=True))
            return False
        except Exception as exc:
            self.post_message(self.Failed(f"{type(exc).__name__}: {exc}"))
            return False
        elapsed = (time.perf_counter() - start) * 1000
        self._taken += 1
        kind = getattr(step, "kind", None)
        detail = getattr(step, "detail", None)
        done = kind == "done"
        description = str(getattr(step, "description", step))
        self.post_message(
            self.Stepped(
                self._taken,
                description,
                elapsed,
                done=done,
                kind=kind if isinstance(kind, str) else None,
                detail=detail if isinstance(detail, Mapping) else {},
            )
        )
        return not done

    @work(thread=True, exclusive=True, group="demo", exit_on_error=False)
    def _play(self) -> None:
        worker = get_current_worker()
        while self._playing and not worker.is_cancelled:
            if not self._do_step():
                return
            self._wake.clear()
            if self.pace > 0:
                self._wake.wait(self.pace)

    @work(thread=True, exclusive=True, group="demo", exit_on_error=False)
    def _step_worker(self) -> None:
        self._do_step()

    def on_demo_controls_stepped(self, message: Stepped) -> None:
        self.steps = message.number
        if message.description:
            self.last_description = message.compaction or message.description
        if message.done:
            self.finished = True
            self._playing = False
            self.ending = ending_line(message.detail)
            self.set_class(True, "-ended")  # the pace field and keys make room (tcss)
        self._refresh_status()

    def on_demo_controls_estimated(self, message: Estimated) -> None:
        message.stop()
        self.expected = message.total
        self._refresh_status()

    def on_demo_controls_failed(self, message: Failed) -> None:
        self._playing = False
        self.error = message.error
        self._refresh_status()

    @staticmethod
    def describe(message: Stepped) -> str:
        if message.description is None:
            return "demo finished"
        return (
            f"demo step {message.number}: {one_line(message.description, 200)} "
            f"({message.elapsed_ms:.0f} ms)"
        )
