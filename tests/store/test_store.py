"""core.store.paths, core.store.atomic and core.store.session_store: the session's files, one
process."""

from __future__ import annotations

import base64
import contextlib
import errno
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

import pytest

import core.store.atomic
from core.compaction.state import SessionState, new_session_id
from core.errors import ChunkIdError, EventError, LockTimeoutError, StoreError
from core.index.catalog import write_index
from core.jsonl import MAX_EVENT_BYTES, parse_event_lines
from core.store.atomic import atomic_write_bytes, atomic_write_text
from core.store.paths import MemoryPaths, validate_chunk_id
from core.store.session_store import SessionStore
from core.store.snapshot import EventsSnapshot
from tests.helpers.hostile import HOSTILE_IDS

T = TypeVar("T")


def _store(tmp_path: Path, **kw: Any) -> SessionStore:
    store = SessionStore(tmp_path / "m", **kw)
    store.ensure_session()
    return store


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


# --------------------------------------------------------------------------- paths


def test_paths_follow_the_contract_layout(tmp_path: Path) -> None:
    p = MemoryPaths(tmp_path)
    s = tmp_path / "session"
    assert p.session == s
    assert (p.events, p.state, p.summary, p.summary_archive) == (
        s / "events.jsonl",
        s / "state.json",
        s / "summary.md",
        s / "summary_archive.md",
    )
    assert (p.chunks_dir, p.index, p.pending_dir, p.corrupt) == (
        s / "chunks",
        s / "chunks" / "index.yaml",
        s / "chunks" / "pending",
        s / "corrupt.jsonl",
    )
    assert p.lock == tmp_path / ".session.lock"  # outside session/, so rotation can move it
    assert p.maintenance_lock == tmp_path / ".maintenance.lock"
    assert p.archive_root == tmp_path / "session_archive"
    assert p.chunk_file("chunk_0001") == s / "chunks" / "chunk_0001.jsonl"
    assert p.pending_file("pending-1") == s / "chunks" / "pending" / "pending-1.jsonl"
    assert p.pending_meta_file("pending-1") == s / "chunks" / "pending" / "pending-1.meta.json"


def test_archive_paths_validate_the_session_id(tmp_path: Path) -> None:
    p = MemoryPaths.for_archive(tmp_path, "s-20261129T174543Z-1a2b3c")
    assert p.session == tmp_path / "session_archive" / "s-20261129T174543Z-1a2b3c"
    assert p.events == p.session / "events.jsonl"
    assert p.lock == tmp_path / ".session.lock"
    with pytest.raises(ChunkIdError):
        MemoryPaths.for_archive(tmp_path, "../session")


@pytest.mark.parametrize("cid", HOSTILE_IDS, ids=lambda c: repr(c)[:20])
def test_hostile_ids_never_become_paths(tmp_path: Path, cid: object) -> None:
    p = MemoryPaths(tmp_path)
    with pytest.raises(ChunkIdError) as info:
        validate_chunk_id(cid)
    message = str(info.value)
    assert "invalid chunk id" in message and "\n" not in message
    assert len(message) < 200  # a 10 KB id is shown truncated
    with pytest.raises(ChunkIdError):
        p.chunk_file(cid)  # type: ignore[arg-type]
    with pytest.raises(ChunkIdError):
        p.pending_file(cid)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "cid", ["chunk_0001", "pending-20261129T1745Z-1a2b3c", "a.b-c_D9", "x" * 128]
)
def test_ordinary_ids_are_accepted(cid: str) -> None:
    assert validate_chunk_id(cid) == cid


def test_id_longer_than_128_is_refused() -> None:
    with pytest.raises(ChunkIdError):
        validate_chunk_id("x" * 129)


def test_session_symlink_out_of_the_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "m"
    outside = tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (outside / "events.jsonl").write_text('{"type":"user_input","content":"secret"}\n')
    (root / "session").symlink_to(outside)
    store = SessionStore(root)
    for action in (
        store.ensure_session,
        lambda: store.append_events([{"type": "user_input", "content": "x"}]),
        store.read_events,
        store.read_state,
        lambda: write_index(store.paths, []),
    ):
        with pytest.raises(StoreError, match="outside the memory root"):
            action()
    assert sorted(os.listdir(outside)) == ["events.jsonl"]
    assert (outside / "events.jsonl").read_text().count("\n") == 1


def test_session_symlink_inside_the_root_is_fine(tmp_path: Path) -> None:
    root = tmp_path / "m"
    (root / "real").mkdir(parents=True)
    (root / "session").symlink_to(root / "real")
    store = SessionStore(root)
    store.append_events([{"type": "user_input", "content": "x"}])
    assert (root / "real" / "events.jsonl").read_bytes().count(b"\n") == 1


# --------------------------------------------------------------------------- atomic


def _leftovers(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.endswith(".tmp")]


def test_atomic_write_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write_text(target, "one 中文")
    assert target.read_text("utf-8") == "one 中文"
    inode = target.stat().st_ino
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two"
    assert target.stat().st_ino != inode  # replaced, not rewritten in place
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("victim", ["replace", "write", "fsync"])
def test_failed_atomic_write_keeps_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim: str
) -> None:
    target = tmp_path / "index.yaml"
    target.write_bytes(b"old content\n")

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(core.store.atomic.os, victim, boom)
    with pytest.raises(StoreError) as info:
        atomic_write_bytes(target, b"new content that will not fit\n")
    monkeypatch.undo()
    assert str(info.value) == f"cannot write {target}: No space left on device"
    assert target.read_bytes() == b"old content\n"
    assert _leftovers(tmp_path) == []


def test_atomic_write_into_a_missing_folder_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"cannot write .*missing"):
        atomic_write_text(tmp_path / "missing" / "x", "data")


# --------------------------------------------------------------------------- session and state


def test_ensure_session_creates_everything_once(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "new" / "m")
    assert not store.exists()
    state = store.ensure_session()
    assert store.exists()
    assert store.paths.events.read_bytes() == b""
    assert re.fullmatch(r"s-\d{8}T\d{6}Z-[0-9a-f]{6}", state.session_id)
    on_disk = json.loads(store.paths.state.read_text())
    assert on_disk["session_id"] == state.session_id
    assert store.ensure_session().session_id == state.session_id
    assert store.read_state().session_id == state.session_id


def test_session_ids_are_unique_and_valid_folder_names() -> None:
    # 24 random bits a second: 200 ids in one second collide once in ~800 runs (it happened
    # in a full run); 50 collide once in ~13,000.
    ids = {new_session_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(validate_chunk_id(i) == i for i in ids)


def test_corrupt_state_is_moved_aside_and_replaced(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.paths.state.write_bytes(b"{not json")
    reader = SessionStore(tmp_path / "m")
    stand_in = reader.read_state()  # a reader tolerates it and changes nothing
    assert reader.warnings and "not valid JSON" in reader.warnings[0]
    assert store.paths.state.read_bytes() == b"{not json"
    assert stand_in.session_id

    state = store.ensure_session()
    asides = list(store.paths.session.glob("state.json.corrupt-*"))
    assert len(asides) == 1 and asides[0].read_bytes() == b"{not json"
    assert json.loads(store.paths.state.read_text())["session_id"] == state.session_id
    assert any("moved to state.json.corrupt-" in w for w in store.warnings)


@pytest.mark.parametrize(
    "content",
    [b"[1, 2]", b'{"created_at": "x"}', b'{"session_id": "../x", "created_at": "x"}', b"\xff\xfe"],
)
def test_state_with_a_bad_shape_counts_as_corrupt(tmp_path: Path, content: bytes) -> None:
    store = _store(tmp_path)
    store.paths.state.write_bytes(content)
    store.ensure_session()
    assert len(list(store.paths.session.glob("state.json.corrupt-*"))) == 1


def test_read_state_without_a_session_is_a_store_error(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "m")
    with pytest.raises(StoreError, match="no session at"):
        store.read_state()
    assert not (tmp_path / "m").exists()


def test_state_keeps_unknown_keys() -> None:
    obj = {"session_id": "s-1", "created_at": "t", "counters": {"passes": 2}, "future": [1]}
    state = SessionState.from_json(obj, "state.json")
    assert state.extra == {"future": [1]}
    assert state.to_json()["future"] == [1]
    assert SessionState.from_json(state.to_json(), "x") == state


def test_set_state_and_update_state(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.set_state(model="gpt-x", custom_flag=True)
    state = store.read_state()
    assert state.model == "gpt-x" and state.extra["custom_flag"] is True

    def bump(s: SessionState) -> None:
        s.counters["compactions"] = s.counters.get("compactions", 0) + 1

    store.update_state(bump)
    store.update_state(bump)
    assert SessionStore(tmp_path / "m").read_state().counters["compactions"] == 2


# --------------------------------------------------------------------------- append


def test_append_assigns_id_and_ts_and_writes_compact_lines(tmp_path: Path) -> None:
    store = _store(tmp_path)
    stored = store.append_events(
        [
            {"type": "user_input", "role": "user", "content": "你好 world"},
            {"id": "mine", "ts": "2026-01-01T00:00:00Z", "type": "assistant_output", "x": 1},
        ]
    )
    assert stored[0]["id"].startswith("ev_") and stored[0]["ts"].endswith("Z")
    assert stored[1]["id"] == "mine" and stored[1]["ts"] == "2026-01-01T00:00:00Z"
    raw = store.paths.events.read_bytes()
    lines = raw.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    assert "你好".encode() in lines[0]  # UTF-8 kept, not \u escapes
    assert b", " not in lines[0] and b": " not in lines[0]
    assert [json.loads(x) for x in lines[:2]] == stored
    assert stored[1]["x"] == 1  # unknown fields kept


def test_append_is_all_or_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append_events([{"type": "user_input", "content": "first"}])
    before = store.paths.events.read_bytes()
    with pytest.raises(EventError, match="stdin line 2"):
        store.append_events(
            [{"type": "user_input", "content": "ok"}, {"content": "no type"}],
            where="stdin line",
        )
    with pytest.raises(EventError, match="event 1"):
        store.append_events([{"type": "x", "content": float("nan")}])
    with pytest.raises(EventError, match="event 1"):
        store.append_events(["not an object"])  # type: ignore[list-item]
    assert store.paths.events.read_bytes() == before


def test_append_refuses_an_event_over_the_size_limit(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(EventError, match="over the 8388608-byte limit"):
        store.append_events([{"type": "tool_result", "content": "x" * MAX_EVENT_BYTES}])
    assert store.paths.events.read_bytes() == b""


def test_append_scrubs_screenshot_payloads(tmp_path: Path) -> None:
    store = _store(tmp_path)
    event = {
        "type": "tool_result",
        "name": "screenshot",
        "content": {"data": "QUJD" * 1000, "width": 10, "height": 20},
    }
    stored = store.append_events([event])
    assert "data" not in stored[0]["content"]
    assert stored[0]["meta"]["scrubbed"] is True
    assert b"QUJD" not in store.paths.events.read_bytes()
    assert "data" in event["content"]  # the caller's object is untouched


def test_append_after_a_crashed_partial_line_starts_a_new_line(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append_events([{"type": "user_input", "content": "a"}])
    with open(store.paths.events, "ab") as fh:
        fh.write(b'{"type":"assistant_output","cont')
    store.append_events([{"type": "assistant_output", "content": "b"}])
    snap = store.read_events(locked=True)
    assert [e["content"] for e in snap.events] == ["a", "b"]
    assert len(snap.corrupt) == 1 and snap.corrupt[0].raw == b'{"type":"assistant_output","cont'


def test_append_creates_the_session_when_missing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "m")
    store.append_events([{"type": "user_input", "content": "hi"}])
    assert store.read_events().event_count == 1
    assert store.read_state().session_id


def test_user_input_starts_a_run_and_the_latest_prompt_size_wins(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.record_prompt_tokens(40000, model="m1")
    store.record_prompt_tokens(20000)
    state = store.read_state()
    assert state.last_prompt_tokens == 20000 and state.model == "m1"
    assert state.prompt_tokens_source == "recorded" and state.ever_recorded
    stored = store.append_events([{"type": "user_input", "content": "next turn"}])
    state = SessionStore(tmp_path / "m").read_state()
    assert state.last_prompt_tokens == 20000, "a new user turn does not forget the size"
    assert state.run_started_at == stored[0]["ts"]
    store.record_prompt_tokens(300)
    state = store.read_state()
    assert state.last_prompt_tokens == 300
    assert state.prompt_tokens_after_event_id == stored[0]["id"], "anchored at the last event"
    with pytest.raises(Exception, match="integer from 0"):
        store.record_prompt_tokens(-1)
    with pytest.raises(Exception, match="integer from 0"):
        store.record_prompt_tokens(10**400)
    assert store.read_state().last_prompt_tokens == 300, "a refused figure changes nothing"


def test_plain_appends_do_not_rewrite_state_json(tmp_path: Path) -> None:
    store = _store(tmp_path)
    inode = store.paths.state.stat().st_ino
    for i in range(5):
        store.append_events([{"type": "assistant_output", "content": str(i)}])
    assert store.paths.state.stat().st_ino == inode
    assert store.read_state().counters["appended"] == 5  # this process sees its own appends
    store.flush_state()
    on_disk = SessionStore(tmp_path / "m").read_state()
    assert on_disk.counters["appended"] == 5 and on_disk.last_event_at


# --------------------------------------------------------------------------- read


def test_read_events_keeps_every_bad_line_as_corrupt(tmp_path: Path) -> None:
    store = _store(tmp_path)
    good = b'{"id":"1","type":"user_input","content":"hi"}\n'
    data = (
        good
        + b"{broken json\n"
        + b"\xff\xfe not utf-8\n"
        + b"[1, 2]\n"
        + b"42\n"
        + b"\n"  # a blank line holds nothing: neither event nor corrupt
        + b'{"id":"2","type":"assistant_output","content":"ok"}\n'
        + b"{also broken\n"
    )
    _write(store.paths.events, data)
    snap = store.read_events()
    assert [e["id"] for e in snap.events] == ["1", "2"]
    assert [c.line_no for c in snap.corrupt] == [2, 3, 4, 5, 8]
    errors = [c.error for c in snap.corrupt]
    assert "not valid JSON" in errors[0]
    assert "not valid UTF-8" in errors[1]
    assert "not a JSON object" in errors[2] and "not a JSON object" in errors[3]
    assert snap.corrupt[1].raw == b"\xff\xfe not utf-8"
    assert snap.corrupt[0].offset == len(good)
    assert snap.size == len(data) and snap.partial_tail == b""
    assert snap.tokens == [5, 5]


def test_an_over_long_line_is_corrupt_not_an_error(tmp_path: Path) -> None:
    store = _store(tmp_path)
    big = b'{"content":"' + b"x" * MAX_EVENT_BYTES + b'"}'
    _write(store.paths.events, big + b"\n" + b'{"type":"x"}\n')
    snap = store.read_events()
    assert snap.event_count == 1
    assert len(snap.corrupt) == 1 and "exceeds the 8388608-byte limit" in snap.corrupt[0].error
    assert snap.corrupt[0].raw == big


def test_deeply_nested_json_is_corrupt_not_a_crash(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store.paths.events, b"[" * 100_000 + b"]" * 100_000 + b"\n")
    snap = store.read_events()
    assert snap.event_count == 0 and len(snap.corrupt) == 1


def test_unterminated_last_line_depends_on_holding_the_lock(tmp_path: Path) -> None:
    store = _store(tmp_path)
    head = b'{"type":"user_input","content":"a"}\n'
    tail = b'{"type":"assistant_output","content":"half'
    _write(store.paths.events, head + tail)
    unlocked = store.read_events()
    assert unlocked.event_count == 1 and unlocked.corrupt == []
    assert unlocked.partial_tail == tail and unlocked.size == len(head)
    with store.lock():
        locked = store.read_events(locked=True)
    assert locked.event_count == 1 and locked.partial_tail == b""
    assert len(locked.corrupt) == 1 and locked.corrupt[0].raw == tail
    assert "unterminated" in locked.corrupt[0].error
    assert locked.size == len(head + tail)


def test_missing_events_file_reads_as_empty(tmp_path: Path) -> None:
    snap = SessionStore(tmp_path / "nothing").read_events()
    assert (snap.event_count, snap.size, snap.corrupt) == (0, 0, [])
    assert not (tmp_path / "nothing").exists()


def test_parse_event_lines_offsets_and_line_numbers() -> None:
    parsed = parse_event_lines(b'{"a":1}\nxx\n{"b"', base_offset=100, base_line=7, final=False)
    assert [(p.line_no, p.offset, p.length) for p in parsed.lines] == [(7, 100, 8), (8, 108, 3)]
    assert parsed.consumed == 11 and parsed.tail == b'{"b"' and parsed.next_line == 9
    assert parsed.events == [{"a": 1}] and [c.raw for c in parsed.corrupt] == [b"xx"]


# --------------------------------------------------------------------------- rewrite


def test_replace_events_quarantines_verbatim_then_rewrites(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(
        store.paths.events,
        b'{"id":"1","type":"user_input"}\n'
        b"not json at all\n"
        b"\xc3\x28 bad utf8\n"
        b'{"id":"2","type":"assistant_output"}\n'
        b'{"id":"3","trunc',
    )
    with store.lock():
        snap = store.read_events(locked=True)
        written = store.replace_events(snap.events[1:], quarantine=snap.corrupt)
    assert store.paths.events.read_bytes() == b'{"id":"2","type":"assistant_output"}\n'
    assert written == len(store.paths.events.read_bytes())
    records = [json.loads(x) for x in store.paths.corrupt.read_text().splitlines()]
    assert [r["line"] for r in records] == [2, 3, 5]
    assert records[0]["raw"] == "not json at all"
    assert records[0]["source"] == "session/events.jsonl"
    assert records[0]["offset"] == len(b'{"id":"1","type":"user_input"}\n')
    assert "raw" not in records[1]
    assert base64.b64decode(records[1]["raw_b64"]) == b"\xc3\x28 bad utf8"
    assert records[2]["raw"] == '{"id":"3","trunc' and "unterminated" in records[2]["error"]
    assert all(r["quarantined_at"] and r["error"] for r in records)
    assert store.count_corrupt_quarantined() == 3
    assert _leftovers(store.paths.session) == []


def test_rewrites_need_the_lock(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(StoreError, match="needs the session lock"):
        store.replace_events([])
    with pytest.raises(StoreError, match="needs the session lock"):
        store.snapshot_still_prefix(store.read_events())


def test_count_corrupt_without_a_file_is_zero(tmp_path: Path) -> None:
    assert _store(tmp_path).count_corrupt_quarantined() == 0


def _snap(store: SessionStore) -> EventsSnapshot:
    with store.lock():
        return store.read_events(locked=True)


def test_snapshot_still_prefix_reports_what_was_appended(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append_events([{"type": "user_input", "content": str(i)} for i in range(3)])
    snap = _snap(store)
    with store.lock():
        assert store.snapshot_still_prefix(snap) == (True, b"")
    added = store.append_events([{"type": "assistant_output", "content": "late"}])
    with store.lock():
        ok, extra = store.snapshot_still_prefix(snap)
    assert ok
    tail = parse_event_lines(extra, base_offset=snap.size, base_line=snap.next_line, final=True)
    assert tail.events == added and tail.lines[0].line_no == 4


def test_snapshot_is_no_prefix_after_a_rewrite(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append_events([{"id": str(i), "type": "user_input"} for i in range(3)])
    snap = _snap(store)
    with store.lock():
        store.replace_events(snap.events[1:])
        assert store.snapshot_still_prefix(snap)[0] is False
        # same length, same inode, different bytes: still detected
        data = bytearray(store.paths.events.read_bytes())
        store.replace_events(snap.events)
        snap2 = store.read_events(locked=True)
        with open(store.paths.events, "r+b") as fh:
            fh.seek(2)
            fh.write(b"X" if data[2:3] != b"X" else b"Y")
        assert store.snapshot_still_prefix(snap2)[0] is False


# --------------------------------------------------------------------------- the lock, in-process


def test_lock_is_reentrant_in_one_thread(tmp_path: Path) -> None:
    store = _store(tmp_path, lock_timeout=0.5)
    other = SessionStore(tmp_path / "m", lock_timeout=0.5)  # same root, same process lock
    with store.lock(), store.lock(), other.lock():
        store.append_events([{"type": "user_input", "content": "nested"}])
        assert store.holds_lock()
    assert not store.holds_lock()


def test_lock_lets_one_thread_at_a_time_in(tmp_path: Path) -> None:
    store = _store(tmp_path, lock_timeout=30.0)
    counter = tmp_path / "counter"
    counter.write_text("0")
    inside = 0
    overlaps: list[int] = []

    def work() -> None:
        nonlocal inside
        for _ in range(100):
            with store.lock():
                inside += 1
                overlaps.append(inside)
                value = int(
                    counter.read_text()
                )  # read-modify-write: loses updates unless exclusive
                counter.write_text(str(value + 1))
                inside -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.read_text() == "400"
    assert max(overlaps) == 1


@contextlib.contextmanager
def held_by_another_thread(enter: Callable[[], AbstractContextManager[T]]) -> Iterator[T]:
    """While the block runs another thread is inside `enter()`; yields what it got there."""
    taken, release = threading.Event(), threading.Event()
    got: list[T] = []

    def hold() -> None:
        with enter() as value:
            got.append(value)
            taken.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    taken.wait(30)
    try:
        yield got[0]
    finally:
        release.set()
        t.join()


def test_lock_held_by_another_thread_times_out(tmp_path: Path) -> None:
    store = _store(tmp_path, lock_timeout=0.2)
    with (
        held_by_another_thread(store.lock),
        pytest.raises(LockTimeoutError, match=r"could not lock .*\.session\.lock within 0\.2 s"),
    ):
        store.append_events([{"type": "user_input", "content": "x"}])
    store.append_events([{"type": "user_input", "content": "x"}])
    assert store.read_events().event_count == 1


def test_try_lock_and_maintenance_lock_do_not_wait(tmp_path: Path) -> None:
    store = _store(tmp_path)

    @contextlib.contextmanager
    def both_locks() -> Iterator[bool]:
        with store.maintenance_lock() as got, store.lock():
            yield got

    with (
        held_by_another_thread(both_locks) as held,
        store.maintenance_lock() as got_m,
        store.try_lock() as got_s,
    ):
        results = [held, got_m, got_s]
    assert results == [True, False, False]
    with store.maintenance_lock() as got:
        assert got


def test_an_archived_session_is_read_only(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append_events([{"type": "user_input", "content": "old"}])
    sid = store.read_state().session_id
    archive = tmp_path / "m" / "session_archive" / sid
    archive.parent.mkdir()
    os.rename(store.paths.session, archive)
    before = sorted(p.name for p in archive.iterdir())
    viewer = SessionStore(tmp_path / "m", session=archive)
    assert viewer.read_events().events[0]["content"] == "old"
    assert viewer.read_state().session_id == sid
    for action in (
        viewer.ensure_session,
        lambda: viewer.append_events([{"type": "user_input", "content": "new"}]),
        lambda: viewer.set_state(model="x"),
        lambda: viewer.record_prompt_tokens(5),
    ):
        with pytest.raises(StoreError, match="read-only"):
            action()
    with viewer.lock(), pytest.raises(StoreError, match="read-only"):
        viewer.replace_events([])
    assert sorted(p.name for p in archive.iterdir()) == before
    assert viewer.read_events().event_count == 1
