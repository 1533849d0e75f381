"""Index and summaries at scale (issue 14): the appended index, its catalog and summary.md
rendered from a bounded window must answer exactly what a full parse and a full render do."""

from __future__ import annotations

import errno
import os
import random
from pathlib import Path
from typing import Any

import pytest

import core.index.catalog
import core.index.reader
from core.compaction.summaries import (
    archive_entry_bytes,
    fold_stat,
    render_summary,
    render_summary_md_window,
)
from core.config import CompactionConfig
from core.index.catalog import catalog_path, read_catalog, read_summary
from core.index.format import render_index
from core.index.reader import read_index
from core.manager import MemoryManager
from core.store.paths import MemoryPaths
from tests.helpers.invariants import assert_each_once
from tests.helpers.mm_child_run import run_mm_child


def _summary(rng: random.Random, n: int, open_request: str | None) -> tuple[str, str | None]:
    """A chunk summary in the shapes the summarizers write: runs, a run continued from the
    previous chunk, a split turn left open, free text, or nothing. Returns it and the request
    left open (continued by a later chunk)."""
    kind = rng.random()
    if kind < 0.08:
        return "", None
    if kind < 0.16:
        return f"free text of chunk {n}\nwith a second line", None
    lines = ["Goal:", "- something", "Progress:"]
    if open_request is not None and rng.random() < 0.8:
        lines += [f"- Continued: {open_request}", f"  edited: c{n}.py", "  outcome: done"]
    for r in range(rng.randint(0 if open_request else 1, 3)):
        lines += [f"- Request: task {n}.{r}", f"  edited: f{n}_{r}.py", f"  outcome: ok {r}"]
    if rng.random() < 0.35:
        request = open_request if open_request and rng.random() < 0.5 else f"long task {n}"
        lines += [
            "",
            "---",
            "",
            "Turn Context (split turn):",
            "Original request:",
            f"- {request}",
            "Early progress:",
            f"- edited: p{n}.py",
        ]
        return "\n".join(lines), request
    return "\n".join(lines), None


def history(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    open_request: str | None = None
    for n in range(1, count + 1):
        text, open_request = _summary(rng, n, open_request)
        out.append((f"chunk_{n:04d}", text))
    return out


@pytest.mark.parametrize(
    ("seed", "max_chunks", "max_lines"), [(1, 1, 2), (2, 3, 5), (3, 8, 12), (4, 2, 40)]
)
def test_window_render_equals_full_render_after_every_pass(
    seed: int, max_chunks: int, max_lines: int
) -> None:
    chunks = history(seed, 120)
    stats = []
    previous: str | None = None
    for cid, text in chunks:
        stat = fold_stat(cid, text, previous)
        previous = stat.last_request
        stats.append(stat)
    saw_marker = saw_merge = False
    archive = b""
    for n in range(1, len(chunks) + 1):
        full = render_summary(
            chunks[:n],
            summary_max_chunks=max_chunks,
            max_rolling_summary_lines=max_lines,
            max_summary_tokens=60,
        )
        split = max(0, n - max_chunks)
        window = render_summary_md_window(
            n,
            lambda i: chunks[i],
            lambda i: stats[i].lines,
            sum(s.lines for s in stats[:split]),
            summary_max_chunks=max_chunks,
            max_rolling_summary_lines=max_lines,
            max_summary_tokens=60,
        )
        assert window == full.summary_md, f"pass {n}"
        if split:
            cid, text = chunks[split - 1]
            archive += archive_entry_bytes(cid, text, first=split == 1)
        assert archive.decode() == full.archive_md, f"pass {n}"
        saw_marker = saw_marker or full.rolling_truncated > 0
        saw_merge = saw_merge or any("–" in line for line in full.rolling_lines)
    assert saw_marker and saw_merge


def test_fold_stats_count_the_full_renders_lines() -> None:
    chunks = history(9, 80)
    previous: str | None = None
    total = 0
    for cid, text in chunks:
        stat = fold_stat(cid, text, previous)
        previous = stat.last_request
        total += stat.lines
    full = render_summary(
        [*chunks, ("z", "x")], summary_max_chunks=1, max_rolling_summary_lines=10_000
    )
    assert len(full.rolling_lines) == total


# --------------------------------------------------------------------------- passes on disk


CONFIG: dict[str, Any] = {
    "count_compress_after_events": 8,
    "hot_window_events": 3,
    "keep_recent_tokens": 100_000,
    "summary_max_chunks": 2,
    "max_rolling_summary_lines": 4,
}


def fill(mm: MemoryManager, turns: int, start: int = 0) -> list[str]:
    ids: list[str] = []
    for n in range(start, start + turns):
        ids.append(mm.begin_run(f"turn {n}: check the sensor log and note code E{n}")["id"])
        ids.append(mm.append({"type": "tool_call", "name": "sh", "tool_call_id": f"k{n}"})["id"])
        ids.append(
            mm.append(
                {"type": "tool_result", "name": "sh", "tool_call_id": f"k{n}", "content": f"E{n}"}
            )["id"]
        )
        ids.append(mm.append({"type": "assistant_output", "content": f"noted E{n}"})["id"])
    return ids


def compacted(root: Path, passes: int) -> MemoryManager:
    """A manager on `root` with CONFIG after `passes` passes, each compacting three new turns."""
    mm = MemoryManager(root, CompactionConfig(**CONFIG))
    for turn in range(passes):
        fill(mm, 3, start=turn * 3)
        assert mm.save().compacted
    return mm


def full_render(mm: MemoryManager) -> tuple[str, str]:
    entries = read_index(mm.paths).entries
    r = render_summary(
        [(e.chunk_id, e.summary) for e in entries],
        summary_max_chunks=mm.config.summary_max_chunks,
        max_rolling_summary_lines=mm.config.max_rolling_summary_lines,
        max_summary_tokens=mm.config.summarizer.max_summary_tokens,
    )
    return r.summary_md, r.archive_md


def assert_derived_files_match_a_full_render(mm: MemoryManager) -> None:
    """index.yaml as a whole render would write it; summary.md and summary_archive.md as a
    full render gives them; the catalog as a fresh parse gives the entries."""
    entries = read_index(mm.paths).entries
    assert mm.paths.index.read_text(encoding="utf-8") == render_index(entries)
    summary_md, archive_md = full_render(mm)
    assert mm.paths.summary.read_text(encoding="utf-8") == summary_md
    archive = mm.paths.summary_archive
    assert (archive.read_text(encoding="utf-8") if archive.exists() else "") == archive_md
    catalog = read_catalog(mm.paths)
    assert catalog.chunk_ids() == [e.chunk_id for e in entries]
    for i, e in enumerate(entries):
        assert catalog.summary(i) == e.summary
        light = catalog.entries[i]
        assert (light.event_count, light.first_event_id, light.last_event_id) == (
            e.event_count,
            e.first_event_id,
            e.last_event_id,
        )
        assert light.cut_meta == e.cut_meta
        assert catalog.chunk_entry(i) == e


def test_passes_append_to_the_index_in_place_and_match_a_full_render(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", CompactionConfig(**CONFIG))
    inodes = set()
    for turn in range(12):
        fill(mm, 3, start=turn * 3)
        assert mm.save().compacted
        assert_derived_files_match_a_full_render(mm)
        if turn:
            inodes.add(os.stat(mm.paths.index).st_ino)
    assert len(inodes) == 1, "index.yaml was rewritten instead of appended to"
    assert len(read_index(mm.paths).entries) == 12
    assert read_summary(mm.paths, "chunk_0003") == read_index(mm.paths).entries[2].summary
    assert read_summary(mm.paths, "chunk_9999") is None
    mm.close()


@pytest.mark.parametrize(
    "damage",
    [
        "deleted",
        "garbage",
        "last_line_missing",
        "last_line_torn",
        "stale_replaced",
        "stale_in_place",
    ],
)
def test_a_damaged_or_stale_catalog_answers_as_a_fresh_parse(tmp_path: Path, damage: str) -> None:
    mm = compacted(tmp_path / "m", passes=6)
    path = catalog_path(mm.paths)
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 6
    if damage == "deleted":
        path.unlink()
    elif damage == "garbage":
        path.write_bytes(b"\x00not json\n" * 3)
    elif damage == "last_line_missing":  # a crash between the index append and the catalog
        path.write_bytes(b"".join(lines[:-1]))
    elif damage == "last_line_torn":
        path.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])
    else:  # index.yaml edited by hand, in place or replaced: another summary, same entries
        entries = read_index(mm.paths).entries
        entries[2].summary = "rewritten by hand"
        text = render_index(entries).encode("utf-8")
        if damage == "stale_in_place":
            with open(mm.paths.index, "r+b") as f:
                f.write(text)
                f.truncate()
        else:
            tmp = mm.paths.index.with_name("edited.yaml")
            tmp.write_bytes(text)
            os.replace(tmp, mm.paths.index)
    catalog = read_catalog(mm.paths)
    entries = read_index(mm.paths).entries
    assert catalog.chunk_ids() == [e.chunk_id for e in entries]
    assert [catalog.summary(i) for i in range(len(entries))] == [e.summary for e in entries]
    assert len(path.read_bytes().splitlines()) == 6  # repaired on disk for the next reader
    fill(mm, 3, start=99)
    assert mm.save().compacted  # and a pass goes on from it
    assert [e.chunk_id for e in read_index(mm.paths).entries][-1] == "chunk_0007"
    mm.close()


def test_an_index_not_in_the_writer_layout_is_rendered_whole_then_appended(
    tmp_path: Path,
) -> None:
    mm = compacted(tmp_path / "m", passes=3)
    text = mm.paths.index.read_text(encoding="utf-8")
    mm.paths.index.write_text("# edited by hand\n" + text, encoding="utf-8")
    catalog = read_catalog(mm.paths)
    assert not catalog.appendable and len(catalog) == 3
    fill(mm, 3, start=50)
    assert mm.save().compacted
    assert_derived_files_match_a_full_render(mm)
    assert read_catalog(mm.paths).appendable
    mm.close()


def test_a_hand_edited_archive_is_rendered_whole_again(tmp_path: Path) -> None:
    mm = compacted(tmp_path / "m", passes=5)
    mm.paths.summary_archive.write_text("# my notes\n", encoding="utf-8")
    fill(mm, 3, start=60)
    assert mm.save().compacted
    assert_derived_files_match_a_full_render(mm)
    mm.close()


@pytest.mark.parametrize("point", ["during_index_append", "after_index_append"])
@pytest.mark.parametrize("recover_with", ["pass", "repair"])
def test_crash_in_the_index_append_then_recovery(
    tmp_path: Path, point: str, recover_with: str
) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, CompactionConfig(**CONFIG))
    ids = fill(mm, 4)
    assert mm.save().compacted
    ids += fill(mm, 4, start=4)
    assert mm.save().compacted
    ids += fill(mm, 4, start=8)
    mm.close()
    size_before = os.stat(root / "session" / "chunks" / "index.yaml").st_size

    crashed = run_mm_child(root, CONFIG, "save", fault=point)
    assert crashed.returncode == 99, crashed.stderr
    index = root / "session" / "chunks" / "index.yaml"
    if point == "during_index_append":
        assert size_before < os.stat(index).st_size  # half an entry is on disk

    mm = MemoryManager(root, CompactionConfig(**CONFIG))
    recovered = mm.save().recovered if recover_with == "pass" else mm.repair()
    if point == "during_index_append":
        assert recovered.get("index_torn_tail_cut") == 1
    entries = read_index(mm.paths).entries
    assert len({e.chunk_id for e in entries}) == len(entries)
    assert not list((root / "session" / "chunks" / "pending").glob("*.jsonl"))
    assert_each_once(root, ids)
    assert_derived_files_match_a_full_render(mm)
    fill(mm, 3, start=40)
    assert mm.save().compacted
    assert_derived_files_match_a_full_render(mm)
    mm.close()


def test_status_prompt_and_passes_never_parse_the_whole_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the catalog exists, the commands that run all the time read it, not index.yaml
    whole (the cost that grew with every chunk)."""
    mm = compacted(tmp_path / "m", passes=4)
    mm.close()

    def refuse(*_: object) -> None:
        raise AssertionError("index.yaml was parsed whole")

    monkeypatch.setattr("core.index.reader._parse_index", refuse)
    core.index.reader._CACHE.clear()  # a fresh process: nothing parsed before
    core.index.catalog._CACHE.clear()
    fresh = MemoryManager(tmp_path / "m", CompactionConfig(**CONFIG))
    status = fresh.status()
    assert status.chunk_count == 4 and status.index_error is None
    messages = fresh.build_prompt("system", "task")
    assert "## Recent Chunks" in messages[0]["content"]
    for turn in range(3):
        fill(fresh, 3, start=100 + turn * 3)
        assert fresh.save().compacted
    assert fresh.status().chunk_count == 7
    fresh.close()
    monkeypatch.undo()
    assert_derived_files_match_a_full_render(
        MemoryManager(tmp_path / "m", CompactionConfig(**CONFIG))
    )


def test_a_rotated_session_keeps_a_valid_catalog(tmp_path: Path) -> None:
    mm = compacted(tmp_path / "m", passes=3)
    mm.rotate()
    [archive] = mm.list_archives()
    assert archive.chunk_count == 3
    archived = read_catalog(MemoryPaths(tmp_path / "m", session=archive.path), write=False)
    assert not archived.rebuilt and len(archived) == 3
    mm.close()


@pytest.mark.parametrize("new_max_chunks", [1, 4])
def test_a_changed_summary_max_chunks_renders_the_archive_again(
    tmp_path: Path, new_max_chunks: int
) -> None:
    mm = compacted(tmp_path / "m", passes=5)
    mm.close()
    changed = MemoryManager(
        tmp_path / "m", CompactionConfig(**{**CONFIG, "summary_max_chunks": new_max_chunks})
    )
    fill(changed, 3, start=70)
    assert changed.save().compacted
    assert_derived_files_match_a_full_render(changed)
    changed.close()


def test_a_catalog_write_that_fails_does_not_fail_the_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The catalog is derived: a full disk while writing it costs a catch-up later, never the
    pass (the index append, which is not derived, fails the pass: tests/reliability)."""
    mm = compacted(tmp_path / "m", passes=3)
    real_write = os.write

    def full_for_the_catalog(fd: int, data: Any) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("index.catalog"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", full_for_the_catalog)
        fill(mm, 3, start=30)
        assert mm.save().compacted
    assert len(catalog_path(mm.paths).read_bytes().splitlines()) == 3  # it lags behind
    core.index.catalog._CACHE.clear()
    assert_derived_files_match_a_full_render(mm)
    assert len(catalog_path(mm.paths).read_bytes().splitlines()) == 4  # caught up
    mm.close()
