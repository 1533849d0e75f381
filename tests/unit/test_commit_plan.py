"""The pure commit of a pass (core.compaction.commit_plan.build_commit), tested like the planner: on
hand-built streams and an index held in a list, with no file behind any of it."""

from __future__ import annotations

import builtins
import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from core.compaction.commit_plan import (
    SYNTHETIC_KIND,
    ArchiveFacts,
    ChunkSummaries,
    CommitInputs,
    CommitPlan,
    IndexView,
    build_commit,
)
from core.compaction.planner import CompactionPlan, plan_compaction
from core.compaction.summaries import FoldStat, archive_entry_bytes, fold_stat, render_summary
from core.config import CompactionConfig
from core.events import Event
from core.index.catalog import read_catalog
from core.index.format import ChunkEntry, entry_digest, entry_text, render_index
from core.store.paths import MemoryPaths
from core.summarizer import split_turn_summary
from core.tokens import estimate_event_tokens, estimate_tokens

NOW = "2026-11-30T20:00:00.000000Z"


def ev(i: int, etype: str, **extra: Any) -> Event:
    role = {"user_input": "user", "tool_result": "tool", "system_event": "system"}
    event: Event = {
        "id": f"ev_{i:03d}",
        "type": etype,
        "role": role.get(etype, "assistant"),
        "content": f"{etype} {i}: fix error E{i} in src/mod_{i}.py",
    }
    event.update(extra)
    return event


def turn(start: int, tools: int) -> list[Event]:
    """A user turn: the request, `tools` tool call/result pairs, the answer."""
    out = [ev(start, "user_input")]
    for k in range(tools):
        cid = f"call_{start}_{k}"
        out.append(ev(start + 1 + 2 * k, "tool_call", name="bash", tool_call_id=cid))
        out.append(ev(start + 2 + 2 * k, "tool_result", tool_call_id=cid))
    out.append(ev(start + 1 + 2 * tools, "assistant_output"))
    return out


@dataclass
class Snap:
    """A snapshot with no file: `lines` (when given) are the events' stored lines."""

    events: list[Event]
    lines: list[bytes] | None = None
    tokens: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tokens = [estimate_event_tokens(e) for e in self.events]

    def lines_of(self, indices: Sequence[int]) -> bytes | None:
        if self.lines is None:
            return None
        return b"".join(self.lines[i] for i in indices)


@dataclass
class ListedIndex:
    """An index held in a list (what core.index.catalog.Catalog reads from index.yaml)."""

    items: list[ChunkEntry]
    appendable: bool = True
    size: int = 4096

    @property
    def entries(self) -> list[ChunkEntry]:
        return self.items

    def __len__(self) -> int:
        return len(self.items)

    def summary(self, i: int) -> str:
        return self.items[i].summary

    def chunk_entry(self, i: int) -> ChunkEntry:
        return self.items[i]

    def next_fold(self, entry: ChunkEntry) -> FoldStat:
        previous = None
        if self.items:
            last = self.items[-1]
            previous = fold_stat(last.chunk_id, last.summary, None).last_request
        return fold_stat(entry.chunk_id, entry.summary, previous)

    def summary_md(
        self,
        *,
        summary_max_chunks: int,
        max_rolling_summary_lines: int,
        max_summary_tokens: int | None,
        extra: tuple[ChunkEntry, FoldStat] | None = None,
    ) -> str:
        chunks = [*self.items, *([extra[0]] if extra else [])]
        return render_summary(
            [(e.chunk_id, e.summary) for e in chunks],
            summary_max_chunks=summary_max_chunks,
            max_rolling_summary_lines=max_rolling_summary_lines,
            max_summary_tokens=max_summary_tokens,
        ).summary_md


def old_chunks(n: int) -> list[ChunkEntry]:
    return [
        ChunkEntry(
            chunk_id=f"chunk_{i:04d}",
            created_at="2026-11-30T19:00:00Z",
            event_count=3,
            first_event_id=f"old_{i}_a",
            last_event_id=f"old_{i}_c",
            summary=f"Request: fix the parser, step {i}\nOutcome: step {i} done in src/p{i}.py",
        )
        for i in range(1, n + 1)
    ]


CONFIG = CompactionConfig(keep_recent_tokens=10**6, hot_window_events=4, summary_max_chunks=3)
SUMMARIES = ChunkSummaries("Request: fix E1\nOutcome: fixed", None, "extractive")


def commit_for(
    events: list[Event],
    *,
    index: ListedIndex | None = None,
    summaries: ChunkSummaries = SUMMARIES,
    archive: ArchiveFacts | None = None,
    config: CompactionConfig = CONFIG,
    snap: Snap | None = None,
) -> tuple[CompactionPlan, CommitPlan]:
    plan = plan_compaction(events, config)
    assert plan.useful, plan.reason
    listed = index if index is not None else ListedIndex(old_chunks(1))
    commit = build_commit(
        CommitInputs(
            plan=plan,
            snapshot=snap or Snap(events),
            summaries=summaries,
            index=listed,
            chunk_id="chunk_0009",
            index_size=listed.size,
            archive=archive or ArchiveFacts(),
            pending_meta={"session_id": "s1", "state": "in_flight", "path": plan.path},
            trigger="count",
            now=NOW,
            synthetic_id="ev_synthetic",
        ),
        config,
    )
    return plan, commit


def hot_ids(commit: CommitPlan) -> list[str]:
    return [json.loads(line)["id"] for line in commit.hot_window.splitlines()]


def test_pinned_root_opens_the_hot_window_and_stays_out_of_the_chunk() -> None:
    events = turn(0, 2) + turn(10, 2)  # count path: keeps the last 6, the second turn
    config = CompactionConfig(keep_recent_tokens=10**6, hot_window_events=6)
    plan, commit = commit_for(events, config=config)
    assert plan.pinned_root_index == 0 and not plan.is_split_turn
    assert commit.head == (events[0],) and commit.synthetic_event is None
    assert [e["id"] for e in commit.compacted] == [e["id"] for e in events[1 : plan.cut_index]]
    assert commit.entry.first_event_id == events[1]["id"]
    assert commit.entry.event_count == len(plan.compacted_indices())
    assert hot_ids(commit) == [events[i]["id"] for i in plan.kept_indices()]
    assert commit.kept_count(()) == len(plan.kept_indices())


def test_split_turn_gets_the_synthetic_event_after_the_pinned_root() -> None:
    events = turn(0, 1) + turn(10, 6)  # the last 4 events lie inside the second turn
    prefix = "Request: fix E10\nDone so far: ran bash"
    summaries = ChunkSummaries(split_turn_summary("Request: fix E0", prefix), prefix, "extractive")
    plan, commit = commit_for(events, summaries=summaries)
    assert plan.is_split_turn and plan.pinned_root_index == 0
    synthetic = commit.synthetic_event
    assert synthetic is not None
    assert synthetic["content"] == prefix and synthetic["id"] == "ev_synthetic"
    assert synthetic["meta"] == {
        "synthetic": SYNTHETIC_KIND,
        "chunk_id": "chunk_0009",
        "turn_start_event_id": "ev_010",  # contract §2, added 2026-12-01
    }
    assert commit.head == (events[0], synthetic)
    assert cut(plan) > 0
    assert hot_ids(commit) == [
        events[0]["id"],
        "ev_synthetic",
        *(e["id"] for e in events[cut(plan) :]),
    ]
    assert commit.entry.summary == summaries.summary
    assert commit.kept_count(()) == len(plan.kept_indices()) + 1  # the synthetic event
    assert any("split turn" in note for note in commit.notes)


def cut(plan: CompactionPlan) -> int:
    assert plan.cut_index is not None
    return plan.cut_index


@pytest.mark.parametrize("hot", [2, 3, 4, 5, 6, 8, 11])
def test_the_entry_cut_meta_agrees_with_the_plan(hot: int) -> None:
    events = turn(0, 1) + turn(10, 3) + turn(20, 4)
    config = CompactionConfig(keep_recent_tokens=10**6, hot_window_events=hot)
    plan = plan_compaction(events, config)
    assert plan.useful
    prefix = "Turn so far" if plan.is_split_turn else None
    _, commit = commit_for(
        events, config=config, summaries=ChunkSummaries("summary", prefix, "extractive")
    )
    tokens = [estimate_event_tokens(e) for e in events]
    retained = sum(estimate_event_tokens(e) for e in commit.head) + sum(tokens[cut(plan) :])
    expected: dict[str, Any] = {
        "first_kept_event_id": plan.first_kept_event_id,
        "tokens_before": plan.tokens_before,
        "kept_tokens_estimate": retained,
    }
    if plan.is_split_turn:
        expected |= {"is_split_turn": True, "turn_start_event_id": plan.turn_start_event_id}
    assert commit.entry.cut_meta == expected
    assert commit.retained_tokens == retained
    expected_extra: dict[str, Any] = {
        "summary_backend": "extractive",
        "path": plan.path,
        "trigger": "count",
    }
    if plan.is_split_turn:
        # the chunk that holds the turn's user_input from now on (issue 22 item 2); null: the
        # pinned root, which stays in the hot window
        pinned = plan.turn_start_index == plan.pinned_root_index
        expected_extra["turn_start_chunk_id"] = None if pinned else commit.chunk_id
    assert commit.entry.extra == expected_extra
    compacted_ids = [events[i]["id"] for i in plan.compacted_indices()]
    assert (commit.entry.first_event_id, commit.entry.last_event_id) == (
        compacted_ids[0],
        compacted_ids[-1],
    )
    # Nothing lost, nothing doubled: chunk + hot window hold each event once.
    kept = [i for i in hot_ids(commit) if i != "ev_synthetic"]
    assert sorted([*compacted_ids, *kept]) == sorted(e["id"] for e in events)


def test_retained_lines_are_copied_verbatim_and_the_head_serialized() -> None:
    events = turn(0, 2) + turn(10, 2)
    lines = [(json.dumps(e, indent=None) + "  \n").encode() for e in events]  # not our layout
    plan, commit = commit_for(events, snap=Snap(events, lines))
    head = json.loads(commit.hot_window.splitlines()[0])
    assert head == events[0]
    assert commit.hot_window.endswith(b"".join(lines[cut(plan) :]))


def test_the_state_figure_counts_hot_window_summary_and_carried_events() -> None:
    events = turn(0, 2) + turn(10, 2)
    _, commit = commit_for(events)
    carried = [ev(90, "user_input"), ev(91, "assistant_output")]
    assert commit.anchor_event_id(()) == events[-1]["id"]
    assert commit.anchor_event_id(carried) == "ev_091"
    assert commit.kept_count(carried) == commit.kept_count(()) + 2
    assert commit.prompt_estimate(carried) == (
        commit.retained_tokens
        + sum(estimate_event_tokens(e) for e in carried)
        + estimate_tokens(commit.summary_md)
    )


def test_an_appendable_index_gets_the_entry_appended_and_recorded_in_the_sidecar() -> None:
    index = ListedIndex(old_chunks(2), size=777)
    _, commit = commit_for(turn(0, 2) + turn(10, 2), index=index)
    assert commit.index_text is None
    spec = {
        "offset": 777,
        "length": len(entry_text(commit.entry)),
        "digest": entry_digest(commit.entry),
    }
    assert commit.index_append == spec
    meta = commit.pending_meta
    assert meta["index_append"] == spec
    assert meta["state"] == "committing" and meta["session_id"] == "s1"
    assert meta["chunk_id"] == "chunk_0009" and meta["summary"] == SUMMARIES.summary
    assert meta["entry"] == commit.entry.to_dict()
    assert any("appended in place at byte 777" in note for note in commit.notes)


@pytest.mark.parametrize(
    ("index", "size", "why"),
    [
        (ListedIndex([], size=0), 0, "the first chunk"),
        (ListedIndex(old_chunks(2), appendable=False), 4096, "not in the writer's layout"),
        (ListedIndex(old_chunks(2)), 5000, "5,000 bytes, not the 4,096"),
    ],
)
def test_otherwise_index_and_summaries_are_rendered_whole(
    index: ListedIndex, size: int, why: str
) -> None:
    events = turn(0, 2) + turn(10, 2)
    plan = plan_compaction(events, CONFIG)
    commit = build_commit(
        CommitInputs(
            plan=plan,
            snapshot=Snap(events),
            summaries=SUMMARIES,
            index=index,
            chunk_id="chunk_0009",
            index_size=size,
            archive=ArchiveFacts(exists=True),
            pending_meta={},
            now=NOW,
        ),
        CONFIG,
    )
    entries = [*index.items, commit.entry]
    assert commit.index_text == render_index(entries).encode()
    assert commit.index_append is None and "index_append" not in commit.pending_meta
    rendered = render_summary(
        [(e.chunk_id, e.summary) for e in entries],
        summary_max_chunks=CONFIG.summary_max_chunks,
        max_rolling_summary_lines=CONFIG.max_rolling_summary_lines,
        max_summary_tokens=CONFIG.summarizer.max_summary_tokens,
    )
    assert commit.summary_md == rendered.summary_md
    assert commit.archive == rendered.archive_md.encode()
    assert any(why in note for note in commit.notes), commit.notes


@pytest.mark.parametrize("holds", [True, False])
def test_summaries_stay_bounded_and_the_pushed_chunk_goes_to_the_archive(holds: bool) -> None:
    config = CompactionConfig(
        keep_recent_tokens=10**6,
        hot_window_events=4,
        summary_max_chunks=3,
        max_rolling_summary_lines=5,
    )
    index = ListedIndex(old_chunks(30))
    _, commit = commit_for(
        turn(0, 2) + turn(10, 2),
        index=index,
        config=config,
        archive=ArchiveFacts(exists=True, nonempty=True, holds_before_pushed=holds),
    )
    recent = commit.summary_md.split("## Recent Chunks", 1)[1]
    assert recent.count("- **chunk_") == 3  # summary_max_chunks, the new chunk last
    assert "- **chunk_0009**" in recent and "- **chunk_0029**" in recent
    rolling = commit.summary_md.split("## Rolling Summary", 1)[1].split("## Recent Chunks")[0]
    assert len([line for line in rolling.splitlines() if line.strip()]) <= 5
    pushed = archive_entry_bytes("chunk_0028", index.summary(27), first=False)
    if holds:
        assert commit.archive_append == pushed and commit.archive is None
    else:
        whole = render_summary(
            [(e.chunk_id, e.summary) for e in [*index.items, commit.entry]],
            summary_max_chunks=3,
            max_rolling_summary_lines=5,
            max_summary_tokens=config.summarizer.max_summary_tokens,
        ).archive_md
        assert commit.archive == whole.encode() and commit.archive_append is None


def test_an_archive_of_chunks_still_recent_is_emptied() -> None:
    _, commit = commit_for(turn(0, 2) + turn(10, 2), archive=ArchiveFacts(nonempty=True))
    assert commit.archive == b""
    _, untouched = commit_for(turn(0, 2) + turn(10, 2))
    assert untouched.archive is None and untouched.archive_append is None


def _refuse(*args: object, **kwargs: object) -> Any:
    raise AssertionError(f"I/O in build_commit: {args!r}")


@contextlib.contextmanager
def no_io() -> Iterator[None]:
    """Any file access inside fails the test."""
    with pytest.MonkeyPatch.context() as mp:
        for name in ("open", "stat", "lstat", "listdir", "scandir", "replace", "link", "unlink"):
            mp.setattr(os, name, _refuse)
        mp.setattr(builtins, "open", _refuse)
        mp.setattr(Path, "exists", _refuse)
        yield


def first_commit(plan: CompactionPlan, snap: Snap, index: IndexView | None = None) -> CommitPlan:
    """The commit of a session's first chunk (an empty index unless `index` is given)."""
    return build_commit(
        CommitInputs(
            plan=plan,
            snapshot=snap,
            summaries=SUMMARIES,
            index=ListedIndex([]) if index is None else index,
            chunk_id="chunk_0001",
            index_size=0,
            archive=ArchiveFacts(),
            pending_meta={},
        ),
        CONFIG,
    )


def test_no_io_with_a_catalog_of_paths_that_do_not_exist(tmp_path: Path) -> None:
    catalog = read_catalog(MemoryPaths(tmp_path / "nowhere"), write=False)
    assert not (tmp_path / "nowhere").exists()
    events = turn(0, 2) + turn(10, 2)
    plan = plan_compaction(events, CONFIG)
    with no_io():
        commit = first_commit(plan, Snap(events), catalog)
    assert commit.index_text == render_index([commit.entry]).encode()
    assert "- **chunk_0001**" in commit.summary_md
    assert not (tmp_path / "nowhere").exists()


def test_no_io_when_appending_either() -> None:
    with no_io():
        _, commit = commit_for(turn(0, 2) + turn(10, 2), index=ListedIndex(old_chunks(12)))
    assert commit.index_append is not None and commit.archive_append is None


def test_a_plan_without_a_cut_or_for_other_events_is_refused() -> None:
    events = turn(0, 1)
    useless = plan_compaction(events, CompactionConfig(keep_recent_tokens=10**6))
    assert not useless.useful
    with pytest.raises(ValueError, match="without a cut"):
        first_commit(useless, Snap(events))
    longer = turn(0, 2) + turn(10, 2)
    plan = plan_compaction(longer, CONFIG)
    with pytest.raises(ValueError, match="made for"):
        first_commit(plan, Snap(longer[:-1]))
