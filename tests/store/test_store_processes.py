"""The session lock across real OS processes (tests/helpers/lock_child.py children, real flock)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import LockTimeoutError
from core.store.session_store import SessionStore
from tests.helpers.paths import LOCK_CHILD


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(LOCK_CHILD), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _expect(proc: subprocess.Popen[str], word: str) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != word:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"child said {line!r}, expected {word!r}; stderr: {err}")


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    proc = _spawn("hold", str(tmp_path))
    try:
        _expect(proc, "locked")
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_four_processes_appending_concurrently_store_every_event_once(tmp_path: Path) -> None:
    SessionStore(tmp_path).ensure_session()
    workers, count = 4, 200
    procs = [_spawn("append", str(tmp_path), f"w{k}", str(count)) for k in range(workers)]
    for proc in procs:
        _expect(proc, "ready")
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err

    raw = (tmp_path / "session" / "events.jsonl").read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    events = [json.loads(line) for line in lines]  # every line is valid JSON
    assert all(isinstance(e, dict) for e in events)
    ids = [e["id"] for e in events]
    expected = {f"w{k}-{i:04d}" for k in range(workers) for i in range(count)}
    assert len(ids) == workers * count
    assert set(ids) == expected
    for k in range(workers):  # each writer's own order is kept
        mine = [i for i in ids if i.startswith(f"w{k}-")]
        assert mine == sorted(mine)
    snap = SessionStore(tmp_path).read_events(locked=True)
    assert snap.event_count == workers * count and not snap.corrupt


def test_lock_of_a_killed_holder_is_released(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    store = SessionStore(tmp_path, lock_timeout=0.2)
    with pytest.raises(LockTimeoutError), store.lock():
        pass
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    assert holder.returncode == -signal.SIGKILL
    patient = SessionStore(tmp_path, lock_timeout=10.0)
    with patient.lock():
        patient.ensure_session()
        patient.append_events([{"type": "user_input", "content": "after the crash"}])
    assert patient.read_events().events[-1]["content"] == "after the crash"


def test_lock_held_by_another_process_times_out_with_a_clear_message(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    store = SessionStore(tmp_path, lock_timeout=0.3)
    with pytest.raises(LockTimeoutError) as info:
        store.append_events([{"type": "user_input", "content": "blocked"}])
    message = str(info.value)
    assert message == (
        f"could not lock {tmp_path / '.session.lock'} within 0.3 s: another process holds it"
    )
    assert "\n" not in message
    assert not (tmp_path / "session" / "events.jsonl").exists()  # nothing was written
    assert holder.stdin is not None
    holder.stdin.write("release\n")
    holder.stdin.flush()
    holder.wait(timeout=30)
    assert holder.returncode == 0
    store.append_events([{"type": "user_input", "content": "now it works"}])
    assert store.read_events().event_count == 1
