"""Issue 12, the hostile tester's second round: each numbered attack, reproduced against real
processes (the CLI as a subprocess, the real file lock), and what must happen instead."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import StoreError
from core.store.atomic import TEMP_NAME_RE
from tests.helpers.invariants import assert_each_once
from tests.helpers.memory import crashed_second_pass
from tests.helpers.reliability import (
    REPO,
    assert_clean_failure,
    closed_seeded_root,
    run_cli,
    seeded_root,
    write_small_config,
)

HANG = 60.0
"""Seconds a command may take before the test calls it hung (they take about one)."""

EVERY_COMMAND = [
    "status",
    "plan",
    "compact --force",
    "prompt --system s --task t",
    "repair",
    "rotate",
    "recall camera",
    "append --type user_input --text hello",
]


# --------------------------------------------------------------------------- 1: FIFOs


@pytest.mark.parametrize("size", [10, 70_000])
def test_append_to_a_fifo_events_file_fails_instead_of_vanishing_or_hanging(
    tmp_path: Path, size: int
) -> None:
    root = closed_seeded_root(tmp_path)
    events = root / "session" / "events.jsonl"
    events.unlink()
    os.mkfifo(events)
    run = run_cli(root, "append", "--type", "user_input", "--text", "x" * size, timeout=HANG)
    assert_clean_failure(run, 1, "events.jsonl", "not a regular file")


@pytest.mark.extended  # every command against a FIFO in each store file's place: ~12 s
@pytest.mark.parametrize(
    "name", ["state.json", "chunks/index.yaml", "chunks/chunk_0001.jsonl", "events.jsonl"]
)
def test_a_fifo_as_any_store_file_is_an_error_for_every_command_never_a_hang(
    tmp_path: Path, name: str
) -> None:
    root = closed_seeded_root(tmp_path)
    target = root / "session" / name
    assert target.is_file()
    target.unlink()
    os.mkfifo(target)
    failed = []
    for command in EVERY_COMMAND:
        if command == "rotate":
            continue  # a rotation moves the session away: checked on its own below
        run = run_cli(root, *command.split(), timeout=HANG)
        assert "Traceback" not in run.stderr, (command, run.stderr)
        if run.returncode != 0:
            assert "not a regular file" in run.error_line, (command, run.stderr)
            failed.append(command)
    # Whatever reads the file must say so; nothing may hang (run_cli's timeout). A chunk
    # file is read only to recall from it: there it is a warning, as a missing one is.
    if name.startswith("chunks/chunk_"):
        status = run_cli(root, "status", "--json", timeout=HANG)
        assert any(str(target) in w for w in json.loads(status.stdout)["warnings"])
    else:
        assert failed, name
    # A rotation moves the session without reading chunk files; whatever it reads first
    # (state.json, events.jsonl, the index for recovery) refuses it, the session in place.
    run = run_cli(root, "rotate", timeout=HANG)
    assert "Traceback" not in run.stderr
    if run.returncode != 0:
        assert "not a regular file" in run.error_line, run.stderr
        assert (root / "session" / name).exists()
    else:
        assert name == "chunks/chunk_0001.jsonl", run.stdout


# --------------------------------------------------------------------------- 2: append + state


@contextlib.contextmanager
def state_json_disk_full() -> Iterator[None]:
    """Inside the block a rename onto state.json fails as on a full disk (ENOSPC); every
    other rename goes through."""
    real_replace = os.replace

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if Path(dst).name == "state.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_replace(src, dst, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", replace)
        yield


def test_append_whose_state_rewrite_fails_is_stored_and_reported_stored(tmp_path: Path) -> None:
    """A user_input rewrites state.json (run_started_at) after the line is appended: when that
    rewrite fails (disk full) the append must still report success, or a retry doubles it."""
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    with state_json_disk_full():
        event = mm.begin_run("a new task while the disk is full")
    ids.append(event["id"])
    assert any("state.json was not updated" in w for w in mm.store.warnings)
    assert_each_once(root, ids)
    # Space is back: the next state write carries the run start it could not write.
    mm.store.flush_state()
    state = json.loads((root / "session" / "state.json").read_text(encoding="utf-8"))
    assert state["run_started_at"] == event["ts"]


# --------------------------------------------------------------------------- 3: rotation


HOLD_MAINTENANCE = """
import sys
from core.store.session_store import SessionStore
store = SessionStore(sys.argv[1])
with store.maintenance_lock() as got:
    print("held" if got else "busy", flush=True)
    sys.stdin.readline()
"""


@contextlib.contextmanager
def maintenance_held(root: Path) -> Iterator[None]:
    """Another process holds the maintenance slot (as a running pass does) until the block
    ends; synchronised over its stdout, no sleeps."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_MAINTENANCE, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


def archive_dirs(root: Path) -> list[Path]:
    return sorted(p for p in (root / "session_archive").iterdir() if p.is_dir())


def assert_archive_clean(archive: Path) -> None:
    leftovers = [
        p.name
        for p in archive.rglob("*")
        if TEMP_NAME_RE.match(p.name) or (p.parent.name == "pending" and p.is_file())
    ]
    assert not leftovers, leftovers


def test_rotation_while_a_pass_runs_recovers_a_crashed_pass_in_the_archive(
    tmp_path: Path,
) -> None:
    """A pass died at after_events_replace (its events only in chunks/pending/); a rotation
    taken while another process holds the maintenance slot must not archive them unindexed."""
    root = tmp_path / "memory"
    _, ids = crashed_second_pass(root, "after_events_replace")
    assert list((root / "session" / "chunks" / "pending").glob("*.jsonl"))
    write_small_config(root)
    with maintenance_held(root):
        run = run_cli(root, "rotate", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    (archive,) = archive_dirs(root)
    assert_archive_clean(archive)
    assert_each_once(root, ids)


def test_repair_recovers_what_a_crash_left_in_an_archive(tmp_path: Path) -> None:
    """An archive rotated by an older version (or a rotation that died after its rename) may
    hold pending evidence: `repair` indexes it."""
    root = tmp_path / "memory"
    _, ids = crashed_second_pass(root, "after_events_replace")
    (root / "session_archive").mkdir()
    os.rename(root / "session", root / "session_archive" / "s-old")  # the old rotation
    (root / "session_archive" / "s-old" / "chunks" / ".index.yaml.0123456789ab.tmp").write_text("x")
    write_small_config(root)
    run = run_cli(root, "repair", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["repaired"].get("archives_recovered") == 1
    assert_archive_clean(root / "session_archive" / "s-old")
    assert_each_once(root, ids)


# --------------------------------------------------------------------------- 4: archive link


def test_rotation_refuses_a_symlinked_session_archive(tmp_path: Path) -> None:
    root = closed_seeded_root(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "session_archive").symlink_to(outside, target_is_directory=True)
    before = sorted(p.name for p in (root / "session").rglob("*"))
    run = run_cli(root, "rotate", timeout=HANG)
    assert_clean_failure(run, 1, "session_archive", "symbolic link")
    assert list(outside.iterdir()) == [], "nothing was written outside the memory root"
    assert sorted(p.name for p in (root / "session").rglob("*")) == before


# --------------------------------------------------------------------------- 5: alias bomb


def alias_bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    return "\n".join([*lines, "chunks: [*i]", ""])


def test_an_alias_bomb_index_is_corrupt_for_every_command_and_repair_rebuilds_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    mm.close()
    index = root / "session" / "chunks" / "index.yaml"
    index.write_text(alias_bomb(), encoding="utf-8")
    for command in ("status", "plan", "recall camera", "prompt --system s --task t"):
        run = run_cli(root, *command.split(), timeout=HANG)
        assert "Traceback" not in run.stderr, (command, run.stderr)
    run = run_cli(root, "compact", "--force", timeout=HANG)
    assert_clean_failure(run, 1, "index.yaml", "aliases")
    run = run_cli(root, "repair", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["repaired"]["index_rebuilt"] == 1
    assert_each_once(root, ids)


# --------------------------------------------------------------------------- 10: full disk


def test_rotation_that_cannot_start_the_new_session_reports_the_rotation(tmp_path: Path) -> None:
    """The rename is the rotation: a full disk afterwards is a warning, and a retry must not
    archive a second, empty session."""
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    session_id = mm.status().session_id
    with state_json_disk_full():
        result = mm.rotate()
    assert result.closed_session_id == session_id
    assert any("was archived" in w for w in mm.store.warnings)
    retry = mm.rotate()  # space is back; the user retries anyway
    assert retry.closed_session_id is None
    assert [p.name for p in archive_dirs(root)] == [session_id]
    assert (root / "session" / "state.json").is_file()
    assert_each_once(root, ids)


# --------------------------------------------------------------------------- 11: typo'd root


@pytest.mark.parametrize("command", ["repair", "compact", "rotate", "compact --force"])
def test_writing_commands_on_a_missing_memory_root_are_bad_input(
    tmp_path: Path, command: str
) -> None:
    root = tmp_path / "memroy"  # a typo
    run = run_cli(root, *command.split(), timeout=HANG)
    assert_clean_failure(run, 2, "no memory at", str(root))
    assert not root.exists()


# --------------------------------------------------------------------------- 12: state, config


def test_an_unreadable_state_file_is_an_error_not_a_new_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EACCES is not corruption: moving state.json aside would give the session a new id.
    (The suite runs as root, whom chmod does not stop, so the open itself is made to fail.)"""
    root = tmp_path / "memory"
    mm, _ids = seeded_root(root)
    state_path = root / "session" / "state.json"
    before = state_path.read_bytes()
    real_open = os.open

    def denied(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path).name == "state.json":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "open", denied)
        with pytest.raises(StoreError, match="Permission denied"):
            mm.status()
        with pytest.raises(StoreError, match="Permission denied"):
            mm.append({"type": "assistant_output", "content": "x"})
        with pytest.raises(StoreError, match="Permission denied"):
            mm.rotate()
    assert state_path.read_bytes() == before
    assert not list(state_path.parent.glob("state.json.corrupt-*"))


def test_duplicate_keys_in_the_config_are_refused(tmp_path: Path) -> None:
    root = closed_seeded_root(tmp_path)
    config = root.parent / "config" / "memory" / "extraction.yaml"
    config.write_text(
        "session_compaction:\n  hot_window_events: 3\n  hot_window_events: 30\n", encoding="utf-8"
    )
    run = run_cli(root, "status", timeout=HANG)
    assert_clean_failure(run, 2, "extraction.yaml", "duplicate key 'hot_window_events'")


# --------------------------------------------------------------------------- 8: repair's lock


APPEND_ONE = """
import sys
from core.store.session_store import SessionStore
store = SessionStore(sys.argv[1], lock_timeout=float(sys.argv[2]))
store.append_events([{"id": sys.argv[3], "type": "assistant_output", "content": "meanwhile"}])
"""


def append_from_another_process(root: Path, event_id: str) -> subprocess.CompletedProcess[str]:
    """One append in its own process, waiting at most 2 s for the session lock."""
    return subprocess.run(
        [sys.executable, "-c", APPEND_ONE, str(root), "2", event_id],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )


def test_repair_reads_and_rebuilds_without_holding_the_session_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The slow part of a repair (reading every chunk file, reading events.jsonl) runs while
    another process appends: an append made in the middle of it succeeds and is kept."""
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    index = root / "session" / "chunks" / "index.yaml"
    index.write_text("chunks: [unclosed\n", encoding="utf-8")
    with (root / "session" / "events.jsonl").open("ab") as fh:
        fh.write(b'{"broken": CORRUPT-MARKER\n')
    during: list[subprocess.CompletedProcess[str]] = []
    import core.maintenance.recovery
    import core.manager
    import core.store.snapshot

    real_entry = core.maintenance.recovery.recovered_entry
    real_parse = core.store.snapshot.parse_event_lines

    def entry_then_append(*args: Any, **kwargs: Any) -> Any:
        if not during:
            during.append(append_from_another_process(root, "during-rebuild"))
        return real_entry(*args, **kwargs)

    def parse_then_append(data: bytes, **kwargs: Any) -> Any:
        if b"CORRUPT-MARKER" in data and len(during) == 1:
            during.append(append_from_another_process(root, "during-quarantine"))
        return real_parse(data, **kwargs)

    monkeypatch.setattr(core.maintenance.recovery, "recovered_entry", entry_then_append)
    monkeypatch.setattr(core.store.snapshot, "parse_event_lines", parse_then_append)
    repaired = mm.repair()
    assert repaired["index_rebuilt"] == 1 and repaired["corrupt_lines_quarantined"] == 1
    assert [p.returncode for p in during] == [0, 0], [p.stderr[-300:] for p in during]
    assert_each_once(root, [*ids, "during-rebuild", "during-quarantine"])


# --------------------------------------------------------------------------- 9: clear errors


def test_a_400_digit_prompt_size_is_refused_and_status_keeps_working(tmp_path: Path) -> None:
    root = closed_seeded_root(tmp_path)
    run = run_cli(root, "append", "--prompt-tokens", "9" * 400, timeout=HANG)
    assert_clean_failure(run, 2, "--prompt-tokens")
    for command in ("status", "plan", "compact"):
        assert run_cli(root, command, timeout=HANG).returncode == 0, command


@pytest.mark.parametrize(
    ("key", "value"),
    [("lock_timeout_seconds", "1.0e+300"), ("hot_window_events", "9" * 400)],
)
def test_an_absurd_config_number_is_bad_input_naming_the_key(
    tmp_path: Path, key: str, value: str
) -> None:
    root = closed_seeded_root(tmp_path)
    config = root.parent / "config" / "memory" / "extraction.yaml"
    config.write_text(f"session_compaction:\n  {key}: {value}\n", encoding="utf-8")
    for command in ("status", "append --type user_input --text x"):
        run = run_cli(root, *command.split(), timeout=HANG)
        assert_clean_failure(run, 2, f"session_compaction.{key}")


HIDDEN = "zero\u200bwidth \U000e0041\U000e0042 tags \u2060 joiner"


@pytest.mark.parametrize("command", ["status", "plan", "prompt --system s --task t"])
def test_lone_surrogates_and_invisible_characters_are_shown_not_sent_raw(
    tmp_path: Path, command: str
) -> None:
    """A lone surrogate used to fail human output half way (UnicodeEncodeError); zero-width
    and tag characters reached the terminal raw. All are shown as <U+XXXX> stand-ins."""
    root = closed_seeded_root(tmp_path)
    line = json.dumps({"type": "user_input", "content": f"lone \ud800 surrogate {HIDDEN}"})
    assert run_cli(root, "append", "-", stdin=line + "\n", timeout=HANG).returncode == 0
    run = run_cli(root, *command.split(), timeout=HANG)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    for raw in ("\u200b", "\U000e0041", "\u2060"):
        assert raw not in out
    if command != "status":
        assert "<U+D800>" in out and "<U+200B>" in out and "<U+E0041>" in out
    js = run_cli(root, *command.split(), "--json", timeout=HANG)
    assert js.returncode == 0, js.stderr
    assert "\u200b" not in js.stdout and "\U000e0041" not in js.stdout


def test_an_append_whose_prompt_size_cannot_be_recorded_says_the_events_are_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`append --prompt-tokens` stores the events, then rewrites state.json: when that fails
    the error must say the events are stored, so nobody retries them into doubles."""
    from inspector.cli.commands import main as cli_main

    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    mm.close()
    monkeypatch.delenv("SESSION_MEMORY_DIR", raising=False)
    with state_json_disk_full():
        code = cli_main(
            ["--memory-dir", str(root), "--json", "append", "--type", "assistant_output",
             "--text", "done", "--prompt-tokens", "1200"]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert "appended 1 event(s) (stored: do not append them again)" in err
    lines = (root / "session" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    ids.append(json.loads(lines[-1])["id"])
    assert_each_once(root, ids)


def test_a_fifo_as_the_config_file_is_bad_input_not_a_hang(tmp_path: Path) -> None:
    root = closed_seeded_root(tmp_path)
    config = root.parent / "config" / "memory" / "extraction.yaml"
    config.unlink()
    os.mkfifo(config)
    run = run_cli(root, "--config", str(config), "status", timeout=HANG)
    assert_clean_failure(run, 2, "extraction.yaml", "not a regular file")


def test_the_tui_model_never_blocks_on_a_fifo_events_file(tmp_path: Path) -> None:
    """The TUI's own readers (peek, the event detail, an archive's first request) refuse a FIFO
    at once instead of blocking a worker on it (issue 12 item 1)."""
    from inspector.tui.hot_window_model import HotWindowModel, _read_span
    from inspector.tui.views.archive_view import first_request

    session = tmp_path / "m" / "session"
    session.mkdir(parents=True)
    events = session / "events.jsonl"
    os.mkfifo(events)
    model = HotWindowModel(events)
    assert model.peek() is None
    assert _read_span(events, 0, 10) is None
    assert first_request(session) == ""
