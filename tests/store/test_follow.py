"""`follow` (core/transcripts/follow.py, issue 23): a live agent log replayed into a memory root as
it is
written. Every wait is a poll with a deadline; the writer process hands over on stdin/stdout."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import BadInputError
from core.manager import MemoryManager
from core.transcripts import follow as follow_mod
from core.transcripts.follow import Follower, wait_for
from core.transcripts.importers import load_transcript
from tests.helpers.cli import SMALL_CONFIG, config_from_yaml, start_cli, start_python, write_config
from tests.helpers.invariants import session_dirs
from tests.helpers.paths import TRANSCRIPTS

DATA = TRANSCRIPTS
CLAUDE = DATA / "claude_code_session.jsonl"
CODEX = DATA / "codex_rollout.jsonl"
DEADLINE = 30.0


def event_lines(session: Path) -> list[str]:
    try:
        return (session / "events.jsonl").read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []


def all_ids(root: Path) -> list[str]:
    """Every appended event's id in the root: hot windows and chunk files of every session
    (a pass's synthetic split-turn events are not appended events)."""
    ids: list[str] = []
    for session in session_dirs(root):
        files = [session / "events.jsonl", *(session / "chunks").glob("*.jsonl")]
        for path in files:
            for line in path.read_text("utf-8").splitlines() if path.exists() else []:
                event = json.loads(line)
                if "synthetic" not in event.get("meta", {}):
                    ids.append(event["id"])
    return ids


def source_lines(root: Path) -> list[int]:
    lines: list[int] = []
    for session in session_dirs(root):
        files = [session / "events.jsonl", *(session / "chunks").glob("*.jsonl")]
        for path in files:
            if path.exists():
                text = path.read_text("utf-8").splitlines()
                events = [json.loads(x) for x in text]
                lines += [e["meta"]["source"]["line"] for e in events if "source" in e["meta"]]
    return lines


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[MemoryManager]:
    config = config_from_yaml(tmp_path, **SMALL_CONFIG)
    mm = MemoryManager(tmp_path / "memory", config)
    yield mm
    mm.close()


def test_a_partial_last_line_waits_for_its_end(tmp_path: Path, manager: MemoryManager) -> None:
    log = tmp_path / "codex.jsonl"
    lines = CODEX.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:5]) + lines[5][:10])
    follower = Follower(log, manager)
    assert follower.poll_once() == 5
    before = manager.store.read_events().event_count
    assert before == 4  # developer, AGENTS.md, environment context, the request
    assert follower.poll_once() == 0
    with log.open("ab") as f:
        f.write(lines[5][10:] + b"".join(lines[6:]))
    assert follower.poll_once() == len(lines) - 5
    follower.finish()
    expected = load_transcript(CODEX, "codex")
    assert follower.stats.events_appended == expected.event_count
    assert follower.stats.calls == len(expected.calls) == 6
    assert follower.stats.prompt_sizes_recorded == 6
    assert follower.stats.source_compactions == 1
    assert follower.fmt == "codex"
    assert sorted(source_lines(manager.memory_dir)) == sorted(
        e["meta"]["source"]["line"] for e in expected.events()
    )


def test_follow_plays_the_same_events_as_import(tmp_path: Path, manager: MemoryManager) -> None:
    log = tmp_path / "claude.jsonl"
    log.write_bytes(CLAUDE.read_bytes())
    follower = Follower(log, manager, "claude-code")
    follower.poll_once()
    follower.finish()
    expected = load_transcript(CLAUDE, "claude-code")
    assert follower.stats.events_appended == expected.event_count
    ids = all_ids(manager.memory_dir)
    assert len(ids) == len(set(ids)) == expected.event_count


def test_truncation_closes_the_session_and_reads_again(
    tmp_path: Path, manager: MemoryManager
) -> None:
    log = tmp_path / "claude.jsonl"
    log.write_bytes(CLAUDE.read_bytes())
    notices: list[str] = []
    follower = Follower(log, manager, on_notice=notices.append)
    follower.poll_once()
    first = manager.store.read_events().event_count
    log.write_bytes(b"".join(CLAUDE.read_bytes().splitlines(keepends=True)[:6]))  # shorter
    follower.poll_once()
    assert follower.stats.restarts == 1
    assert any("was truncated" in n for n in notices)
    archives = list((manager.memory_dir / "session_archive").iterdir())
    assert len(archives) == 1
    assert manager.store.read_events().event_count < first


def test_a_replaced_file_is_read_from_its_start(tmp_path: Path, manager: MemoryManager) -> None:
    log = tmp_path / "codex.jsonl"
    log.write_bytes(CODEX.read_bytes())
    follower = Follower(log, manager)
    follower.poll_once()
    other = tmp_path / "new.jsonl"
    other.write_bytes(CODEX.read_bytes())
    os.replace(other, log)
    follower.poll_once()
    assert follower.stats.restarts == 1
    ids = all_ids(manager.memory_dir)
    assert len(ids) == len(set(ids)) == 2 * load_transcript(CODEX, "codex").event_count


def test_a_bad_line_stops_with_file_and_line_after_the_lines_before_it(
    tmp_path: Path, manager: MemoryManager
) -> None:
    log = tmp_path / "codex.jsonl"
    lines = CODEX.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:5]) + b"{not json\n" + b"".join(lines[5:]))
    follower = Follower(log, manager)
    with pytest.raises(BadInputError, match=rf"^{log}:6: not valid JSON"):
        follower.poll_once()
    assert manager.store.read_events().event_count == 4


def test_a_line_with_no_end_over_the_limit_is_refused(
    tmp_path: Path, manager: MemoryManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follow_mod, "MAX_LINE_BYTES", 100)
    log = tmp_path / "codex.jsonl"
    log.write_bytes(CODEX.read_bytes().splitlines(keepends=True)[0] + b'{"x": "' + b"y" * 200)
    with pytest.raises(BadInputError, match=rf"^{log}:2: a line of over"):
        Follower(log, manager).poll_once()


def test_a_log_that_is_not_a_followed_format_is_refused(
    tmp_path: Path, manager: MemoryManager
) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_text('{"role": "user", "content": "hi"}\n', "utf-8")
    with pytest.raises(BadInputError, match="this one looks like openai"):
        Follower(log, manager).poll_once()
    with pytest.raises(BadInputError, match="looks like codex, not claude-code"):
        log.write_bytes(CODEX.read_bytes())
        Follower(log, manager, "claude-code").poll_once()
    with pytest.raises(BadInputError, match="cannot read the log"):
        Follower(tmp_path / "missing.jsonl", manager).run()


def test_stop_between_lines_leaves_the_rest_for_later(
    tmp_path: Path, manager: MemoryManager
) -> None:
    log = tmp_path / "claude.jsonl"
    log.write_bytes(CLAUDE.read_bytes())
    follower = Follower(log, manager)
    seen = 0
    original = follower._line

    def counting(raw: bytes) -> None:
        nonlocal seen
        original(raw)
        seen += 1
        if seen == 3:
            follower.stop()

    follower._line = counting  # type: ignore[method-assign]
    follower.poll_once()
    assert follower.stats.lines == 3
    assert follower.offset == sum(len(x) for x in CLAUDE.read_bytes().splitlines(True)[:3])


# --- live: a writer process appends (and truncates) while `follow` runs ------------------------


def _session_count(root: Path) -> int:
    return len(event_lines(root / "session"))


def test_live_follow_keeps_the_root_in_step_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    log = tmp_path / "agent.jsonl"
    log.touch()
    config = write_config(tmp_path / "c.yaml", **SMALL_CONFIG)
    expected = load_transcript(CLAUDE, "claude-code").event_count
    command = ["--memory-dir", str(root), "--config", str(config), "follow", str(log), "--json"]
    follower = start_cli(command)
    writer = start_python(["-m", "tests.helpers.log_writer", CLAUDE, log])
    assert writer.stdin is not None and writer.stdout is not None
    try:
        assert writer.stdout.readline().startswith("wrote")
        written = hashlib.sha256(log.read_bytes()).hexdigest()

        def caught_up() -> bool:
            return len(all_ids(root)) == expected

        assert wait_for(caught_up, DEADLINE), f"{len(all_ids(root))} of {expected} events"
        # the agent truncates its log and writes it again
        writer.stdin.write("truncate\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "truncated"
        archive = root / "session_archive"
        assert wait_for(lambda: archive.is_dir() and any(archive.iterdir()), DEADLINE)
        writer.stdin.write("write\n")
        writer.stdin.flush()
        assert writer.stdout.readline().startswith("wrote")
        assert wait_for(lambda: len(all_ids(root)) == 2 * expected, DEADLINE)
        assert hashlib.sha256(log.read_bytes()).hexdigest() == written, "follow never writes"
        follower.send_signal(signal.SIGTERM)
        out, err = follower.communicate(timeout=DEADLINE)
    finally:
        writer.stdin.close()
        writer.wait(timeout=DEADLINE)
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    assert follower.returncode == 0, err
    stats = json.loads(out)
    assert stats["restarts"] == 1 and stats["format"] == "claude-code"
    assert stats["events_appended"] == 2 * expected
    assert stats["source_compactions"] == 2
    ids = all_ids(root)
    assert len(ids) == len(set(ids)) == 2 * expected, "nothing lost, nothing doubled"
    for session in session_dirs(root):
        for line in event_lines(session):
            json.loads(line)  # whole lines only


def test_follow_compacts_where_replay_does(tmp_path: Path) -> None:
    """Line by line, with the trigger asked while the agent is idle, `follow` runs the same
    passes and records the same prompt sizes as `import --replay` of the finished log.

    In a window the agent's own prompt fits in (this log's provider figures carry ~16k fixed
    tokens): in a window smaller than that fixed part every moment is over the threshold, so
    how many passes run depends only on how often the trigger is asked."""
    from core.transcripts.replay import replay

    fits = {**SMALL_CONFIG, "context_window": 19000, "reserve_tokens": 1900}
    fits.update(compress_at_percent=95, keep_recent_tokens=200)
    config = config_from_yaml(tmp_path, **fits)
    manager = MemoryManager(tmp_path / "memory", config)
    log = tmp_path / "claude.jsonl"
    follower = Follower(log, manager)
    with log.open("ab") as f:
        for line in CLAUDE.read_bytes().splitlines(keepends=True):
            f.write(line)
            f.flush()
            follower.poll_once()
            follower.live.idle()
    follower.finish()
    other = MemoryManager(tmp_path / "other", manager.config)
    try:
        expected = replay(load_transcript(CLAUDE, "claude-code"), other)
    finally:
        other.close()
    manager.close()
    got = follower.stats
    assert got.compactions == expected.compactions > 0
    assert got.prompt_sizes_recorded == expected.prompt_sizes_recorded
    assert got.events_appended == expected.events_appended


def test_a_pi_log_is_followed_in_file_order_with_its_compactions(tmp_path: Path) -> None:
    log = tmp_path / "pi.jsonl"
    log.write_bytes((DATA / "pi_session.jsonl").read_bytes())
    mm = MemoryManager(tmp_path / "memory")  # default settings: no pass, just the mapping
    try:
        follower = Follower(log, mm)
        follower.poll_once()
        follower.finish()
    finally:
        mm.close()
    assert follower.fmt == "pi"
    assert follower.stats.source_compactions == 1
    # import follows the branch pi kept (16 calls); a live log is read in file order, so the
    # abandoned branch's call is in too (docs/REPLAY.md)
    assert len(load_transcript(DATA / "pi_session.jsonl", "pi").calls) == 16
    assert follower.stats.calls == 17


def test_follow_thread_reports_a_bad_line_when_stopped(
    tmp_path: Path, manager: MemoryManager
) -> None:
    from inspector.cli.follow import FollowThread

    log = tmp_path / "codex.jsonl"
    log.write_bytes(CODEX.read_bytes().splitlines(keepends=True)[0] + b"[1]\n")
    worker = FollowThread(Follower(log, manager))
    worker.start()
    assert wait_for(lambda: worker.error is not None, DEADLINE)
    worker.stop()
    assert worker.error == f'{log}:2: a Codex line must be a JSON object with a string "type"'


def _follow_proc(root: Path, log: Path) -> subprocess.Popen[str]:
    return start_cli(["--memory-dir", root, "follow", log])


def test_ctrl_c_stops_follow_cleanly(tmp_path: Path) -> None:
    root, log = tmp_path / "memory", tmp_path / "codex.jsonl"
    log.write_bytes(CODEX.read_bytes())
    proc = _follow_proc(root, log)
    expected = load_transcript(CODEX, "codex").event_count
    try:
        assert wait_for(lambda: len(all_ids(root)) == expected, DEADLINE)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert out.startswith(f"followed 34 lines into {root}: {expected} events, 6 model calls")


def test_follow_cli_bad_input_is_exit_2_with_file_and_line(tmp_path: Path) -> None:
    root, log = tmp_path / "memory", tmp_path / "torn.jsonl"
    lines = CODEX.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:5]) + b'{"type": "response_item", "payl\n')
    proc = _follow_proc(root, log)
    _out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 2
    assert err.strip().splitlines()[-1].startswith(f"error: {log}:6: not valid JSON")
    assert len(all_ids(root)) == 4  # the lines before it were played
    missing = _follow_proc(tmp_path / "other", tmp_path / "nope.jsonl")
    _out, err = missing.communicate(timeout=DEADLINE)
    assert missing.returncode == 2 and "cannot read the log" in err
    assert not (tmp_path / "other").exists(), "nothing written for a log that cannot be read"
