"""core.index: index.yaml, chunk files and pending evidence, including hostile inputs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from core.errors import ChunkIdError, IndexCorruptError, StoreError
from core.index.catalog import write_index
from core.index.chunk_files import list_chunk_files, read_chunk_events, write_chunk_file
from core.index.format import ChunkEntry, next_chunk_id
from core.index.pending import delete_pending, list_pending, new_pending_id, write_pending
from core.index.reader import read_index
from core.store.paths import MemoryPaths, validate_chunk_id
from tests.helpers.hostile import HOSTILE_IDS


@pytest.fixture
def paths(tmp_path: Path) -> MemoryPaths:
    p = MemoryPaths(tmp_path / "m")
    p.session.mkdir(parents=True)
    return p


def _entry(cid: str = "chunk_0001", **kw: object) -> ChunkEntry:
    base: dict[str, object] = {
        "chunk_id": cid,
        "created_at": "2026-11-29T17:45:43Z",
        "event_count": 3,
        "first_event_id": "e1",
        "last_event_id": "e3",
        "summary": "one line",
    }
    base.update(kw)
    return ChunkEntry(**base)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- entries


def test_entry_dict_has_contract_order_and_omits_empty_cut_meta() -> None:
    entry = _entry(
        cut_meta={
            "turn_start_event_id": "",
            "is_split_turn": False,
            "kept_tokens_estimate": 19876,
            "tokens_before": 51234,
            "first_kept_event_id": "e4",
        },
        extra={"summary_backend": "extractive", "source_pending_id": "pending-x"},
    )
    d = entry.to_dict()
    assert list(d) == [
        "chunk_id",
        "created_at",
        "event_count",
        "first_event_id",
        "last_event_id",
        "summary",
        "cut_meta",
        "summary_backend",
        "source_pending_id",
    ]
    assert list(d["cut_meta"]) == ["first_kept_event_id", "tokens_before", "kept_tokens_estimate"]
    assert "cut_meta" not in _entry(cut_meta={"is_split_turn": False}).to_dict()
    assert "cut_meta" not in _entry().to_dict()


def test_entry_from_dict_fills_defaults_and_keeps_extra() -> None:
    entry = ChunkEntry.from_dict({"chunk_id": "c1", "summary_backend": "openai"}, "x")
    assert (entry.event_count, entry.summary, entry.first_event_id) == (0, "", None)
    assert entry.cut_meta is None and entry.extra == {"summary_backend": "openai"}
    with pytest.raises(ChunkIdError, match="x: invalid chunk id"):
        ChunkEntry.from_dict({"chunk_id": "../etc"}, "x")
    with pytest.raises(StoreError, match="must be a mapping"):
        ChunkEntry.from_dict(["chunk_id"], "x")


# --------------------------------------------------------------------------- index.yaml


def test_index_round_trip_with_multiline_unicode_summary(paths: MemoryPaths) -> None:
    entries = [
        _entry(
            summary="第一行 summary\n- item two\nlast: colon",
            cut_meta={"first_kept_event_id": "e4", "is_split_turn": True},
            extra={"summary_backend": "extractive-fallback"},
        ),
        _entry("pending-20261129T1-abc", summary="plain"),
    ]
    write_index(paths, entries)
    text = paths.index.read_text("utf-8")
    assert text.startswith("version: 1\nchunks:\n")
    assert "第一行" in text  # allow_unicode: readable, not escaped
    assert "summary: |" in text
    assert "created_at: '2026-11-29T17:45:43Z'" in text  # stays a string, not a timestamp
    result = read_index(paths)
    assert result.entries == entries and result.warnings == [] and result.exists


def test_index_read_tolerates_missing_empty_and_comment_only(paths: MemoryPaths) -> None:
    assert read_index(paths).entries == [] and not read_index(paths).exists
    paths.chunks_dir.mkdir()
    paths.index.write_bytes(b"")
    assert read_index(paths).entries == []
    paths.index.write_bytes(b"# nothing yet\n")
    assert read_index(paths).entries == []
    paths.index.write_bytes(b"version: 1\nchunks:\n")
    assert read_index(paths).entries == []


def test_unquoted_yaml_timestamp_is_read_back_as_text(paths: MemoryPaths) -> None:
    paths.chunks_dir.mkdir()
    paths.index.write_text("chunks:\n  - chunk_id: c1\n    created_at: 2026-11-29T17:45:43Z\n")
    assert read_index(paths).entries[0].created_at == "2026-11-29T17:45:43Z"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"version: 1\nchunks:\n  - chunk_id: a\n   bad: indent\n", r"not valid YAML at line 4"),
        (b"chunks: [unclosed\n", r"not valid YAML at line 2"),
        (b"- just\n- a list\n", r"not a mapping"),
        (b"plain text\n", r"not a mapping"),
        (b"version: 1\nchunks: {chunk_id: a}\n", r"`chunks` is not a list"),
        (b"chunks: \xff\xfe\n", r"not valid YAML"),
    ],
)
def test_unusable_index_is_one_clear_error(
    paths: MemoryPaths, content: bytes, expected: str
) -> None:
    paths.chunks_dir.mkdir()
    paths.index.write_bytes(content)
    with pytest.raises(IndexCorruptError, match=expected) as info:
        read_index(paths)
    message = str(info.value)
    assert message.startswith(str(paths.index)) and "\n" not in message
    assert message.endswith("run `session-inspector repair`")


def test_python_tags_in_the_index_are_refused_and_never_run(
    paths: MemoryPaths, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    paths.chunks_dir.mkdir()
    paths.index.write_text(
        f"version: 1\nchunks:\n  - chunk_id: !!python/object/apply:os.system ['touch {marker}']\n"
    )
    with pytest.raises(IndexCorruptError, match="not valid YAML at line 3"):
        read_index(paths)
    assert not marker.exists()


def test_bad_entries_are_skipped_with_warnings(paths: MemoryPaths) -> None:
    paths.chunks_dir.mkdir()
    doc = {
        "version": 1,
        "chunks": [
            {"chunk_id": "chunk_0001", "summary": "good"},
            "not a mapping",
            {"chunk_id": "../../etc/passwd"},
            {"chunk_id": ".hidden"},
            {"summary": "no id"},
            {"chunk_id": 7},
            {"chunk_id": "chunk_0001", "summary": "duplicate"},
            {"chunk_id": "chunk_0002", "event_count": "many"},
        ],
    }
    paths.index.write_text(yaml.safe_dump(doc))
    result = read_index(paths)
    assert [e.chunk_id for e in result.entries] == ["chunk_0001", "chunk_0002"]
    assert result.entries[0].summary == "good"
    assert result.entries[1].event_count == 0
    assert len(result.warnings) == 6
    assert all(str(paths.index) in w for w in result.warnings)


def test_writing_an_invalid_id_is_an_error_and_keeps_the_old_index(paths: MemoryPaths) -> None:
    write_index(paths, [_entry()])
    before = paths.index.read_bytes()
    with pytest.raises(ChunkIdError):
        write_index(paths, [_entry(), _entry("../escape")])
    assert paths.index.read_bytes() == before


# --------------------------------------------------------------------------- chunk files


def test_chunk_file_round_trip_and_truncation(paths: MemoryPaths) -> None:
    events = [{"id": f"e{i}", "type": "assistant_output", "content": f"内容 {i}"} for i in range(3)]
    path = write_chunk_file(paths, "chunk_0001", events)
    assert path == paths.chunk_file("chunk_0001")
    assert read_chunk_events(paths, "chunk_0001") == (events, [])
    data = path.read_bytes()
    path.write_bytes(data[:-7])  # a torn last line
    good, corrupt = read_chunk_events(paths, "chunk_0001")
    assert good == events[:2]
    assert len(corrupt) == 1 and corrupt[0].line_no == 3


def test_chunk_files_are_scrubbed_like_every_persistence_boundary(paths: MemoryPaths) -> None:
    shot = {"id": "s", "type": "tool_result", "name": "screenshot", "content": {"data": "AAAA"}}
    write_chunk_file(paths, "chunk_0001", [shot])
    (stored,), _ = read_chunk_events(paths, "chunk_0001")
    assert "data" not in stored["content"] and stored["meta"]["scrubbed"] is True


def test_missing_chunk_file_is_a_store_error(paths: MemoryPaths) -> None:
    with pytest.raises(StoreError, match=r"missing file .*chunk_0009\.jsonl"):
        read_chunk_events(paths, "chunk_0009")


@pytest.mark.parametrize("cid", HOSTILE_IDS, ids=lambda c: repr(c)[:20])
def test_hostile_chunk_ids_open_nothing(paths: MemoryPaths, tmp_path: Path, cid: object) -> None:
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    with pytest.raises(ChunkIdError):
        write_chunk_file(paths, cid, [{"type": "x"}])  # type: ignore[arg-type]
    with pytest.raises(ChunkIdError):
        read_chunk_events(paths, cid)  # type: ignore[arg-type]
    with pytest.raises(ChunkIdError):
        write_pending(paths, cid, [], {})  # type: ignore[arg-type]
    with pytest.raises(ChunkIdError):
        delete_pending(paths, cid)  # type: ignore[arg-type]
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_next_chunk_id() -> None:
    assert next_chunk_id([]) == "chunk_0001"
    assert next_chunk_id(["chunk_0001", "chunk_0007", "pending-x", "chunk_x"]) == "chunk_0008"
    assert next_chunk_id(["chunk_9999"]) == "chunk_10000"
    assert next_chunk_id(["legacy_chunk_0042"]) == "chunk_0001"


def test_list_chunk_files_skips_what_is_not_a_chunk(paths: MemoryPaths) -> None:
    assert list_chunk_files(paths) == []
    write_chunk_file(paths, "chunk_0002", [])
    write_chunk_file(paths, "chunk_0001", [])
    folder = paths.chunks_dir
    (folder / ".chunk_0003.jsonl.abc.tmp").write_text("")
    (folder / "bad name.jsonl").write_text("")
    (folder / "notes.txt").write_text("")
    (folder / "dir.jsonl").mkdir()
    write_index(paths, [])
    warnings: list[str] = []
    assert list_chunk_files(paths, warnings) == ["chunk_0001", "chunk_0002"]
    assert len(warnings) == 1 and "bad name.jsonl" in warnings[0]


# --------------------------------------------------------------------------- pending evidence


def test_pending_ids_sort_by_time_and_are_valid() -> None:
    ids = [new_pending_id() for _ in range(50)]
    assert len(set(ids)) == 50
    assert all(i.startswith("pending-") and validate_chunk_id(i) == i for i in ids)
    stamps = [i.split("-")[1] for i in ids]
    assert stamps == sorted(stamps)


def test_pending_write_list_delete(paths: MemoryPaths) -> None:
    events = [{"id": "e1", "type": "user_input", "content": "q"}]
    meta = {"summary": "s", "cut": {"first_kept_event_id": "e2"}}
    write_pending(paths, "pending-b", events, meta)
    write_pending(paths, "pending-a", [], {})
    listed = list_pending(paths)
    assert [p.pending_id for p in listed] == ["pending-a", "pending-b"]
    assert listed[1].events == events and listed[1].meta == meta and listed[1].corrupt == []
    assert json.loads(paths.pending_meta_file("pending-b").read_text()) == meta
    delete_pending(paths, "pending-b")
    delete_pending(paths, "pending-b")  # already gone: fine
    assert [p.pending_id for p in list_pending(paths)] == ["pending-a"]
    assert not paths.pending_meta_file("pending-b").exists()


def test_pending_without_or_with_bad_meta_is_still_listed(paths: MemoryPaths) -> None:
    write_pending(paths, "pending-1", [{"id": "x", "type": "user_input"}], {"k": 1})
    write_pending(paths, "pending-2", [{"id": "y", "type": "user_input"}], {"k": 2})
    os.remove(paths.pending_meta_file("pending-1"))
    paths.pending_meta_file("pending-2").write_text("{torn")
    (paths.pending_dir / ".bad.jsonl").write_text("")
    (paths.pending_dir / "white space.jsonl").write_text("")
    with open(paths.pending_file("pending-2"), "ab") as fh:
        fh.write(b'{"id":"z"')
    warnings: list[str] = []
    listed = list_pending(paths, warnings)
    assert [(p.pending_id, p.meta) for p in listed] == [("pending-1", {}), ("pending-2", {})]
    assert len(listed[1].corrupt) == 1 and listed[1].events == [{"id": "y", "type": "user_input"}]
    assert any("white space.jsonl" in w for w in warnings)
    assert any("pending-2.meta.json" in w for w in warnings)


def test_pending_listing_of_a_missing_folder_is_empty(paths: MemoryPaths) -> None:
    assert list_pending(paths) == []
