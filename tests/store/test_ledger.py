"""The prompt ledger (core/store/ledger.py, session/prompts.jsonl) and past prompts rebuilt from it
(core/timeline.py): every build_prompt leaves a line, every line rebuilds byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from core.config import load_config
from core.manager import MemoryManager
from core.store.ledger import ledger_path, read_ledger, texts_dir
from core.store.paths import MemoryPaths
from core.timeline import build_timeline, measured_for, rebuild, rebuild_call
from core.transcripts.importers import load_transcript
from core.transcripts.replay import replay
from inspector.cli.commands import main
from tests.helpers.cli import config_from_yaml, write_config
from tests.helpers.memory import fill, small_config
from tests.helpers.paths import TRANSCRIPTS

DATA = TRANSCRIPTS


def lines(mm: MemoryManager) -> list[dict[str, Any]]:
    return read_ledger(mm.paths).lines


def dumped(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, ensure_ascii=False, sort_keys=False)


def play(mm: MemoryManager, turns: int, *, record_from: int | None = None) -> list[str]:
    """Turns with a prompt built before and after each pass; returns each prompt, dumped."""
    got: list[str] = []
    for t in range(turns):
        fill(mm, 1, start=t)
        got.append(dumped(mm.build_prompt("You are a camera agent.", f"task {t // 3}")))
        if record_from is not None and t >= record_from:
            mm.record_prompt_tokens(200_000)
        mm.save()
        got.append(dumped(mm.build_prompt("You are a camera agent.", f"task {t // 3}")))
    return got


def assert_all_rebuilt(paths: MemoryPaths, got: list[str]) -> None:
    read = read_ledger(paths)
    calls = read.calls
    assert len(calls) == len(got)
    for number, call in enumerate(calls, start=1):
        rebuilt = rebuild(paths, number, call, measured_for(read, call["id"]))
        assert rebuilt.exact, (number, rebuilt.problems)
        assert dumped(rebuilt.messages) == got[number - 1], number


def test_each_build_prompt_appends_one_call_line(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    fill(mm, 1)
    assert not ledger_path(mm.paths).exists()
    for n in range(1, 4):
        mm.build_prompt("sys", "task")
        calls = read_ledger(mm.paths).calls
        assert len(calls) == n
    call = calls[-1]
    assert call["kind"] == "call" and call["hot"]["n"] + 1 == 4  # the root is named apart
    assert call["hot"]["root"] == call["hot"]["first"] or call["hot"]["root_at"] == 0
    assert call["system"]["tokens"] == 1 and call["task"]["tokens"] == 1
    assert call["tokens"] == sum(call[k]["tokens"] for k in ("system", "summary", "hot", "task"))
    # Texts are stored once per distinct text, under their digest.
    stored = sorted(p.name for p in texts_dir(mm.paths).iterdir())
    assert len(stored) == 2 and all(name.endswith(".txt") for name in stored)


def test_large_system_prompt_is_stored_once(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    fill(mm, 1)
    big = "You are a careful agent. " * 4000
    mm.build_prompt(big, "a")
    size_after_one = ledger_path(mm.paths).stat().st_size
    for _ in range(20):
        mm.build_prompt(big, "a")
    per_line = (ledger_path(mm.paths).stat().st_size - size_after_one) / 20
    assert per_line < 1500  # the line names the text; it does not carry it
    assert len(list(texts_dir(mm.paths).iterdir())) == 2
    # Another process (another manager) does not store it again either.
    other = MemoryManager(tmp_path / "m", small_config())
    other.build_prompt(big, "a")
    assert len(list(texts_dir(mm.paths).iterdir())) == 2


def test_previews_and_read_only_managers_write_nothing(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    fill(mm, 1)
    mm.build_prompt("sys", "task", record=False)
    MemoryManager(tmp_path / "m", small_config(), read_only=True).build_prompt("sys", "task")
    assert not ledger_path(mm.paths).exists()


def test_a_measured_figure_names_the_call_it_measured(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    fill(mm, 1)
    mm.build_prompt("sys", "task")
    mm.build_prompt("sys", "task 2")
    mm.record_prompt_tokens(1234)
    got = lines(mm)
    assert [obj["kind"] for obj in got] == ["call", "call", "measured"]
    assert got[2]["call"] == got[1]["id"] and got[2]["prompt_tokens"] == 1234
    rebuilt = rebuild_call(mm.paths, "-1")
    assert rebuilt.measured == 1234 and rebuilt.number == 2


def test_every_call_is_rebuilt_exactly_across_passes_and_split_turns(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    got = play(mm, 12, record_from=7)
    passes = [obj for obj in lines(mm) if obj["kind"] == "pass"]
    assert len(passes) >= 8 and any(p["is_split_turn"] for p in passes)
    assert any(call["hot"]["synthetic"] for call in read_ledger(mm.paths).calls)
    assert_all_rebuilt(mm.paths, got)


def test_a_past_summary_md_is_kept_not_rerendered(tmp_path: Path) -> None:
    """Even with summary.md gone (or re-rendered by a newer version), a past call still has
    the summary.md it was given."""
    mm = MemoryManager(tmp_path / "m", small_config())
    got = play(mm, 6)
    mm.paths.summary.write_text("# something else\n", encoding="utf-8")
    assert_all_rebuilt(mm.paths, got)


def test_rotation_takes_the_ledger_with_the_session(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    got = play(mm, 5)
    closed = mm.rotate().closed_session_id
    assert closed is not None
    assert not ledger_path(mm.paths).exists()
    fill(mm, 1, start=50)
    after = dumped(mm.build_prompt("You are a camera agent.", "new"))
    assert len(read_ledger(mm.paths).calls) == 1
    assert_all_rebuilt(mm.paths, [after])
    assert_all_rebuilt(MemoryPaths.for_archive(tmp_path / "m", closed), got)


def test_a_torn_last_line_is_ignored_and_the_next_line_starts_clean(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    fill(mm, 1)
    first = dumped(mm.build_prompt("sys", "task"))
    with open(ledger_path(mm.paths), "ab") as fh:
        fh.write(b'{"kind":"call","v":1,"id":"cdead')
    assert read_ledger(mm.paths).bad_lines == 1
    fresh = MemoryManager(tmp_path / "m", small_config())
    second = dumped(fresh.build_prompt("sys", "task"))
    read = read_ledger(mm.paths)
    assert len(read.calls) == 2 and read.bad_lines == 1 and not read.torn_tail
    assert_all_rebuilt(mm.paths, [first, second])
    # `prompt --at` and the timeline number calls alike, and a call is found by its id too.
    by_id = rebuild_call(mm.paths, read.calls[1]["id"])
    assert by_id.number == 2 and by_id.exact and dumped(by_id.messages) == second
    timeline = build_timeline(mm.paths, mm.config)
    assert [r["call"] for r in timeline.rows if r["kind"] == "call"] == [1, 2]


def test_repair_checks_the_ledger(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    fill(mm, 1)
    mm.build_prompt("sys", "task")
    with open(ledger_path(mm.paths), "ab") as fh:
        fh.write(b'{"kind":"call"')
    text = next(iter(texts_dir(mm.paths).iterdir()))
    text.write_bytes(b"tampered")
    repaired = mm.repair()
    assert repaired["ledger_torn_line_ended"] == 1
    assert repaired["ledger_lines_unreadable"] == 1
    assert repaired["ledger_texts_corrupt"] == 1
    assert not text.exists() and text.with_name(text.name + ".corrupt").exists()
    rebuilt = rebuild_call(mm.paths, "1")
    assert not rebuilt.exact and rebuilt.problems  # the lost text is named, not made up


def record_prompts(mm: MemoryManager) -> list[str]:
    """A list that every prompt mm.build_prompt builds from now on is appended to (dumped)."""
    got: list[str] = []
    original = mm.build_prompt

    def spy(system_prompt: str, task: str, *, record: bool = True) -> list[dict[str, Any]]:
        messages = original(system_prompt, task, record=record)
        got.append(dumped(messages))
        return messages

    mm.build_prompt = spy  # type: ignore[method-assign]
    return got


def test_replay_writes_a_line_per_call_and_each_rebuilds(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "extraction.yaml",
        context_window=3700,
        reserve_tokens=370,
        keep_recent_tokens=460,
        hot_window_events=6,
        count_compress_after_events=10,
        summary_max_chunks=3,
    )
    root = tmp_path / "memory"
    mm = MemoryManager(root, load_config(cfg, root).config)
    got = record_prompts(mm)
    stats = replay(load_transcript(DATA / "pi_session.jsonl", "pi"), mm)
    assert stats.calls == len(got) and stats.compactions >= 1
    assert_all_rebuilt(mm.paths, got)
    measured = [obj for obj in lines(mm) if obj["kind"] == "measured"]
    assert len(measured) == stats.prompt_sizes_recorded
    assert all(m["call"] is not None for m in measured)


def test_timeline_rows_for_calls_and_passes(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    play(mm, 8, record_from=5)
    timeline = build_timeline(mm.paths, mm.config)
    kinds = [row["kind"] for row in timeline.rows]
    assert kinds.count("call") == timeline.calls == 16
    passes = [row for row in timeline.rows if row["kind"] == "pass"]
    assert len(passes) == timeline.passes >= 5
    for row in passes:
        assert row["compacted"] and row["chunk_id"] and row["recorded"]
        assert row["trigger"] in ("count", "tokens") and row["path"] in ("count", "token")
        assert row["predicted_after"] is not None and row["duration_ms"] > 0
        assert row["summary_backend"] == "extractive" and row["fallback"] is False
        assert row["cut_meta"]["first_kept_event_id"] == row["first_kept_event_id"]
    # After a recorded 200,000 the next figure is 200,000 again: such a pass did not help.
    token_passes = [r for r in passes if r["trigger"] == "tokens"]
    assert token_passes and all(r["prompt_before"] == 200_000 for r in token_passes)
    assert any(r["measured_after"] == 200_000 and r["not_smaller"] for r in token_passes)
    assert timeline.threshold == 102_400 and timeline.window == 128_000


def test_timeline_lists_chunks_made_without_a_ledger(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    play(mm, 4)
    ledger_path(mm.paths).unlink()
    timeline = build_timeline(mm.paths, mm.config)
    assert timeline.calls == 0 and timeline.passes >= 1
    assert all(not row["recorded"] for row in timeline.rows)


def test_cli_prompt_at_timeline_and_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "m"
    mm = MemoryManager(root, small_config())
    got = play(mm, 5)
    capsys.readouterr()
    assert main(["--memory-dir", str(root), "prompt", "--at", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["exact"] is True and doc["call"] == 3
    assert dumped(doc["messages"]) == got[2]
    assert set(doc["parts"]) == {"system", "summary", "hot", "task"}
    assert main(["--memory-dir", str(root), "prompt", "--at", "3"]) == 0
    assert "rebuilt exactly" in capsys.readouterr().out
    assert main(["--memory-dir", str(root), "timeline", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["calls"] == 10 and len(doc["rows"]) == doc["calls"] + doc["passes"]
    assert main(["--memory-dir", str(root), "timeline"]) == 0
    assert "call 10" in capsys.readouterr().out
    for args, words in (
        (["prompt", "--at", "99"], "calls 1 to 10"),
        (["prompt", "--at", "nope"], "no model call"),
        (["prompt", "--at", "1", "--task", "x"], "leave out"),
        (["dropped", "chunk_9999"], "no chunk"),
        (["dropped", "../etc"], "invalid chunk id"),
    ):
        assert main(["--memory-dir", str(root), *args]) == 2, args
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith("error: ") and words in err[-1], (args, err)


def test_the_ledger_never_breaks_a_prompt(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config())
    fill(mm, 1)
    ledger_path(mm.paths).mkdir()  # not a file: appends fail
    messages = mm.build_prompt("sys", "task")
    assert messages[0]["content"] == "sys"
    assert any("prompt ledger" in w for w in mm.store.warnings)


def test_ledger_lines_are_small(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", small_config(hot_window_events=200))
    fill(mm, 30)
    mm.build_prompt("sys", "task")
    size = os.path.getsize(ledger_path(mm.paths))
    assert size < 1000  # 120 events in the window, one line of a few hundred bytes


def test_a_wrong_guess_of_the_chunks_falls_back_to_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunks after a call are guessed by their numbers; a guess that is wrong (ids not
    numbered, a gap) fails the digest check and the index's order is read instead."""
    from core import timeline

    mm = MemoryManager(tmp_path / "m", small_config())
    got = play(mm, 6)
    monkeypatch.setattr(
        timeline._EventSource,
        "numbered_after",
        lambda self, chunks, last: list(reversed(self.chunk_ids())),
    )
    assert_all_rebuilt(mm.paths, got)
    monkeypatch.setattr(timeline._EventSource, "chunk_ids", lambda self: [])
    read = read_ledger(mm.paths)
    broken = [rebuild(mm.paths, i + 1, c) for i, c in enumerate(read.calls)]
    assert any(not r.exact and r.problems for r in broken)  # said, not made up


def test_a_plain_import_writes_a_line_per_call_of_the_log(tmp_path: Path) -> None:
    from core.compaction.prompt import build_prompt_messages
    from core.transcripts.replay import REPLAY_SYSTEM_PROMPT, REPLAY_TASK, import_transcript

    mm = MemoryManager(tmp_path / "m", small_config())
    fill(mm, 1)  # events before the import open every window
    before = mm.hot_events()
    transcript = load_transcript(DATA / "pi_session.jsonl", "pi")
    stats = import_transcript(transcript, mm)
    events = mm.hot_events()
    assert events[: len(before)] == before
    read = read_ledger(mm.paths)
    assert len(read.calls) == stats.calls == len(transcript.calls)
    seen = 0
    expected: list[str] = []
    for call in transcript.calls:
        window = events[: len(before) + seen + len(call.inputs)]
        expected.append(
            dumped(build_prompt_messages(REPLAY_SYSTEM_PROMPT, None, window, REPLAY_TASK))
        )
        seen += len(call.inputs) + len(call.outputs)
    assert_all_rebuilt(mm.paths, expected)
    last = max(i for i, c in enumerate(transcript.calls) if c.prompt_tokens is not None)
    measured = [obj for obj in read.lines if obj["kind"] == "measured"]
    assert [m["call"] for m in measured] == [read.calls[last]["id"]]


def test_a_past_moment_is_laid_out_as_a_session_that_gives_the_same_prompt(
    tmp_path: Path,
) -> None:
    """Time travel: the session as it was at call N, as a folder of its own; a manager on it
    (read-only) builds the very prompt call N got, and shows the chunks the index held then."""
    from core.timeline import materialize_moment

    mm = MemoryManager(tmp_path / "m", small_config())
    got = play(mm, 6, record_from=3)
    calls = read_ledger(mm.paths).calls
    before = {p.name: p.stat().st_mtime_ns for p in mm.paths.session.rglob("*")}
    for number, call in enumerate(calls, start=1):
        moment = materialize_moment(mm.paths, str(number), tmp_path / f"moment{number}")
        assert moment.exact and moment.number == number
        past = MemoryManager(moment.root, small_config(), read_only=True)
        messages = past.build_prompt("You are a camera agent.", f"task {(number - 1) // 6}")
        assert dumped(messages) == got[number - 1], number
        assert past.status().chunk_count == call["summary"]["chunks"]
    assert {p.name: p.stat().st_mtime_ns for p in mm.paths.session.rglob("*")} == before


def test_the_light_timeline_agrees_with_the_full_one(tmp_path: Path) -> None:
    """The TUI reads call lines off their head and tail; a line in another layout (keys in
    another order, by hand) is parsed whole, and the call numbers stay the same."""
    mm = MemoryManager(tmp_path / "m", small_config())
    play(mm, 5, record_from=2)
    path = ledger_path(mm.paths)
    lines = path.read_text(encoding="utf-8").splitlines()
    third = json.loads(lines[2])
    assert third["kind"] == "call"
    lines[2] = json.dumps(
        {"kind": "call", **dict(reversed(list(third.items())))}, separators=(",", ":")
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    full = build_timeline(mm.paths, mm.config)
    light = build_timeline(mm.paths, mm.config, light=True)
    assert (full.calls, full.passes) == (light.calls, light.passes) == (10, 3)
    for a, b in zip(full.rows, light.rows, strict=True):
        assert (a["kind"], a.get("call"), a.get("estimate"), a.get("measured")) == (
            b["kind"],
            b.get("call"),
            b.get("estimate"),
            b.get("measured"),
        )
        assert a.get("not_smaller") == b.get("not_smaller")
    assert sum(1 for r in light.rows if r.get("light")) == light.calls - 1


def test_follow_writes_a_line_per_call_and_each_rebuilds(tmp_path: Path) -> None:
    from core.transcripts.follow import Follower
    from tests.helpers.cli import SMALL_CONFIG

    config = config_from_yaml(tmp_path, **SMALL_CONFIG)
    mm = MemoryManager(tmp_path / "memory", config)
    got = record_prompts(mm)
    log = tmp_path / "claude.jsonl"
    follower = Follower(log, mm)
    with log.open("ab") as f:
        for line in (DATA / "claude_code_session.jsonl").read_bytes().splitlines(keepends=True):
            f.write(line)
            f.flush()
            follower.poll_once()
            follower.live.idle()
    follower.finish()
    mm.close()
    assert follower.stats.calls == len(got) and follower.stats.compactions > 0
    assert_all_rebuilt(mm.paths, got)


def test_timeline_output_prints_ledger_text_literally() -> None:
    """A ledger line is a file: its time stamp is never read as Rich markup."""
    import io

    from rich.console import Console

    from core.timeline import Timeline
    from inspector.cli.timeline_output import render_timeline

    row = {"kind": "call", "call": 1, "at": "[bold red]x[/]", "estimate": 5, "measured": None}
    row.update(system_tokens=1, summary_tokens=0, hot_tokens=3, hot_events=1, task_tokens=1)
    out = io.StringIO()
    render_timeline(Console(file=out, width=200), Timeline([row], 1000, 800, 1, 0, 0))
    assert "[bold red]x[/]" in out.getvalue()
