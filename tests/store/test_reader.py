"""core.store.reader.EventTail: follow events.jsonl by byte offset, notice rewrites."""

from __future__ import annotations

import os
from pathlib import Path

from core.store.reader import RAW_KEEP_BYTES, EventTail
from core.store.session_store import SessionStore
from core.tokens import estimate_event_tokens


def _line(i: int, content: str = "x") -> bytes:
    return f'{{"id":"{i}","type":"assistant_output","content":"{content}"}}\n'.encode()


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def test_missing_file_is_empty_until_it_appears(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    tail = EventTail(path)
    first = tail.poll()
    assert (first.reset, first.records) == (False, [])
    path.write_bytes(_line(1))
    update = tail.poll()
    assert [r.event["id"] for r in update.records if r.event] == ["1"]


def test_poll_returns_only_what_was_appended(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(1) + _line(2))
    tail = EventTail(path)
    first = tail.poll()
    assert [(r.line_no, r.offset) for r in first.records] == [(1, 0), (2, len(_line(1)))]
    assert tail.poll().records == []
    _append(path, _line(3, "中文内容"))
    update = tail.poll()
    assert update.reset is False
    assert [r.line_no for r in update.records] == [3]
    record = update.records[0]
    assert record.event is not None and record.event["content"] == "中文内容"
    assert record.offset == 2 * len(_line(1)) and record.length == len(_line(3, "中文内容"))
    assert record.tokens == estimate_event_tokens(record.event)
    assert tail.offset == path.stat().st_size


def test_works_with_the_store_appending(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "m")
    tail = EventTail(store.paths.events)
    store.append_events([{"type": "user_input", "content": "a"}])
    assert len(tail.poll().records) == 1
    stored = store.append_events([{"type": "assistant_output", "content": "b"}] * 3)
    got = tail.poll().records
    assert [r.event for r in got] == stored


def test_a_partial_last_line_waits_until_it_is_complete(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    line = _line(2)
    path.write_bytes(_line(1) + line[:10])
    tail = EventTail(path)
    assert len(tail.poll().records) == 1
    assert tail.poll().records == []
    _append(path, line[10:])
    update = tail.poll()
    assert update.reset is False
    assert [r.event["id"] for r in update.records if r.event] == ["2"]
    assert update.records[0].line_no == 2


def test_corrupt_lines_are_records_with_capped_raw(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    garbage = b"#" * (RAW_KEEP_BYTES * 2)
    path.write_bytes(_line(1) + garbage + b"\n" + b"[1]\n")
    records = EventTail(path).poll().records
    assert [r.event is None for r in records] == [False, True, True]
    bad = records[1]
    assert bad.error and "not valid JSON" in bad.error
    assert bad.raw == garbage[:RAW_KEEP_BYTES]
    assert bad.length == len(garbage) + 1 and bad.tokens == 0
    assert records[2].raw == b"[1]"
    assert records[0].raw == b""  # good lines keep no bytes


def test_truncated_and_rewritten_shorter_resets(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(1) + _line(2) + _line(3))
    tail = EventTail(path)
    tail.poll()
    with open(path, "r+b") as fh:  # in place: same inode
        fh.truncate(0)
        fh.write(_line(9))
    update = tail.poll()
    assert update.reset is True
    assert [(r.line_no, r.event["id"]) for r in update.records if r.event] == [(1, "9")]


def test_atomic_replace_resets_even_when_longer(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "m")
    store.append_events([{"id": "a", "type": "user_input"}])
    tail = EventTail(store.paths.events)
    tail.poll()
    with store.lock():
        store.replace_events(
            [{"id": "b", "type": "user_input"}, {"id": "c", "type": "assistant_output"}]
        )
    update = tail.poll()
    assert update.reset is True
    assert [r.event["id"] for r in update.records if r.event] == ["b", "c"]


def test_first_line_changed_in_place_resets(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(1) + _line(2))
    tail = EventTail(path)
    tail.poll()
    inode = path.stat().st_ino
    with open(path, "r+b") as fh:
        fh.write(_line(7))  # same length, same inode, different first line
        fh.seek(0, os.SEEK_END)
        fh.write(_line(3))
    assert path.stat().st_ino == inode
    update = tail.poll()
    assert update.reset is True
    assert [r.event["id"] for r in update.records if r.event] == ["7", "2", "3"]


def test_file_removed_then_recreated(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(1))
    tail = EventTail(path)
    tail.poll()
    path.unlink()
    gone = tail.poll()
    assert (gone.reset, gone.records) == (True, [])
    assert tail.poll().reset is False  # reported once
    path.write_bytes(_line(5))
    back = tail.poll()
    assert [r.event["id"] for r in back.records if r.event] == ["5"]
