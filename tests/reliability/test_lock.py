"""The session lock (issue 6, "Concurrency"): a timeout is a clear one-line error and exit 1
from the command line, and the maintenance thread never deadlocks with appends made by other
threads of the same process. (A holder that dies releases the lock:
tests/store/test_store_processes.py.)"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.errors import LockTimeoutError
from core.events import Event
from core.manager import MemoryManager
from core.summarizer import ExtractiveSummarizer
from tests.helpers.invariants import assert_each_once
from tests.helpers.paths import LOCK_CHILD
from tests.helpers.reliability import SMALL, assert_clean_failure, run_cli, small_config


@pytest.fixture
def held_root(tmp_path: Path) -> Iterator[Path]:
    """A memory root whose session lock another process holds until the test ends."""
    root = tmp_path / "memory"
    mm = MemoryManager(root, small_config())
    mm.begin_run("before the lock was taken")
    config = tmp_path / "config" / "memory" / "extraction.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        yaml.safe_dump({"session_compaction": {**SMALL, "lock_timeout_seconds": 0.3}})
    )
    holder = subprocess.Popen(
        [sys.executable, str(LOCK_CHILD), "hold", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    try:
        yield root
    finally:
        holder.kill()
        holder.communicate()


@pytest.mark.parametrize(
    "command",
    ["append --type user_input --text blocked", "compact --force", "repair", "rotate"],
)
def test_lock_timeout_is_exit_1_with_one_clear_line(held_root: Path, command: str) -> None:
    events = held_root / "session" / "events.jsonl"
    before = events.read_bytes()
    run = run_cli(held_root, *command.split())
    assert_clean_failure(run, 1, str(held_root / ".session.lock"), "within 0.3 s")
    assert "another process holds it" in run.error_line
    assert events.read_bytes() == before


def test_reading_commands_do_not_need_the_lock(held_root: Path) -> None:
    for command in ("status --json", "plan", "recall before", "prompt --system s --task t"):
        run = run_cli(held_root, *command.split())
        assert run.returncode == 0, (command, run.stderr)


def test_lock_held_by_another_thread_times_out_with_a_clear_error(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "memory", small_config(lock_timeout_seconds=0.2))
    mm.begin_run("first")
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with mm.store.lock():
            taken.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert taken.wait(30)
        with pytest.raises(LockTimeoutError, match="another thread of this process holds it"):
            mm.append({"type": "user_input", "content": "blocked"})
        with pytest.raises(LockTimeoutError):
            mm.save(force=True)
    finally:
        release.set()
        holder.join(30)
    assert mm.append({"type": "user_input", "content": "free again"})


class GatedSummarizer:
    """Extractive, but each summary waits until another thread appended meanwhile: proof that
    appends go on while a pass summarises (and a deadlock would stop the gate)."""

    name = "gated-extractive"

    def __init__(self) -> None:
        self.inner = ExtractiveSummarizer()
        self.appended = threading.Event()
        self.writers_done = threading.Event()
        self.overlapped = 0

    def summarize(self, events: Sequence[Event], **kwargs: Any) -> str:
        if not self.writers_done.is_set():
            self.appended.clear()
            if self.appended.wait(10) and not self.writers_done.is_set():
                self.overlapped += 1
        return self.inner.summarize(events, **kwargs)


def test_maintenance_thread_and_appending_threads_never_deadlock(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    gate = GatedSummarizer()
    mm = MemoryManager(root, small_config(), summarizer=gate)
    logged: list[str] = []
    mm.on_pass = lambda result: logged.append(
        mm.append({"type": "system_event", "content": f"pass: {result.reason}"})["id"]
    )
    ids: list[list[str]] = [[] for _ in range(4)]
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for n in range(40):
                ids[w].append(mm.begin_run(f"writer {w} turn {n}")["id"])
                gate.appended.set()
                ids[w].append(mm.commit_run(f"writer {w} answer {n}")["id"])  # requests a pass
                gate.appended.set()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "an appending thread is stuck"
    gate.writers_done.set()
    gate.appended.set()
    assert mm.wait_for_maintenance(120), "the maintenance thread is stuck"
    assert not errors, errors
    assert mm.telemetry.errors == 0, mm.telemetry.last_error
    assert mm.telemetry.compactions > 0 and gate.overlapped > 0
    assert_each_once(root, [i for w in ids for i in w] + logged)
