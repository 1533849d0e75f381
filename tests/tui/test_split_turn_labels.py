"""Split-turn labels name the turn's own request, and where it lives (issue 22 items 2, 3):
the cut preview's `^`, the plan panel, the Chunks detail's "turn start", the Chunks tab's
before → after in red for a pass that grew the prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from core.config import CompactionConfig
from core.index.catalog import read_catalog
from core.index.format import ChunkEntry
from core.manager import MemoryManager
from inspector.tui.hot_window_model import HotWindowModel, plan_now, read_light_status
from inspector.tui.views.chunks_view import grew_the_prompt, row_from_entry, turn_start_text
from inspector.tui.widgets.hot_window import turn_start_tag
from inspector.tui.widgets.plan_panel import split_turn_label
from tests.helpers.memory import read_file_pair

CONFIG = CompactionConfig(keep_recent_tokens=300, count_compress_after_events=10_000)


def _pair(n: int) -> list[dict[str, Any]]:
    return read_file_pair(n, f"src/handlers/h{n}.py", "def handle(): return 1 " * 12)


def _three_passes_in_one_turn(tmp_path: Path) -> tuple[MemoryManager, str]:
    mm = MemoryManager(tmp_path / "m", CONFIG)
    mm.begin_run("first: say hello")
    mm.append({"type": "assistant_output", "role": "assistant", "content": "hello"})
    request = mm.begin_run("REQ-C-4410: rename every handler")["id"]
    for p in range(3):
        mm.append_many([e for n in range(8 * p, 8 * p + 8) for e in _pair(n)])
        assert mm.save(force=True).is_split_turn
    mm.append_many([e for n in range(24, 32) for e in _pair(n)])
    return mm, request


def test_the_cut_preview_names_the_chunk_that_holds_a_continued_turns_request(
    tmp_path: Path,
) -> None:
    mm, request = _three_passes_in_one_turn(tmp_path)
    first_chunk = read_catalog(mm.paths).entries[0].chunk_id
    snapshot = HotWindowModel(mm.paths.events).poll().snapshot
    status = read_light_status(mm, include_archives=False)

    def entry_extra(chunk_id: str) -> dict[str, Any] | None:
        return read_catalog(mm.paths).entry_extra(chunk_id)

    now = plan_now(snapshot, status, CONFIG, CONFIG, entry_extra=entry_extra)
    plan = now.preview.plan
    assert plan.is_split_turn and plan.turn_continued
    assert plan.turn_start_event_id == request, "the light events carry the synthetic's meta"
    assert plan.turn_start_chunk_id == first_chunk
    assert now.preview.turn_start_row == 1, "`^` on the synthetic event, not the pinned root"
    assert turn_start_tag(plan) == f"turn start: its request is in chunk {first_chunk} · "
    label = split_turn_label(plan)
    assert f"its request is in chunk {first_chunk}" in label and "REQ-C-4410" in label


def test_the_chunks_detail_says_where_the_turn_start_is(tmp_path: Path) -> None:
    mm, request = _three_passes_in_one_turn(tmp_path)
    data = yaml.safe_load(mm.paths.index.read_text(encoding="utf-8"))
    rows = [row_from_entry(ChunkEntry.from_dict(e, "index.yaml")) for e in data["chunks"]]
    first = rows[0].chunk_id
    assert turn_start_text(rows[0]) == f"{request} (its request is in this chunk)"
    for row in rows[1:]:
        assert turn_start_text(row) == (
            f"{request} (its request is in chunk {first}; this chunk continues that turn)"
        )


def test_a_split_of_the_root_turn_says_the_request_stays_in_the_hot_window(
    tmp_path: Path,
) -> None:
    mm = MemoryManager(tmp_path / "m", CONFIG)
    mm.begin_run("REQ-ROOT: tidy the handlers")
    mm.append_many([e for n in range(8) for e in _pair(n)])
    assert mm.save(force=True).is_split_turn
    entry = yaml.safe_load(mm.paths.index.read_text(encoding="utf-8"))["chunks"][0]
    row = row_from_entry(ChunkEntry.from_dict(entry, "index.yaml"))
    assert "the pinned root" in turn_start_text(row)


def test_a_pass_that_grew_the_prompt_is_marked() -> None:
    base: dict[str, Any] = {
        "chunk_id": "chunk_0001",
        "created_at": "2026-12-01T00:00:00Z",
        "event_count": 1,
        "first_event_id": "a",
        "last_event_id": "a",
        "summary": "Goal:\n- x",
    }
    shrank = row_from_entry(
        ChunkEntry.from_dict(
            {**base, "cut_meta": {"tokens_before": 900, "kept_tokens_estimate": 100}}, "x"
        )
    )
    grew = row_from_entry(
        ChunkEntry.from_dict(
            {**base, "cut_meta": {"tokens_before": 300, "kept_tokens_estimate": 299}}, "x"
        )
    )
    assert not grew_the_prompt(shrank)
    assert grew_the_prompt(grew)
