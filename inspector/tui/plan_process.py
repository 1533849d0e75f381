"""Planning the cut preview in a child process, so it never competes with the UI for the GIL.

On a 100k-event session one plan (`core.compaction.planner.plan_compaction`) is ~0.3 s of pure
Python; in a thread of the app it holds the GIL against the event loop, and while an agent appends
fast the loop stalls for 100 ms and more. `PlanProcess` keeps a child (`python -m
inspector.tui.plan_process`) that holds its own copy of the light events (id, type, role,
tool_call_id, the synthetic mark) and their token estimates: each plan sends only the events
appended since the last one (all of them after a reset: another `_Lists` generation or another
session), then the config, and reads the `CompactionPlan` back. Same function, same inputs, same
plan as in the thread.

The child is the app's own (pickle frames over its stdin/stdout, nothing else reads them); its
stderr goes nowhere so it can never draw on the terminal, it ignores Ctrl+C (the app quits it),
and it exits when its stdin closes (the app quit or died). Any failure raises `PlanProcessError`;
the caller plans in its thread instead. The child is started isolated from the user's folder
(`python -P`, run in the folder that holds this package, which PYTHONPATH names first), so no
`core/` or `inspector/` in the current directory is ever imported; a daemon thread reaps it the
moment it dies, however it dies.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from typing import IO, Any

from core.compaction.headroom import Headroom
from core.compaction.planner import CompactionPlan, PlannerConfig, plan_compaction
from core.events import Event

SEND_PIECE = 10_000
"""Events per frame sent to the child: a first load of 100k is pickled in short steps."""


class PlanProcessError(Exception):
    """The child could not be started, died, or answered with an error (one line)."""


def package_root() -> Path:
    """The folder that holds this very `core/` and `inspector/`: the planning child runs there,
    with it first on PYTHONPATH, so it imports our packages and never the user's folder's."""
    return Path(__file__).resolve().parents[2]


class PlanProcess:
    """The planning child and what it already holds (used by one plan worker at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._lists: weakref.ref[Any] | None = None
        self._sent = 0
        self._closed = False

    def _start(self) -> subprocess.Popen[bytes]:
        if self._closed:
            raise PlanProcessError("the planning process was closed")
        project = str(package_root())
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (project, env.get("PYTHONPATH")) if p)
        try:
            # Isolated from the user's folder: `-P` keeps the current directory off sys.path
            # (plain `-m` puts it first, so a `core/` package there would be imported and
            # run), and the child runs in the folder that holds this very package, which
            # PYTHONPATH names first: the child's `core` and `inspector` are ours.
            proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "inspector.tui.plan_process"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=project,
                start_new_session=True,
            )
        except OSError as exc:
            raise PlanProcessError(f"cannot start the planning process: {exc}") from None
        self._proc, self._lists, self._sent = proc, None, 0
        _reap_when_it_dies(proc)
        return proc

    def plan(
        self, snapshot: Any, config: PlannerConfig, headroom: Headroom | None = None
    ) -> CompactionPlan:
        """`plan_compaction(snapshot.event_list(), config, tokens=snapshot.token_list(),
        headroom=headroom)`, worked out in the child."""
        with self._lock:
            proc = self._proc if self._proc is not None else self._start()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                self._send_new_events(proc.stdin, snapshot)
                _send(proc.stdin, ("plan", snapshot.n_events, config, headroom))
                answer = pickle.load(proc.stdout)
            except (OSError, EOFError, pickle.PickleError, ValueError) as exc:
                self._stop_child()
                raise PlanProcessError(f"the planning process failed: {exc}") from None
        if answer[0] != "ok":
            raise PlanProcessError(str(answer[1]))
        plan = answer[1]
        if not isinstance(plan, CompactionPlan):
            raise PlanProcessError("the planning process answered something else than a plan")
        return plan

    def _send_new_events(self, out: IO[bytes], snapshot: Any) -> None:
        lists = snapshot.lists
        held = self._lists() if self._lists is not None else None
        n = snapshot.n_events
        if lists is None or held is not lists or n < self._sent:
            _send(out, ("reset",))
            self._sent = 0
            self._lists = weakref.ref(lists) if lists is not None else None
        events, tokens = snapshot.events, snapshot.event_tokens
        for start in range(self._sent, n, SEND_PIECE):
            stop = min(n, start + SEND_PIECE)
            piece: list[Event] = [events[i] for i in range(start, stop)]
            _send(out, ("add", piece, list(tokens[start:stop])))
            self._sent = stop

    def _stop_child(self) -> None:
        proc, self._proc = self._proc, None
        self._lists, self._sent = None, 0
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        """End the child (the app quits); later plans raise `PlanProcessError`."""
        self._closed = True
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # the child sees EOF and exits, even mid-plan
        if self._lock.acquire(blocking=False):
            try:
                self._stop_child()
            finally:
                self._lock.release()
        elif proc is not None:
            proc.kill()  # mid-plan: the worker sees the end of its answer and reaps it


def _reap_when_it_dies(proc: subprocess.Popen[bytes]) -> None:
    """Wait for the child on a daemon thread, so a child killed from outside (the OOM killer,
    a `kill`) is reaped at once instead of staying a zombie until the next plan notices.
    `Popen.wait` is safe beside the plan worker's own `wait` (it takes the Popen's lock)."""
    threading.Thread(target=proc.wait, name=f"plan-process-reaper-{proc.pid}", daemon=True).start()


def _send(out: IO[bytes], message: tuple[Any, ...]) -> None:
    pickle.dump(message, out, protocol=pickle.HIGHEST_PROTOCOL)
    out.flush()


def serve(inp: IO[bytes], out: IO[bytes]) -> None:
    """The child's loop: keep the events sent, answer each "plan" with ("ok", plan) or
    ("error", text); return at end of input."""
    events: list[Event] = []
    tokens: list[int] = []
    while True:
        try:
            message = pickle.load(inp)
        except EOFError:
            return
        kind = message[0]
        if kind == "reset":
            events, tokens = [], []
        elif kind == "add":
            events.extend(message[1])
            tokens.extend(message[2])
        elif kind == "plan":
            n, config = message[1], message[2]
            headroom = message[3] if len(message) > 3 else None
            try:
                if n > len(events):
                    raise ValueError(f"asked to plan {n} events, holding {len(events)}")
                answer: tuple[str, object] = (
                    "ok",
                    plan_compaction(events[:n], config, tokens=tokens[:n], headroom=headroom),
                )
            except Exception as exc:
                answer = ("error", f"planning failed: {type(exc).__name__}: {exc}")
            _send(out, answer)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()


__all__ = ["PlanProcess", "PlanProcessError", "serve"]
