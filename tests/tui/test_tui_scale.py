"""The TUI on a long-lived root (issue 14): the cached index reader gives what core's reader
gives, the archive listing what core's listing gives, and the Chunks and Archive tabs show the
right rows and details on 500 chunks / 30 archived sessions, filled from workers while keys
keep working."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from textual.app import App
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import DataTable, Input, Static

import inspector.tui.views.archive_view as archive_view_module
import inspector.tui.views.chunks_view as chunks_view_module
from core.config import CompactionConfig
from core.errors import IndexCorruptError
from core.index.catalog import catalog_path, chunk_count, write_index
from core.index.chunk_files import write_chunk_file
from core.index.format import ChunkEntry, IndexRead
from core.index.reader import read_index, read_index_head, read_index_shared
from core.manager import MemoryManager
from inspector.tui.archive_list import list_archives_light
from inspector.tui.hot_window_model import read_light_status
from inspector.tui.views.archive_view import ArchiveView
from inspector.tui.views.chunks_view import ChunksView
from tests.helpers.tui import ViewHost, cells

N_CHUNKS = 500
N_ARCHIVES = 30


def _events(prefix: str, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for j in range(n):
        kind = ("user_input", "assistant_output")[j % 2]
        out.append(
            {
                "id": f"{prefix}-{j:03d}",
                "type": kind,
                "role": "user" if kind == "user_input" else "assistant",
                "ts": "2026-11-29T17:45:43.123Z",
                "content": f"{prefix} request {j}: fix /srv/{prefix}/mod_{j}.py",
            }
        )
    return out


def _entry(i: int, events: list[dict[str, Any]]) -> ChunkEntry:
    return ChunkEntry(
        chunk_id=f"chunk_{i:04d}",
        created_at=f"2026-11-{1 + i % 28:02d}T10:00:00.000Z",
        event_count=len(events),
        first_event_id=str(events[0]["id"]),
        last_event_id=str(events[-1]["id"]),
        summary=f"## Goal\nchunk number {i} goal\n\n## Progress\n- item {i}\n",
        cut_meta={"first_kept_event_id": f"kept-{i}", "tokens_before": 1000 + i},
        extra={"summary_backend": "extractive"},
    )


def _fill(manager: MemoryManager, prefix: str, n: int) -> list[ChunkEntry]:
    entries = []
    for i in range(1, n + 1):
        events = _events(f"{prefix}{i}", 4)
        write_chunk_file(manager.paths, f"chunk_{i:04d}", events)
        entries.append(_entry(i, events))
    write_index(manager.paths, entries)
    return entries


@pytest.fixture(scope="module")
def long_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 archived sessions (closed by rotate) and an active session of 500 chunks."""
    root = tmp_path_factory.mktemp("long") / "memory"
    config = CompactionConfig()
    for a in range(N_ARCHIVES):
        manager = MemoryManager(root, config)
        manager.store.ensure_session()
        for event in _events(f"arch{a:02d}", 6 + a):
            manager.append(event)
        _fill(manager, f"a{a}c", 2 + a % 3)
        manager.rotate()
        manager.close()
    manager = MemoryManager(root, config)
    manager.store.ensure_session()
    _fill(manager, "c", N_CHUNKS)
    for event in _events("hot", 10):
        manager.append(event)
    manager.close()
    return root


# --- the cached index reader -------------------------------------------------------------


def _same(fast: IndexRead, slow: IndexRead) -> None:
    assert fast.entries == slow.entries
    assert fast.warnings == slow.warnings
    assert fast.exists == slow.exists


def test_cached_index_read_matches_core_on_a_long_index(long_root: Path) -> None:
    manager = MemoryManager(long_root, read_only=True)
    fast = read_index_shared(manager.paths)
    assert len(fast.entries) == N_CHUNKS
    _same(fast, read_index(manager.paths))
    head = read_index_head(manager.paths, 10)
    # The first call cached the whole index: the head is then left to the cached read.
    assert head is None


def test_header_count_and_cached_read_agree_with_core_on_a_damaged_index(tmp_path: Path) -> None:
    """The header's count, from core's catalog or from the `- chunk_id:` lines alone, and the
    cached read, are core's on a file with a duplicate and a bad id; a file that is not YAML
    raises core's own IndexCorruptError. (That core's scanner reads such files as the strict
    loader does is tests/unit/test_index_scan.py's business.)"""
    manager = MemoryManager(tmp_path / "m", CompactionConfig())
    manager.store.ensure_session()
    _fill(manager, "c", 3)
    index = manager.paths.index
    text = index.read_text(encoding="utf-8")
    index.write_text(
        text
        + text.split("chunks:\n", 1)[1].split("- chunk_id: chunk_0002")[0]
        + "- chunk_id: _bad\n  summary: x\n",
        encoding="utf-8",
    )
    assert chunk_count(manager.paths) == len(read_index(manager.paths).entries) == 3
    catalog_path(manager.paths).unlink(missing_ok=True)
    assert chunk_count(manager.paths) == 3
    _same(read_index_shared(manager.paths), read_index(manager.paths))
    assert len(read_index_shared(manager.paths).warnings) == 2
    head = read_index_head(manager.paths, 10)
    assert head is None  # cached by the read above: the page comes from it
    index.write_text(text + "- chunk_id: [unclosed\n", encoding="utf-8")
    with pytest.raises(IndexCorruptError) as fast:
        read_index_shared(manager.paths)
    with pytest.raises(IndexCorruptError) as slow:
        read_index(manager.paths)
    assert str(fast.value) == str(slow.value)


def test_first_page_is_the_first_entries_of_the_full_read(tmp_path: Path) -> None:
    manager = MemoryManager(tmp_path / "m", CompactionConfig())
    manager.store.ensure_session()
    entries = _fill(manager, "c", 30)
    head = read_index_head(manager.paths, 10)
    assert head == entries[:10]
    assert read_index_shared(manager.paths).entries == entries


def test_cached_index_read_follows_a_rewrite(tmp_path: Path) -> None:
    manager = MemoryManager(tmp_path / "m", CompactionConfig())
    manager.store.ensure_session()
    entries = _fill(manager, "c", 3)
    assert len(read_index_shared(manager.paths).entries) == 3
    write_index(manager.paths, entries[:2])
    assert [e.chunk_id for e in read_index_shared(manager.paths).entries] == [
        "chunk_0001",
        "chunk_0002",
    ]
    assert read_light_status(manager, include_archives=False).chunk_count == 2


# --- the archive listing ------------------------------------------------------------------


def test_archive_listing_matches_core(long_root: Path) -> None:
    manager = MemoryManager(long_root, read_only=True)
    light = list_archives_light(manager)
    core = manager.list_archives()
    assert len(light) == N_ARCHIVES
    assert [a.info for a in light] == core
    assert light[0].first_request.startswith("arch")


def test_archive_listing_cache_follows_a_change(long_root: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(long_root / "session_archive", root / "session_archive")
    manager = MemoryManager(root, read_only=True)
    first = list_archives_light(manager)[0]
    events = Path(first.info.path) / "events.jsonl"
    with events.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "late", "type": "assistant_output", "content": "late"}\n')
    again = list_archives_light(manager)[0]
    assert again.info.event_count == first.info.event_count + 1
    assert again.info.size_bytes > first.info.size_bytes


# --- the views ----------------------------------------------------------------------------


class Host(ViewHost):
    """One view, and a key f5 whose action counts presses (is the loop free?)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("f5", "count", "count", priority=True)]

    def __init__(self, view: Widget) -> None:
        super().__init__(view)
        self.presses = 0

    def action_count(self) -> None:
        self.presses += 1


def hold(
    monkeypatch: pytest.MonkeyPatch, module: Any, name: str
) -> tuple[threading.Event, list[int]]:
    """`module.name`, the view's read, made to wait for the returned gate (its calls counted),
    so the test decides when a read may end. The Chunks tab's first-page read is turned off:
    the whole index is what it waits for."""
    gate = threading.Event()
    calls: list[int] = []
    real = getattr(module, name)

    def held(*args: Any) -> Any:
        calls.append(1)
        assert gate.wait(timeout=30), f"the key was never handled while {name} ran"
        return real(*args)

    monkeypatch.setattr(module, name, held)
    if module is chunks_view_module:
        monkeypatch.setattr(chunks_view_module, "read_index_head", lambda paths, n: None)
    return gate, calls


async def rows_reach(app: App[None], pilot: Any, table: DataTable[Any], n: int) -> None:
    """Let workers and the batched fill run until the table holds n rows (bounded)."""
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if table.row_count >= n:
            return
    raise AssertionError(f"table stopped at {table.row_count} rows, wanted {n}")


def text_of(view: Widget, selector: str) -> str:
    return str(view.query_one(selector, Static).render())


async def test_chunks_tab_on_500_chunks_rows_and_details(
    long_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunks_view_module, "BATCH_ROWS", 64)  # the fill takes several batches
    view = ChunksView()
    view.manager = MemoryManager(long_root, read_only=True)
    app = Host(view)
    async with app.run_test(size=(120, 40)) as pilot:
        view.reload()
        table = view.query_one(DataTable)
        await rows_reach(app, pilot, table, N_CHUNKS)
        assert table.row_count == N_CHUNKS
        assert cells(table, 0)[:3] == ["chunk_0001", "active", "4"]
        assert cells(table, 0)[4] == "1,001→?"
        assert cells(table, 0)[6] == "extractive"
        last = cells(table, N_CHUNKS - 1)
        assert last[0] == "chunk_0500" and last[5] == "from kept-500"
        # A row deep in the table: its summary at once, its events and analysis from the worker.
        table.focus()
        table.move_cursor(row=411)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.selected_chunk_id == "chunk_0412"
        assert "chunk number 412 goal" in text_of(view, "#chunks-summary")
        assert "c412 request 0" in text_of(view, "#chunks-events")
        assert "compression" in text_of(view, "#chunks-analysis")


@pytest.mark.parametrize(
    ("view_class", "module", "read", "rows"),
    [
        (ChunksView, chunks_view_module, "read_index_shared", N_CHUNKS),
        (ArchiveView, archive_view_module, "list_archives_light", N_ARCHIVES),
    ],
    ids=["chunks", "archive"],
)
async def test_tab_fills_from_a_worker_while_keys_work(
    long_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    view_class: type[ChunksView | ArchiveView],
    module: Any,
    read: str,
    rows: int,
) -> None:
    """The tab's read is held until a key pressed meanwhile has run its action."""
    gate, _ = hold(monkeypatch, module, read)
    view = view_class()
    view.manager = MemoryManager(long_root, read_only=True)
    app = Host(view)
    async with app.run_test(size=(120, 40)) as pilot:
        view.reload()
        await pilot.press("f5")
        assert app.presses == 1
        table = view.query_one(DataTable)
        assert table.row_count == 0  # still loading
        gate.set()
        await rows_reach(app, pilot, table, rows)
        await pilot.press("f5")
        assert app.presses == 2


async def test_archive_tab_on_30_sessions_rows_filter_sort(long_root: Path) -> None:
    view = ArchiveView()
    manager = MemoryManager(long_root, read_only=True)
    view.manager = manager
    app = Host(view)
    async with app.run_test(size=(120, 40)) as pilot:
        view.reload()
        table = view.query_one(DataTable)
        await rows_reach(app, pilot, table, N_ARCHIVES)
        core = {info.session_id: info for info in manager.list_archives()}
        shown = {cells(table, r)[0]: cells(table, r) for r in range(table.row_count)}
        assert set(shown) == set(core)
        for sid, row in shown.items():
            assert row[3] == str(core[sid].event_count)
            assert row[4] == str(core[sid].chunk_count)
            assert row[5].startswith("arch") and "request 0" in row[5]
        # The filter matches a first request; t sorts by chunks, etc.
        view.query_one("#archive-filter", Input).value = "arch07"
        await pilot.pause()
        assert table.row_count == 1 and "arch07" in cells(table, 0)[5]
        view.query_one("#archive-filter", Input).value = ""
        await pilot.pause()
        view.sort_index = 3  # most events first
        view.action_sort()  # → most chunks first
        await pilot.pause()
        counts = [int(cells(table, r)[4]) for r in range(table.row_count)]
        assert counts == sorted(counts, reverse=True)


async def test_chunks_reload_asked_during_a_read_runs_once_after_it(
    long_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Changes arriving while a long read runs never cancel it (it would never land on a busy
    root); they make one more read after it."""
    gate, calls = hold(monkeypatch, chunks_view_module, "read_index_shared")
    view = ChunksView()
    view.manager = MemoryManager(long_root, read_only=True)
    app = Host(view)
    async with app.run_test(size=(120, 40)) as pilot:
        view.reload()
        view.reload()
        view.reload()
        gate.set()
        table = view.query_one(DataTable)
        await rows_reach(app, pilot, table, N_CHUNKS)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(calls) == 2
        assert table.row_count == N_CHUNKS
