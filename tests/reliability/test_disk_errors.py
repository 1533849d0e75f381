"""Disk full and read-only file systems during writes (issue 6, "Crashes"): a clear one-line
error naming the file, the previous files intact, nothing lost once space is back.

Two ways: `OSError` injected at the write boundary (os.write in the append path, os.replace /
os.write under every atomic rewrite of a pass), which runs everywhere; and a real tiny tmpfs
(ENOSPC) remounted read-only (EROFS), which needs `mount` (root with CAP_SYS_ADMIN): those
tests are skipped, saying so, where it is not available. chmod is no test here: the suite
runs as root, whom permissions do not stop."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import StoreError
from core.manager import MemoryManager
from core.store.atomic import TEMP_NAME_RE
from tests.helpers.invariants import assert_each_once, read_jsonl
from tests.helpers.memory import fill
from tests.helpers.reliability import (
    assert_clean_failure,
    run_cli,
    seeded_root,
    small_config,
    three_chunks,
)

# Every write of a pass failed in turn, real full and read-only file systems, ~6 s: CI runs
# it as its own step (-m extended).
pytestmark = pytest.mark.extended


def session_files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted((root / "session").rglob("*"))
        if p.is_file()
    }


def no_temp_files(root: Path) -> bool:
    return not [p for p in (root / "session").rglob("*") if TEMP_NAME_RE.match(p.name)]


# --------------------------------------------------------------------------- injection


def test_append_that_runs_out_of_space_midway_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "memory"
    mm, ids = seeded_root(root)
    events = root / "session" / "events.jsonl"
    before = events.read_bytes()
    real_write = os.write
    calls = 0

    def half_then_full(fd: int, data: Any) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            return real_write(fd, bytes(data)[: len(data) // 2])  # a short write first
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    batch = [{"type": "assistant_output", "content": f"line {i} " + "x" * 500} for i in range(5)]
    with monkeypatch.context() as patch:
        patch.setattr(os, "write", half_then_full)
        with pytest.raises(StoreError) as info:
            mm.append_many(batch)
    assert str(info.value) == f"cannot append to {events}: No space left on device"
    assert events.read_bytes() == before, "the half-written batch was taken back"
    ids += [e["id"] for e in mm.append_many(batch)]  # space is back: the same batch goes in
    assert_each_once(root, ids)


def count_writes_of_a_pass(root: Path, victim: str = "replace") -> int:
    """How many atomic replaces (or `os.write` calls: index.yaml and summary_archive.md are
    appended to in place) a clean pass makes on a copy of this root (the matrix size)."""
    counter = {"n": 0}
    real = getattr(os, victim)

    def counting(*a: Any, **k: Any) -> Any:
        if _counted(victim, a):
            counter["n"] += 1
        return real(*a, **k)

    mm = MemoryManager(root, small_config())
    setattr(os, victim, counting)
    try:
        assert mm.save(force=True).compacted
    finally:
        setattr(os, victim, real)
    return counter["n"]


def _counted(victim: str, args: tuple[Any, ...]) -> bool:
    """The writes the matrix fails: every atomic replace, every `os.write` but those of
    chunks/index.catalog (derived data: a failed catalog write is ignored by design and the
    next reader catches up; tests/store/test_index_scale.py) and of the prompt ledger
    (session/prompts.jsonl and its prompt_texts/: a record that never fails a pass or a prompt
    by design; tests/store/test_ledger.py)."""
    if victim == "replace":
        return TEMP_NAME_RE.match(Path(args[0]).name) is not None
    try:
        target = os.readlink(f"/proc/self/fd/{args[0]}")
    except OSError:
        return True
    path = Path(target)
    if path.name == "prompts.jsonl" or path.parent.name == "prompt_texts":
        return False
    return path.name != "index.catalog" and not path.name.startswith(".index.catalog.")


def failing_at(k: int, victim: str) -> Callable[..., Any]:
    real = getattr(os, victim)
    seen = {"n": 0}

    def maybe_fail(*args: Any, **kwargs: Any) -> Any:
        if _counted(victim, args):
            seen["n"] += 1
            if seen["n"] == k:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args, **kwargs)

    return maybe_fail


@pytest.mark.parametrize("victim", ["replace", "write"])
def test_disk_full_at_each_write_of_a_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim: str
) -> None:
    """The k-th atomic rewrite of a pass fails with ENOSPC, for every k: StoreError naming the
    file, the file it was replacing is unchanged, no temporary file remains; once space is
    back the next pass finishes or undoes the failed one and nothing is lost or doubled."""
    counted = tmp_path / "count" / "memory"
    three_chunks(counted)
    writes = count_writes_of_a_pass(counted, victim)
    # replaced: pending + sidecar twice, events, summary.md, state; written: those, the
    # index.yaml and summary_archive.md appends
    assert writes >= (6 if victim == "replace" else 8)
    for k in range(1, writes + 1):
        root = tmp_path / f"k{k}" / "memory"
        mm, ids = three_chunks(root)
        before = session_files(root)
        with monkeypatch.context() as patch:
            patch.setattr(os, victim, failing_at(k, victim))
            with pytest.raises(StoreError) as info:
                mm.save(force=True)
        message = str(info.value)
        assert "\n" not in message and "No space left on device" in message
        failed = Path(message.split("cannot write ", 1)[1].split(": ", 1)[0])
        rel = str(failed.relative_to(root))
        if rel in before:
            assert failed.read_bytes() == before[rel], f"write {k} changed {rel}"
        assert no_temp_files(root)
        ids += fill(mm, 1, start=40)
        mm.save()
        assert_each_once(root, ids)
        pending = root / "session" / "chunks" / "pending"
        assert not (pending.exists() and any(pending.iterdir())), f"write {k}"


# --------------------------------------------------------------------------- real tmpfs


def _mount(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=30)


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs of its own (skipped where mounting is not allowed)."""
    where = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    mounted = _mount(["mount", "-t", "tmpfs", "-o", "size=512k,mode=0755", "tmpfs", str(where)])
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'mount failed'})")
    try:
        yield where
    finally:
        _mount(["umount", "-l", str(where)])


def fill_up(folder: Path) -> Path:
    """Fill the file system with a filler file until ENOSPC."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def test_real_disk_full_append_and_compact_fail_cleanly_then_recover(tiny_fs: Path) -> None:
    root = tiny_fs / "memory"
    _mm, ids = seeded_root(root)  # SMALL written as the CLI's config too
    events = root / "session" / "events.jsonl"
    filler = fill_up(tiny_fs)
    before = session_files(root)

    big = "y" * 20_000  # needs pages the file system no longer has
    run = run_cli(root, "append", "--type", "user_input", "--text", big)
    assert_clean_failure(run, 1, str(events), "No space left on device")
    compact = run_cli(root, "compact", "--force")
    assert_clean_failure(compact, 1, "No space left on device")
    assert str(root) in compact.error_line
    for command in ("status --json", "plan", "recall camera"):
        assert run_cli(root, *command.split()).returncode == 0
    after = session_files(root)
    assert after.get("session/events.jsonl") == before["session/events.jsonl"]
    for line in read_jsonl(events):  # every line still whole
        assert isinstance(line, dict)
    assert no_temp_files(root)

    filler.unlink()  # space is back
    ok = run_cli(root, "append", "--type", "user_input", "--text", big, "--json")
    assert ok.returncode == 0, ok.stderr
    ids.append(json.loads(ok.stdout)["events"][0]["id"])
    assert run_cli(root, "compact", "--force").returncode == 0
    assert_each_once(root, ids)


def test_read_only_file_system_fails_writes_cleanly_and_still_reads(tiny_fs: Path) -> None:
    root = tiny_fs / "memory"
    _mm, ids = seeded_root(root)  # SMALL written as the CLI's config too
    events = root / "session" / "events.jsonl"
    before = session_files(root)
    remount = _mount(["mount", "-o", "remount,ro", str(tiny_fs)])
    assert remount.returncode == 0, remount.stderr
    try:
        run = run_cli(root, "append", "--type", "user_input", "--text", "hello")
        assert_clean_failure(run, 1, "Read-only file system")
        assert str(root) in run.error_line
        for command in ("compact --force", "repair", "rotate"):
            failed = run_cli(root, *command.split())
            assert_clean_failure(failed, 1, "Read-only file system")
        for command in ("status --json", "plan", "recall camera", "prompt --system s --task t"):
            read = run_cli(root, *command.split())
            assert read.returncode == 0, (command, read.stderr)
    finally:
        _mount(["mount", "-o", "remount,rw", str(tiny_fs)])
    assert session_files(root) == before
    assert events.exists()
    assert_each_once(root, ids)
