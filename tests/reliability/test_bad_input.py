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
from core.manager import MemoryManager
from tests.memory_invariants import assert_each_once, read_jsonl
from tests.reliability._support import (
    assert_clean_failure,
    run_cli,
    seeded_root,
    small_config,
)

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

    for command in [*READING, *WRITING, "rotate", "append --type user_input --text hi"]:
        run = run_cli(root, *command.split())
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

    runs = [run_cli(root, *c.split()) for c in [*READING, "recall secretmarker", *WRITING]]
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
