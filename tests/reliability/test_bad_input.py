"""Hostile and broken files under a memory root (issue 6, "Bad input"), through the core API
and the command line: a one-line error naming the file (exit 2 bad input, 1 failed operation),
or quarantine with nothing lost; never a traceback, never a file read or written outside the
memory root."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from core.errors import SessionMemoryError
from core.index.chunk_files import read_chunk_events
from core.manager import MemoryManager
from tests.helpers.invariants import assert_each_once, read_jsonl, yaml_entries
from tests.helpers.reliability import (
    REPO,
    assert_clean_failure,
    run_cli,
    run_each,
    seeded_root,
    small_config,
)

pytestmark = pytest.mark.extended
"""Every bad input through real CLI processes: most of a minute, so CI runs it as its own step."""

READING = ["status", "plan", "recall camera", "prompt --system s --task t"]
WRITING = ["compact --force", "repair"]


def tree(path: Path) -> dict[str, Any]:
    """Every name under `path` with its bytes (or link target), to prove nothing changed."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = str(full.relative_to(path))
            if full.is_symlink():
                out[rel] = ("link", os.readlink(full))
            elif full.is_file():
                out[rel] = full.read_bytes()
            else:
                out[rel] = "dir"
    return out


# --------------------------------------------------------------------------- outside the root


def test_session_symlink_out_of_the_root_is_refused_and_nothing_outside_is_touched(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    _mm, _ids = seeded_root(root)
    outside = tmp_path / "elsewhere"
    os.rename(root / "session", outside)
    os.symlink(outside, root / "session")
    before = tree(outside)

    for _command, run in run_each(
        root, [*READING, *WRITING, "rotate", "append --type user_input --text hi"]
    ):
        assert_clean_failure(run, 1, str(root / "session"), "outside the memory root")
    mm = MemoryManager(root, small_config())
    for call in (mm.status, mm.plan, mm.repair, mm.save, mm.rotate):
        with pytest.raises(SessionMemoryError, match="outside the memory root"):
            call()
    with pytest.raises(SessionMemoryError, match="outside the memory root"):
        mm.append({"type": "user_input", "content": "must not land outside"})
    assert tree(outside) == before
    assert (root / "session").is_symlink()


@pytest.mark.parametrize(
    "planted",
    ["events.jsonl", "state.json", "chunks/index.yaml", "chunks/chunk_0001.jsonl", "summary.md"],
)
def test_a_file_symlinked_out_of_the_root_is_never_followed(tmp_path: Path, planted: str) -> None:
    """A link planted as one of the session's files: reads and appends refuse it; rewrites
    replace the link itself; the outside file is never read into output nor written."""
    root = tmp_path / "memory"
    _mm, _ids = seeded_root(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.jsonl"
    secret.write_text(
        json.dumps({"id": "secret-1", "type": "user_input", "content": "SECRETMARKER camera"})
        + "\n"
    )
    target = root / "session" / planted
    target.unlink()
    os.symlink(secret, target)
    before = tree(outside)

    runs = [run for _c, run in run_each(root, [*READING, "recall secretmarker", *WRITING])]
    runs.append(run_cli(root, "append", "--type", "user_input", "--text", "camera again"))
    runs.append(run_cli(root, "status", "--json"))
    for run in runs:
        assert "Traceback" not in run.stderr
        assert run.returncode in (0, 1), run.stderr
        assert "SECRETMARKER" not in run.stdout
        if run.returncode == 1:
            assert run.error_line.startswith("error: ")
            assert "symbolic link" in run.error_line
    assert tree(outside) == before


# --------------------------------------------------------------------------- events.jsonl


def _insert_lines(root: Path, middle: bytes, end: bytes = b"") -> list[bytes]:
    """Put `middle` after the first line of events.jsonl and `end` at its end; returns the
    original good lines."""
    events = root / "session" / "events.jsonl"
    lines = events.read_bytes().splitlines(keepends=True)
    events.write_bytes(lines[0] + middle + b"".join(lines[1:]) + end)
    return lines


def _quarantined(root: Path) -> list[dict[str, Any]]:
    return read_jsonl(root / "session" / "corrupt.jsonl")


def _raw(record: dict[str, Any]) -> bytes:
    if "raw_b64" in record:
        return base64.b64decode(record["raw_b64"])
    return str(record["raw"]).encode("utf-8")


@pytest.mark.parametrize("fix", ["repair", "compact --force"])
def test_corrupt_json_lines_in_the_middle_and_at_the_end_are_quarantined(
    tmp_path: Path, fix: str
) -> None:
    root = tmp_path / "memory"
    _mm, ids = seeded_root(root)
    bad_mid = b'{"id": "half-written", "type": '
    bad_end = b'{"id":"cut-off","type":"user_inp'  # a writer died mid-line: no newline
    _insert_lines(root, bad_mid + b"\n", bad_end)

    status = run_cli(root, "status", "--json")
    assert status.returncode == 0, status.stderr
    # An unterminated last line may be an append in flight: a reader leaves it alone.
    assert json.loads(status.stdout)["corrupt_lines"] == 1
    for command, run in run_each(root, READING):
        assert run.returncode == 0 and "Traceback" not in run.stderr, (command, run.stderr)

    run = run_cli(root, *fix.split(), "--json")
    assert run.returncode == 0, run.stderr
    assert [_raw(r) for r in _quarantined(root)] == [bad_mid, bad_end]
    assert all(r["source"] == "session/events.jsonl" and r["error"] for r in _quarantined(root))
    assert_each_once(root, ids)
    assert json.loads(run_cli(root, "status", "--json").stdout)["corrupt_lines"] == 2


def test_invalid_utf8_line_is_quarantined_byte_for_byte(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    bad = b'{"id":"latin1","type":"user_input","content":"caf\xe9 \xff\xfe"}'
    _insert_lines(root, bad + b"\n")
    assert mm.status().corrupt_lines == 1
    assert mm.repair()["corrupt_lines_quarantined"] == 1
    (record,) = _quarantined(root)
    assert _raw(record) == bad and "UTF-8" in record["error"]
    assert_each_once(root, ids)


def test_a_50_mb_line_is_quarantined_whole_and_the_rest_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _mm, ids = seeded_root(root)
    huge = b'{"id":"huge","type":"tool_result","content":"' + b"x" * 50_000_000 + b'"}'
    _insert_lines(root, huge + b"\n")
    status = run_cli(root, "status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["corrupt_lines"] == 1
    run = run_cli(root, "repair", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["repaired"]["corrupt_lines_quarantined"] == 1
    (record,) = _quarantined(root)
    assert _raw(record) == huge and "limit" in record["error"]
    assert_each_once(root, ids)


def test_lines_that_are_not_objects_are_quarantined(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    bad = [b"[1, 2]", b'"a string"', b"42", b"null", b"true"]
    _insert_lines(root, b"\n".join(bad) + b"\n")
    assert mm.status().corrupt_lines == len(bad)
    assert mm.save(force=True).quarantined_count == len(bad)
    assert [_raw(r) for r in _quarantined(root)] == bad
    assert_each_once(root, ids)


@pytest.mark.parametrize(
    "value", [b"NaN", b"-Infinity", b"1e999", b"1" * 5000], ids=["nan", "-inf", "1e999", "bigint"]
)
def test_numbers_json_cannot_write_back_are_quarantined_not_blocking(
    tmp_path: Path, value: bytes
) -> None:
    """Python's json reads NaN, Infinity and 1e999 (as inf), but no JSON writer can store
    them: such a line used to fail every later pass (and a 5000-digit integer raised)."""
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    bad = b'{"id":"odd-number","type":"assistant_output","content":' + value + b"}"
    _insert_lines(root, bad + b"\n")
    assert mm.status().corrupt_lines == 1
    result = mm.save(force=True)
    assert result.compacted and result.quarantined_count == 1
    assert [_raw(r) for r in _quarantined(root)] == [bad]
    assert_each_once(root, ids)


def test_events_missing_id_type_or_role_in_the_file_are_kept_and_given_ids(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    odd = [
        {"content": "no id, no type, no role"},
        {"id": "only-id", "content": "no type"},
        {"type": "user_input", "content": "no id here"},
        {"role": "assistant", "content": "role only"},
    ]
    _insert_lines(root, b"".join(json.dumps(e).encode() + b"\n" for e in odd))
    assert mm.plan().plan is not None
    assert mm.save(force=True).compacted
    stored = read_jsonl(root / "session" / "events.jsonl")
    for chunk in sorted((root / "session" / "chunks").glob("chunk_*.jsonl")):
        stored += read_jsonl(chunk)
    contents = [e.get("content") for e in stored]
    for event in odd:
        assert contents.count(event["content"]) == 1, event
    assert all(isinstance(e.get("id"), str) and e["id"] for e in stored)
    assert len({e["id"] for e in stored}) == len(stored)
    given = [e["id"] for e in stored if not (e.get("meta") or {}).get("synthetic")]
    assert_each_once(root, [*ids, *given])


def test_appending_an_event_without_type_or_role_is_refused_with_exit_2(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _mm, ids = seeded_root(root)
    events = root / "session" / "events.jsonl"
    before = events.read_bytes()
    good = json.dumps({"type": "user_input", "content": "fine"})
    for bad in ['{"content": "no type"}', '{"type": 5, "content": "x"}', "[1]", "{not json"]:
        run = run_cli(root, "append", "-", stdin=good + "\n" + bad + "\n")
        assert_clean_failure(run, 2, "stdin line 2")
        assert events.read_bytes() == before, "a rejected batch wrote something"
    assert_each_once(root, ids)


def test_unknown_types_and_roles_are_kept_verbatim(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    odd = {"type": "telemetry_blob", "role": "robot", "content": "battery 41%", "extra": [1]}
    run = run_cli(root, "append", "-", "--json", stdin=json.dumps(odd) + "\n")
    assert run.returncode == 0, run.stderr
    (stored,) = json.loads(run.stdout)["events"]
    ids.append(stored["id"])
    assert {k: stored[k] for k in odd} == odd
    messages = mm.build_prompt("sys", "task")
    assert {"role": "system", "content": "battery 41%"} in messages
    for command, run in run_each(root, [*READING, "compact --force"]):
        assert run.returncode == 0, (command, run.stderr)
    assert_each_once(root, ids)


CONTENTS: list[Any] = [
    "text",
    "",
    None,
    0,
    -7,
    3.25,
    True,
    False,
    [],
    [1, "two", None, [3.5]],
    {},
    {"nested": {"list": [1, {"deep": None}], "flag": False}},
    "中文 и emoji 🙂",
]


def test_content_of_every_json_type_survives_append_compaction_and_recall(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    lines = "".join(
        json.dumps({"id": f"content-{i}", "type": "tool_result", "content": c}) + "\n"
        for i, c in enumerate(CONTENTS)
    )
    run = run_cli(root, "append", "-", "--json", stdin=lines)
    assert run.returncode == 0, run.stderr
    ids += [f"content-{i}" for i in range(len(CONTENTS))]
    ids.append(mm.begin_run("next turn after the odd contents")["id"])
    for n in range(3):  # the odd results become compactable
        ids.append(mm.append({"type": "assistant_output", "content": f"step {n}"})["id"])
    for command, run in run_each(root, [*READING, "plan --json"]):
        assert run.returncode == 0, (command, run.stderr)
    assert mm.save(force=True).compacted
    chunk_events = {
        e["id"]: e
        for chunk in (root / "session" / "chunks").glob("chunk_*.jsonl")
        for e in read_jsonl(chunk)
    }
    hot = {e["id"]: e for e in read_jsonl(root / "session" / "events.jsonl")}
    for i, content in enumerate(CONTENTS):
        event = chunk_events.get(f"content-{i}") or hot[f"content-{i}"]
        assert event["content"] == content and type(event["content"]) is type(content)
    assert_each_once(root, ids)
    assert any(h.events for h in mm.recall("deep nested flag").results)


def test_duplicate_ids_in_the_file_are_both_kept(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    events = root / "session" / "events.jsonl"
    first = events.read_bytes().splitlines(keepends=True)[0]
    events.write_bytes(events.read_bytes() + first + first)
    result = mm.save(force=True)
    assert result.compacted, result.reason
    stored = read_jsonl(events) + [
        e for c in (root / "session" / "chunks").glob("chunk_*.jsonl") for e in read_jsonl(c)
    ]
    dup_id = json.loads(first)["id"]
    copies = [e for e in stored if e["id"] == dup_id or e.get("meta", {}).get("original_id")]
    assert len(copies) == 3, "the original and both copies are kept"
    assert sum(1 for e in copies if e.get("meta", {}).get("original_id") == dup_id) == 2
    renamed = [e["id"] for e in copies if e["id"] != dup_id]
    assert_each_once(root, [*ids, *renamed])


# --------------------------------------------------------------------------- index.yaml


def _index(root: Path) -> Path:
    return root / "session" / "chunks" / "index.yaml"


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("version: 1\nchunks: [\n  - {chunk_id: ", "not valid YAML"),
        ("- just\n- a list\n", "not a mapping"),
        ("version: 1\nchunks: 42\n", "is not a list"),
        ("!!python/object/apply:os.system ['touch PWNED']\n", "python/object/apply"),
    ],
    ids=["not-yaml", "not-mapping", "chunks-not-list", "python-tag"],
)
def test_unreadable_index_stops_passes_and_recall_until_repair(
    tmp_path: Path, text: str, what: str
) -> None:
    """Contract §6: exit 1 naming the file, appends go on, status reports it, repair moves the
    bad file aside and rebuilds the index from the chunk files."""
    root = tmp_path / "memory"
    _mm, ids = seeded_root(root)
    _index(root).write_text(text)
    for _command, run in run_each(root, ["recall camera", "compact --force", "rotate"]):
        assert_clean_failure(run, 1, str(_index(root)), what, "repair")
    status = run_cli(root, "status", "--json")
    assert status.returncode == 0, status.stderr
    assert what in json.loads(status.stdout)["index_error"]
    readers = ["plan", "prompt --system s --task t"] if what == "not valid YAML" else []
    for command, run in run_each(root, readers):  # once is enough: the same code path
        assert run.returncode == 0, (command, run.stderr)
    appended = run_cli(root, "append", "--type", "user_input", "--text", "still works", "--json")
    assert appended.returncode == 0, appended.stderr
    ids.append(json.loads(appended.stdout)["events"][0]["id"])

    run = run_cli(root, "repair", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["repaired"]["index_rebuilt"] == 1
    (aside,) = _index(root).parent.glob("index.yaml.corrupt-*")
    assert aside.read_text() == text, "the bad index is kept, not deleted"
    assert not (tmp_path / "PWNED").exists() and not (REPO / "PWNED").exists()
    assert_each_once(root, ids)
    hits = json.loads(run_cli(root, "recall", "camera", "--json").stdout)["results"]
    assert hits and hits[0]["events"]


@pytest.mark.parametrize(
    "text", ["", "# nothing\n", "version: 1\n"], ids=["empty", "comment", "no-chunks"]
)
def test_empty_index_with_chunk_files_is_rebuilt_from_them(tmp_path: Path, text: str) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    _index(root).write_text(text)
    assert mm.status().chunk_count == 0
    for command, run in run_each(root, READING):
        assert run.returncode == 0, (command, run.stderr)
    assert mm.repair().get("orphan_chunks_indexed") == 1
    assert mm.status().chunk_count == 1
    assert_each_once(root, ids)
    assert mm.recall("camera").results[0].events


def test_index_entry_missing_fields_is_read_leniently(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    _index(root).write_text("version: 1\nchunks:\n  - chunk_id: chunk_0001\n")
    status = mm.status()
    assert status.chunk_count == 1 and status.index_error is None
    for command, run in run_each(root, [*READING, "compact --force"]):
        assert run.returncode == 0 and "Traceback" not in run.stderr, (command, run.stderr)
    assert_each_once(root, ids)
    assert any(hit.chunk_id == "chunk_0001" for hit in mm.recall("camera", limit=10).results)


HOSTILE_IDS = {
    "absolute": "{bait}",
    "dotdot": "../../../{bait_name}",
    "slash": "sub/chunk_0001",
    "nul": "chunk\x00_0001",
    "10kb": "c" * 10_240,
}


@pytest.mark.parametrize("kind", list(HOSTILE_IDS))
def test_hostile_chunk_id_in_the_index_is_skipped_with_a_warning(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "memory"
    _mm, ids = seeded_root(root)
    bait = tmp_path / "bait.jsonl"
    bait.write_text(
        json.dumps({"id": "bait-1", "type": "user_input", "content": "BAITMARKER camera"}) + "\n"
    )
    (root / "session" / "chunks" / "sub").mkdir()
    (root / "session" / "chunks" / "sub" / "chunk_0001.jsonl").write_text(bait.read_text())
    hostile = HOSTILE_IDS[kind].format(bait=bait.with_suffix(""), bait_name="bait")
    good = yaml_entries(_index(root))
    entries = [{**good[0], "chunk_id": hostile, "summary": "hostile BAITMARKER"}, *good]
    _index(root).write_text(json.dumps({"version": 1, "chunks": entries}))  # JSON is YAML
    before = bait.read_bytes()

    status = run_cli(root, "status", "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["chunk_count"] == 1
    assert any(str(_index(root)) in w and "invalid chunk id" in w for w in data["warnings"])
    recall = run_cli(root, "recall", "baitmarker", "--json")
    assert recall.returncode == 0 and json.loads(recall.stdout)["results"] == []
    commands = [*READING, *WRITING] if kind in ("absolute", "dotdot") else ["recall x", *WRITING]
    for command, run in run_each(root, commands):
        assert run.returncode == 0 and "Traceback" not in run.stderr, (command, run.stderr)
        assert "BAITMARKER" not in run.stdout
    assert bait.read_bytes() == before
    assert_each_once(root, ids)


# --------------------------------------------------------------------------- chunk files


def test_missing_chunk_file_is_reported_not_silent(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm, _ids = seeded_root(root)
    chunk = root / "session" / "chunks" / "chunk_0001.jsonl"
    chunk.unlink()
    status = run_cli(root, "status", "--json")
    assert status.returncode == 0
    assert any(str(chunk) in w and "missing" in w for w in json.loads(status.stdout)["warnings"])
    for command, run in run_each(root, [*READING, *WRITING]):
        assert run.returncode == 0 and "Traceback" not in run.stderr, (command, run.stderr)
    # The summary survives in the index: recall still finds the chunk by it.
    assert any(hit.chunk_id == "chunk_0001" for hit in mm.recall("camera", limit=10).results)


def test_truncated_chunk_file_keeps_what_it_still_holds(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    chunk = root / "session" / "chunks" / "chunk_0001.jsonl"
    data = chunk.read_bytes()
    lines = data.splitlines(keepends=True)
    chunk.write_bytes(b"".join(lines[:2]) + lines[2][:10])  # cut mid-line
    survivors = [json.loads(line)["id"] for line in lines[:2]]
    for command, run in run_each(root, [*READING, *WRITING]):
        assert run.returncode == 0 and "Traceback" not in run.stderr, (command, run.stderr)
    assert chunk.read_bytes() == b"".join(lines[:2]) + lines[2][:10], "left as found"
    events, bad = read_chunk_events(mm.paths, "chunk_0001")
    assert [e["id"] for e in events] == survivors and len(bad) == 1
    assert any(hit.chunk_id == "chunk_0001" for hit in mm.recall("camera", limit=10).results)
    lost = {json.loads(line)["id"] for line in lines[2:]}
    stored = read_jsonl(root / "session" / "events.jsonl") + [
        e for c in chunk.parent.glob("chunk_*.jsonl") if c != chunk for e in read_jsonl(c)
    ]
    elsewhere = [e["id"] for e in stored if not (e.get("meta") or {}).get("synthetic")]
    assert sorted(elsewhere + survivors) == sorted(i for i in ids if i not in lost)


# --------------------------------------------------------------------------- other files


def test_config_with_python_tag_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    seeded_root(root)
    config = tmp_path / "evil.yaml"
    marker = tmp_path / "PWNED"
    config.write_text(f"session_compaction: !!python/object/apply:os.system ['touch {marker}']\n")
    for command in ["status", "compact", "recall camera"]:
        run = run_cli(root, *command.split(), "--config", str(config))
        assert_clean_failure(run, 2, str(config), "python/object/apply")
    assert not marker.exists()


WRONG_KEYS = [
    "context_window: 0",
    "context_window: true",
    "reserve_tokens: -1",
    "compress_at_percent: 0",
    "compress_at_percent: 101",
    "count_compress_after_events: 0",
    "keep_recent_tokens: many",
    "hot_window_events: 1.5",
    "summary_max_chunks: 0",
    "max_rolling_summary_lines: 1",
    "lock_timeout_seconds: 0",
    "models: [1]",
    "models: {gpt: 0}",
    "summarizer: {backend: gpt}",
    "summarizer: {backend: openai, model: m}",
    "summarizer: {backend: openai, model: m, base_url: 'file:///etc/passwd'}",
    "summarizer: {max_summary_tokens: -5}",
    "summarizer: {timeout_seconds: 0}",
    "summarizer: {api_key_env: 5}",
    "session_boundary: {idle_gap_minutes: -1}",
    "session_boundary: 3",
]


@pytest.mark.parametrize("line", WRONG_KEYS)
def test_every_config_key_wrong_in_turn_is_exit_2_naming_key_and_file(
    tmp_path: Path, line: str
) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    config = tmp_path / "extraction.yaml"
    config.write_text(f"session_compaction:\n  {line}\n")
    key = line.split(":")[0]
    run = run_cli(root, "status", "--config", str(config))
    assert_clean_failure(run, 2, str(config), f"session_compaction.{key}")


def test_summary_md_edited_into_nonsense_is_rerendered_from_the_index(tmp_path: Path) -> None:
    from core.compaction.summaries import parse_summary_md, render_summary

    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    summary = root / "session" / "summary.md"
    summary.write_bytes(b"\x00\x1b[2J## Recent Chunks\n- **../../etc**\n\xff\xfe garbage\n# x\n")
    for command, run in run_each(root, [*READING, "status --json"]):
        assert run.returncode == 0 and "Traceback" not in run.stderr, (command, run.stderr)
    assert mm.repair() is not None
    entries = yaml_entries(_index(root))
    expected = render_summary(
        [(e["chunk_id"], e["summary"]) for e in entries],
        summary_max_chunks=mm.config.summary_max_chunks,
        max_rolling_summary_lines=mm.config.max_rolling_summary_lines,
    ).summary_md
    assert summary.read_text() == expected
    assert parse_summary_md(expected).problems == []
    assert_each_once(root, ids)


@pytest.mark.parametrize("damage", ["missing", "not-json", "wrong-types"])
def test_state_json_missing_or_corrupt_is_replaced_and_kept_aside(
    tmp_path: Path, damage: str
) -> None:
    root = tmp_path / "memory"
    _mm, ids = seeded_root(root)
    state = root / "session" / "state.json"
    bad = {"missing": None, "not-json": "{oops", "wrong-types": '{"session_id": "../x"}'}[damage]
    if bad is None:
        state.unlink()
    else:
        state.write_text(bad)
    for command, run in run_each(root, [*READING, "status --json"]):
        assert run.returncode == 0 and "Traceback" not in run.stderr, (command, run.stderr)
    run = run_cli(root, "append", "--type", "user_input", "--text", "after", "--json")
    assert run.returncode == 0, run.stderr
    ids.append(json.loads(run.stdout)["events"][0]["id"])
    assert run_cli(root, "compact", "--force").returncode == 0
    assert json.loads(state.read_text())["session_id"].startswith("s-")
    if bad is not None:
        (aside,) = state.parent.glob("state.json.corrupt-*")
        assert aside.read_text() == bad
    assert_each_once(root, ids)


def test_session_missing_while_the_archive_exists(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _mm, ids = seeded_root(root)
    archived = root / "session_archive" / "s-closed"
    archived.parent.mkdir()
    os.rename(root / "session", archived)
    before = tree(archived)
    status = run_cli(root, "status", "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["event_count"] == 0 and data["chunk_count"] == 0
    assert [a["session_id"] for a in data["archives"]] == ["s-closed"]
    recall = run_cli(root, "recall", "camera", "--json")
    assert recall.returncode == 0 and json.loads(recall.stdout)["results"] == []
    for command, run in run_each(root, [*READING, *WRITING]):
        assert run.returncode == 0 and "Traceback" not in run.stderr, (command, run.stderr)
    assert tree(archived) == before, "an archived session is never written"
    assert_each_once(root, ids)


def test_type_role_and_id_of_the_wrong_json_type_in_the_file(tmp_path: Path) -> None:
    """A hand-edited line may hold any JSON value in any field: it is an event of unknown
    type (cut class by role, else forbidden), never a crash of status, plan, prompt or a pass."""
    root = tmp_path / "memory"
    _mm, ids = seeded_root(root)
    odd = [
        {"id": "t-list", "type": [], "role": {"r": 1}, "content": "list type"},
        {"id": "t-obj", "type": {"a": [1]}, "role": "user", "content": "object type, user"},
        {"id": "t-num", "type": 7, "role": None, "content": "number type"},
        {"id": 12, "type": "assistant_output", "content": "numeric id"},
    ]
    _insert_lines(root, b"".join(json.dumps(e).encode() + b"\n" for e in odd))
    for command, run in run_each(
        root, [*READING, "status --json", "plan --json", "compact --force", "repair"]
    ):
        assert run.returncode == 0 and "Traceback" not in run.stderr, (command, run.stderr)
    stored = read_jsonl(root / "session" / "events.jsonl") + [
        e for c in (root / "session" / "chunks").glob("chunk_*.jsonl") for e in read_jsonl(c)
    ]
    for event in odd:
        assert sum(1 for e in stored if e.get("content") == event["content"]) == 1
    renamed = [e["id"] for e in stored if (e.get("meta") or {}).get("original_id") == 12]
    assert len(renamed) == 1, "a non-string id is replaced and kept in meta.original_id"
    assert_each_once(root, [*ids, "t-list", "t-obj", "t-num", *renamed])
