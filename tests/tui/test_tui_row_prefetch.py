"""The hot window builds a screen of new rows with one read of the file, not one per row
(loop lag while an agent appends 1,000 events/s), and the rows are the ones a row-by-row build
gives: same fields, a corrupt line in the middle still marked, a rewritten line never shown as
the old event.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import inspector.tui.hot_window_model as model_module
from inspector.tui.hot_window_model import HotWindowModel, LazyRows


def _write(path: Path, n: int, *, corrupt_at: int | None = None) -> None:
    lines = []
    for i in range(n):
        if i == corrupt_at:
            lines.append('{"broken": \n')
            continue
        event = {
            "id": f"e{i}",
            "type": "tool_call" if i % 2 else "user_input",
            "role": "assistant" if i % 2 else "user",
            "ts": f"2026-11-30T22:{i % 60:02d}:00Z",
            "content": f"event {i}: " + "x" * (i % 7),
        }
        if i % 2:
            event["tool_call_id"] = f"c{i}"
        lines.append(json.dumps(event) + "\n")
    path.write_text("".join(lines), encoding="utf-8")


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the file reads rows are built with."""
    calls: list[int] = []
    original = model_module._read_span

    def counted(path: Path, offset: int, length: int) -> bytes | None:
        calls.append(length)
        return original(path, offset, length)

    monkeypatch.setattr(model_module, "_read_span", counted)
    return calls


def test_prefetch_builds_a_screen_of_rows_with_one_read_and_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "events.jsonl"
    _write(path, 120, corrupt_at=70)
    one_by_one = list(HotWindowModel(path).poll().snapshot.rows)
    snap = HotWindowModel(path).poll().snapshot
    rows = snap.rows
    assert isinstance(rows, LazyRows)
    reads = _reads(monkeypatch)
    rows.prefetch(60, 106)
    assert len(reads) == 1
    assert all(rows.is_built(i) for i in range(60, 106))
    assert not rows.is_built(59) and not rows.is_built(106)
    assert [rows[i] for i in range(60, 106)] == one_by_one[60:106]
    assert rows[70].corrupt and rows[70].type == "(corrupt)"
    assert len(reads) == 1  # drawing them reads nothing more
    rows.prefetch(60, 106)
    assert len(reads) == 1  # nothing left to build


def test_prefetch_never_keeps_a_rewritten_line_as_the_old_event(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    _write(path, 10)
    snap = HotWindowModel(path).poll().snapshot
    rows = snap.rows
    assert isinstance(rows, LazyRows)
    text = path.read_text(encoding="utf-8").replace('"e5"', '"z5"')
    path.write_text(text, encoding="utf-8")
    rows.prefetch(0, 10)
    assert not rows.is_built(5)
    assert "changed" in rows[5].preview
    assert rows[4].event_id == "e4" and rows[4].preview.startswith("event 4")


def test_prefetch_of_a_span_too_big_for_one_read_leaves_rows_to_the_draw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "events.jsonl"
    _write(path, 20)
    monkeypatch.setattr(model_module, "PREFETCH_MAX_BYTES", 100)
    rows = HotWindowModel(path).poll().snapshot.rows
    assert isinstance(rows, LazyRows)
    rows.prefetch(0, 20)
    assert not any(rows.is_built(i) for i in range(20))
    assert rows[3].event_id == "e3"
