"""Play the demo agent live: start/pause (space), step (s), at a chosen pace.

The player runs in a thread worker; each step posts `DemoControls.Stepped` (the worker never
touches widgets), and the files it writes reach the views through the watcher like any other
process's writes. The player (`inspector.demo.DemoPlayer`) only needs `steps()`: one shared
iterator whose every `next()` performs one runtime action and yields a step with a
`description` (a step of kind "done", or the iterator's end, finishes the play).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Label, Static
from textual.worker import Worker, get_current_worker

from inspector.safe_text import one_line


@runtime_checkable
class DemoPlayerLike(Protocol):
    def steps(self) -> Iterator[Any]: ...


class DemoControls(Horizontal):
    """Status of the demo plus a pace input (seconds per step)."""

    DEFAULT_CSS = """
    DemoControls { height: 1; }
    DemoControls > #demo-status { width: 1fr; }
    DemoControls > Label { width: auto; }
    DemoControls > #demo-pace { width: 8; height: 1; border: none; padding: 0; }
    """

    class Stepped(Message):
        def __init__(
            self, number: int, description: str | None, elapsed_ms: float, *, done: bool = False
        ) -> None:
            super().__init__()
            self.done = done
            self.number = number
            self.description = description
            self.elapsed_ms = elapsed_ms

    class Failed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(self, player: DemoPlayerLike, *, pace: float = 0.5, id: str | None = None) -> None:
        super().__init__(id=id)
        self.player = player
        self.pace = pace
        self.steps = 0
        self.finished = False
        self._wake = threading.Event()
        self._playing = False
        self._worker: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._status_text(), id="demo-status", markup=False)
        yield Label("pace s/step ")
        yield Input(str(self.pace), id="demo-pace", type="number")

    @property
    def playing(self) -> bool:
        return self._playing

    def _status_text(self) -> Text:
        state = "finished" if self.finished else "playing" if self._playing else "paused"
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("demo ", style="bold")
        text.append(state, style="bold yellow" if self._playing else "bold")
        text.append(f"  step {self.steps}  (space: play/pause, s: step)", style="dim")
        return text

    def _refresh_status(self) -> None:
        self.query_one("#demo-status", Static).update(self._status_text())

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        try:
            self.pace = max(0.0, float(event.value))
        except ValueError:
            return
        self._wake.set()

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

    def _do_step(self) -> bool:
        start = time.perf_counter()
        try:
            step = next(self.player.steps())
        except StopIteration:
            self.post_message(self.Stepped(self.steps + 1, None, 0.0, done=True))
            return False
        except Exception as exc:
            self.post_message(self.Failed(f"{type(exc).__name__}: {exc}"))
            return False
        elapsed = (time.perf_counter() - start) * 1000
        done = getattr(step, "kind", None) == "done"
        description = str(getattr(step, "description", step))
        self.post_message(self.Stepped(self.steps + 1, description, elapsed, done=done))
        return not done

    @work(thread=True, exclusive=True, group="demo", exit_on_error=False)
    def _play(self) -> None:
        worker = get_current_worker()
        while self._playing and not worker.is_cancelled:
            if not self._do_step():
                return
            self._wake.clear()
            self._wake.wait(self.pace)

    @work(thread=True, exclusive=True, group="demo", exit_on_error=False)
    def _step_worker(self) -> None:
        self._do_step()

    def on_demo_controls_stepped(self, message: Stepped) -> None:
        self.steps = message.number
        if message.done:
            self.finished = True
            self._playing = False
        self._refresh_status()

    def on_demo_controls_failed(self, message: Failed) -> None:
        self._playing = False
        self._refresh_status()

    @staticmethod
    def describe(message: Stepped) -> str:
        if message.description is None:
            return "demo finished"
        return (
            f"demo step {message.number}: {one_line(message.description, 200)} "
            f"({message.elapsed_ms:.0f} ms)"
        )
