"""Issue 12, the hostile tester's second round: each numbered attack, reproduced against real
processes (the CLI as a subprocess, the real file lock), and what must happen instead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability._support import (
    assert_clean_failure,
    run_cli,
    seeded_root,
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
    root = tmp_path / "memory"
    mm, _ids = seeded_root(root)
    mm.close()
    events = root / "session" / "events.jsonl"
    events.unlink()
    os.mkfifo(events)
    run = run_cli(root, "append", "--type", "user_input", "--text", "x" * size, timeout=HANG)
    assert_clean_failure(run, 1, "events.jsonl", "not a regular file")


@pytest.mark.parametrize(
    "name", ["state.json", "chunks/index.yaml", "chunks/chunk_0001.jsonl", "events.jsonl"]
)
def test_a_fifo_as_any_store_file_is_an_error_for_every_command_never_a_hang(
    tmp_path: Path, name: str
) -> None:
    root = tmp_path / "memory"
    mm, _ids = seeded_root(root)
    mm.close()
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
    # Whatever reads the file must say so; nothing may hang (run_cli's timeout).
    assert failed, name
    run = run_cli(root, "rotate", timeout=HANG)
    assert "Traceback" not in run.stderr
    assert run.returncode == 1, run.stdout
    assert "not a regular file" in run.error_line
    assert (root / "session" / name).exists(), "a refused rotation leaves the session in place"
