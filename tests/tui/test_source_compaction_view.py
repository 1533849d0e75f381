"""The Chunks tab shows the source agent's own compaction beside the chunk this engine made
(inspector/tui/source_compaction.py, issue 23): their summary and sizes, ours, markup-safe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.index.chunk_files import read_chunk_events
from core.manager import MemoryManager
from core.tokens import estimate_event_tokens
from core.transcripts.importers import load_transcript
from core.transcripts.replay import replay
from inspector.tui.chunk_analysis import analyze_chunk
from inspector.tui.source_compaction import side_by_side_text, source_compactions
from inspector.tui.views.chunks_view import ChunkRow, analysis_text
from tests.helpers.cli import config_from_yaml
from tests.helpers.paths import TRANSCRIPTS

DATA = TRANSCRIPTS


def _marker(summary: str, **info: object) -> dict[str, Any]:
    meta = {"source_compaction": {"agent": "claude-code", "summary": summary, **info}}
    return {"type": "system_event", "role": "system", "content": "[compacted]", "meta": meta}


def test_no_marker_no_section() -> None:
    events = [{"type": "user_input", "role": "user", "content": "hi"}]
    assert side_by_side_text(events, "ours") is None


def test_their_summary_and_sizes_stand_beside_ours() -> None:
    events: list[dict[str, Any]] = [
        {"type": "user_input", "role": "user", "content": "x" * 400},
        _marker("They fixed [bold]dates[/bold]\x1b[31m", summary_tokens=9, tokens_before=17200),
        {"type": "user_input", "role": "user", "content": "next"},
    ]
    text = side_by_side_text(events, "our summary of the dates work")
    assert text is not None
    plain = text.plain
    assert "claude-code compacted itself here (event 1 of this chunk)" in plain
    assert "theirs      17,200 tok of context → summary 9 tok" in plain
    before = estimate_event_tokens(events[0])
    assert f"ours        {before:,} tok of this chunk's events before it → this chunk's" in plain
    assert "[bold]dates[/bold]" in plain  # shown as text, never as markup
    assert "\x1b" not in plain
    assert not any(
        span.style == "bold" and plain[span.start : span.end] == "dates" for span in text.spans
    )


def test_a_replayed_log_with_its_own_compaction_shows_it_in_our_chunk(tmp_path: Path) -> None:
    section = {
        "context_window": 3000,
        "reserve_tokens": 200,
        "keep_recent_tokens": 150,
        "count_compress_after_events": 12,
        "hot_window_events": 4,
    }
    config = config_from_yaml(tmp_path, **section)
    mm = MemoryManager(tmp_path / "m", config)
    try:
        replay(load_transcript(DATA / "claude_code_session.jsonl", "claude-code"), mm)
        # the session goes on after the log: a later pass compacts past the marker
        for i in range(3):
            mm.append({"type": "user_input", "role": "user", "content": f"more {i}"})
            mm.append({"type": "assistant_output", "role": "assistant", "content": "ok"})
        assert mm.save(force=True).compacted
        chunk_files = sorted(mm.paths.chunks_dir.glob("*.jsonl"))
        holding = []
        for path in chunk_files:
            events, _bad = read_chunk_events(mm.paths, path.stem)
            if source_compactions(list(events)):
                holding.append((path.stem, list(events)))
    finally:
        mm.close()
    assert holding, "the marker was compacted into one of our chunks"
    chunk_id, events = holding[0]
    row = ChunkRow(chunk_id, "active", len(events), None, None, None, False, None, None, "ours")
    row.events = events
    shown = analysis_text(row, analyze_chunk(events, "ours", None)).plain
    assert "claude-code compacted itself here" in shown
    assert "This session is being continued" in shown


async def test_the_chunks_tab_shows_their_summary_beside_ours(tmp_path: Path) -> None:
    from textual.widgets import Static

    from core.index.catalog import write_index
    from core.index.chunk_files import write_chunk_file
    from core.index.format import ChunkEntry
    from inspector.tui.views.chunks_view import ChunksView
    from tests.helpers.tui import loaded, static_text

    mm = MemoryManager(tmp_path / "m")
    events: list[dict[str, Any]] = [
        {"id": "e1", "type": "user_input", "role": "user", "content": "fix the leap day"},
        {"id": "e2", **_marker("Claude's own summary: leap day fixed", summary_tokens=9)},
        {"id": "e3", "type": "user_input", "role": "user", "content": "run the tests"},
    ]
    ours = "Request: fix the leap day"
    entry = ChunkEntry("chunk_0001", "2026-12-01T10:00:00Z", 3, "e1", "e3", ours, None, {})
    try:
        mm.store.ensure_session()
        with mm.store.lock():
            write_chunk_file(mm.paths, "chunk_0001", events)
            write_index(mm.paths, [entry])
        view = ChunksView()
        async with loaded(view, mm, (120, 50)):
            text = static_text(view.query_one("#chunks-analysis", Static))
    finally:
        mm.close()
    assert "claude-code compacted itself here (event 1 of this chunk)" in text
    assert "theirs      summary 9 tok" in text
    assert "│ Claude's own summary: leap day fixed" in text
