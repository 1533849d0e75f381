"""Issue 20, round three, the store's newer files: chunks/recall.sqlite and its sidecars,
chunks/index.catalog and the archives held to the promises the older files keep (nothing
written or read through a link, no special file ever opened, no damaged derived file trusted,
a read-only reader changes nothing, one bad archive never stops the active session).

Every test here failed on the code before its fix (see docs/RELIABILITY.md, "Round three")."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.manager import MemoryManager
from core.recall.sqlite_index import recall_once
from tests.helpers.cli import REPO, cli_env
from tests.helpers.memory import fill, small_config
from tests.helpers.reliability import closed_seeded_root, run_cli, seeded_root, three_chunks

HANG = 30.0
"""Seconds a command may take before the test calls it hung (they take about one)."""

SIDECARS = ["", "-wal", "-shm", "-journal"]


def index_file(root: Path) -> Path:
    return root / "session" / "chunks" / "recall.sqlite"


def clear_index(root: Path, suffix: str = "") -> Path:
    """Make room for a planted file at recall.sqlite`suffix`: remove its sidecars and, when
    the plant takes its place, the file itself (a sidecar is planted beside an existing WAL
    index, which is what a later open reads it for)."""
    path = index_file(root)
    assert path.is_file()
    for other in SIDECARS[1:]:
        Path(f"{path}{other}").unlink(missing_ok=True)
    if not suffix:
        path.unlink()
    return path


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes."""
    out: dict[str, bytes] = {}
    for base, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(base) / name
            out[str(path.relative_to(folder))] = path.read_bytes()
    return out


def root_snapshot(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry under the memory root: its kind and (for a regular file) its bytes."""
    out: dict[str, tuple[str, bytes]] = {}
    for base, dirs, files in os.walk(root):
        for name in dirs:
            out[str((Path(base) / name).relative_to(root))] = ("dir", b"")
        for name in files:
            path = Path(base) / name
            kind = "link" if path.is_symlink() else "file"
            data = path.read_bytes() if kind == "file" else os.readlink(path).encode()
            out[str(path.relative_to(root))] = (kind, data)
    return out


def outside_database(folder: Path) -> Path:
    """Another program's SQLite database (rollback journal, one table, one row)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE precious (x TEXT)")
    conn.execute("INSERT INTO precious VALUES ('keep me')")
    conn.commit()
    conn.close()
    return path


def child_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -c CODE ARGS…` in its own process with the worktree's modules (a hang is a
    TimeoutExpired: the child is killed, the test fails)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=cli_env({}),
        timeout=HANG,
    )


# --------------------------------------------------------------------------- 1: links


@pytest.mark.parametrize(
    "suffix",
    # the sidecar links held before the fix (guards): in the extended step
    ["", *(pytest.param(x, marks=pytest.mark.extended) for x in SIDECARS[1:])],
)
@pytest.mark.parametrize("action", ["pass", "recall", "cold recall", "cli recall"])
def test_a_linked_recall_index_or_sidecar_is_never_written_through(
    tmp_path: Path, suffix: str, action: str
) -> None:
    root = closed_seeded_root(tmp_path)
    outside = tmp_path / "outside"
    target = outside_database(outside)
    if suffix:
        target = outside / f"other{suffix}"
        target.write_bytes(b"another program's file\n" * 100)
    path = clear_index(root, suffix)
    os.symlink(target, f"{path}{suffix}")
    before = tree(outside)
    found: list[Any]
    if action == "pass":
        writer = MemoryManager(root, small_config())
        fill(writer, 3, start=40)
        assert writer.save(force=True).compacted
        found = writer.recall("E41").results
        writer.close()
    elif action == "recall":
        writer = MemoryManager(root, small_config())
        found = writer.recall("camera").results
        writer.close()
    elif action == "cold recall":
        once = recall_once(root, "camera", 5)
        # None: the caller asks the manager, which answers; else the answer itself.
        found = once.results if once is not None else [None]
    else:
        run = run_cli(root, "recall", "camera", "--json", timeout=HANG)
        assert run.returncode == 0, run.stderr
        found = json.loads(run.stdout)["results"]

    assert tree(outside) == before, "a file outside the memory root was written"
    assert found, "recall still answers"
    conn = sqlite3.connect(f"file:{outside / 'other.sqlite'}?mode=ro", uri=True)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    conn.close()
    assert tables == ["precious"]


# --------------------------------------------------------------------------- 2: FIFOs

_READ_ONLY_RECALLS = """
import sys
from core.manager import MemoryManager
from core.recall.sqlite_index import recall_once
from tests.helpers.memory import small_config
root = sys.argv[1]
viewer = MemoryManager(root, small_config(), read_only=True)
assert viewer.recall("camera").results, "the read-only manager (the TUI's) answers"
assert viewer.recall("camera", all_sessions=True).results
once = recall_once(root, "camera", 5, read_only=True)
assert once is None or once.results
once = recall_once(root, "camera", 5)
assert once is None or once.results
print("done")
"""


def _fifo_root(tmp_path: Path, suffix: str) -> tuple[Path, Path]:
    root = tmp_path / "memory"
    mm, _ids = seeded_root(root)
    fill(mm, 3, start=40)  # events for the next pass
    mm.close()
    path = clear_index(root, suffix)
    fifo = Path(f"{path}{suffix}")
    os.mkfifo(fifo)
    return root, fifo


@pytest.mark.parametrize("suffix", ["", "-journal"])
def test_a_fifo_at_the_recall_index_never_hangs_compact_or_recall(
    tmp_path: Path, suffix: str
) -> None:
    root, _fifo = _fifo_root(tmp_path, suffix)
    # Read-only recalls first (they must not hang, nor remove anything).
    for args in (["recall", "camera"], ["recall", "camera", "--all-sessions"]):
        run = run_cli(root, *args, "--json", timeout=HANG)
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["results"], args
    child = child_python(_READ_ONLY_RECALLS, str(root))
    assert child.returncode == 0 and "done" in child.stdout, child.stderr
    # A pass commits and exits; its recall hook refuses the FIFO instead of opening it.
    run = run_cli(root, "compact", "--force", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["compacted"] is True
    run = run_cli(root, "recall", "E41", "--json", timeout=HANG)
    assert run.returncode == 0 and json.loads(run.stdout)["results"], run.stderr


@pytest.mark.extended  # every sidecar, every command: ~15 s
@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
def test_a_fifo_as_any_sidecar_of_the_recall_index_never_hangs(tmp_path: Path, suffix: str) -> None:
    test_a_fifo_at_the_recall_index_never_hangs_compact_or_recall(tmp_path, suffix)


# --------------------------------------------------------------------------- 7: bad contents


def _tamper(root: Path, *statements: str) -> None:
    conn = sqlite3.connect(index_file(root), isolation_level=None)
    for sql in statements:
        conn.execute(sql)
    conn.close()


def _schema(root: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{index_file(root)}?mode=ro", uri=True)
    rows = conn.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
    conn.close()
    return [(str(t), str(n)) for t, n in rows]


@pytest.mark.parametrize("key", ["next_no", "generation", "count", "index_end"])
def test_a_non_numeric_meta_value_falls_back_with_a_warning(tmp_path: Path, key: str) -> None:
    root = closed_seeded_root(tmp_path)
    assert index_file(root).exists()
    clean = _schema(root)
    _tamper(root, f"UPDATE meta SET v = 'x:y:z' WHERE k = '{key}'")
    run = run_cli(root, "recall", "camera", "--json", timeout=HANG)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["results"]
    if key != "index_end":  # (an end stamp that does not parse is only a full re-read)
        assert "recall.sqlite" in run.stderr, "the fallback is said"
    assert recall_once(root, "camera") is None or recall_once(root, "camera")
    writer = MemoryManager(root, small_config())
    assert writer.recall("camera").results
    writer.close()
    assert _schema(root) == clean


PLANTS = {
    "trigger": "CREATE TRIGGER wipe AFTER INSERT ON post BEGIN DELETE FROM post; END",
    "view": "CREATE VIEW v AS SELECT * FROM post",
    "table": "CREATE TABLE extra (x)",
    "index": "CREATE INDEX by_no ON post (no)",
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_an_unexpected_schema_object_means_a_rebuild(tmp_path: Path, plant: str) -> None:
    root = closed_seeded_root(tmp_path)
    clean = _schema(root)
    _tamper(root, PLANTS[plant])
    # The next pass adds its chunk; a planted trigger would wipe every posting.
    writer = MemoryManager(root, small_config())
    fill(writer, 3, start=40)
    assert writer.save(force=True).compacted
    writer.close()
    viewer = MemoryManager(root, small_config(), read_only=True)
    for term in ("camera", "E41", "E2"):
        assert viewer.recall(term).results, term
    run = run_cli(root, "recall", "E41", "--json", timeout=HANG)
    assert run.returncode == 0 and json.loads(run.stdout)["results"], run.stderr
    writer = MemoryManager(root, small_config())
    assert writer.recall("E41").results
    writer.close()
    assert _schema(root) == clean, "the writer rebuilt the file without the planted object"


def test_a_chunk_id_row_pointing_outside_is_never_read(tmp_path: Path) -> None:
    root = closed_seeded_root(tmp_path)
    bait = tmp_path / "bait.jsonl"
    bait.write_text(
        json.dumps({"id": "b1", "type": "user_input", "content": "baitword secret"}) + "\n"
    )
    chunks = root / "session" / "chunks"
    relative = os.path.relpath(tmp_path / "bait", chunks)
    _tamper(
        root,
        f"UPDATE chunks SET chunk_id = '{relative}', file_key = ''",
        "INSERT INTO post (term, no, best, total) SELECT 'baitword', no, 9, 9 FROM chunks",
    )
    viewer = MemoryManager(root, small_config(), read_only=True)
    got = viewer.recall("baitword camera")
    assert "secret" not in json.dumps(got.to_json()), "a file outside the root was read"
    assert got.results, "the chunks are still found (from the chunk files)"
    once = recall_once(root, "baitword", 5)
    assert once is None or "secret" not in json.dumps(once.to_json())
    run = run_cli(root, "recall", "baitword", "--json", timeout=HANG)
    assert run.returncode == 0 and "secret" not in run.stdout, run.stderr


def test_a_malformed_posting_falls_back_instead_of_an_internal_error(tmp_path: Path) -> None:
    root = closed_seeded_root(tmp_path)
    _tamper(root, "UPDATE post SET best = 'x', total = 'y'", "UPDATE chunks SET summary = 7")
    run = run_cli(root, "recall", "camera", "--json", timeout=HANG)
    assert "internal error" not in run.stderr and run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["results"]
    writer = MemoryManager(root, small_config())
    assert writer.recall("camera").results
    writer.close()


# --------------------------------------------------------------------------- 8: catalog


def _catalog(root: Path) -> Path:
    return root / "session" / "chunks" / "index.catalog"


@pytest.mark.parametrize("lost", [0, 1])
def test_a_catalog_that_lost_a_line_is_not_trusted(tmp_path: Path, lost: int) -> None:
    root = tmp_path / "memory"
    mm, _ids = three_chunks(root)
    mm.close()
    lines = _catalog(root).read_bytes().splitlines(keepends=True)
    assert len(lines) == 3
    del lines[lost]
    _catalog(root).write_bytes(b"".join(lines))
    run = run_cli(root, "status", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["chunk_count"] == 3
    writer = MemoryManager(root, small_config(summary_max_chunks=8))
    fill(writer, 3, start=40)
    assert writer.save(force=True).compacted
    writer.close()
    summary = (root / "session" / "summary.md").read_text()
    for cid in ("chunk_0001", "chunk_0002", "chunk_0003", "chunk_0004"):
        assert f"**{cid}**" in summary, cid


# --------------------------------------------------------------------------- 11: read-only


def _catalog_behind(root: Path) -> None:
    """A catalog one pass behind index.yaml (a pass whose catalog append was lost)."""
    old = _catalog(root).read_bytes()
    writer = MemoryManager(root, small_config())
    fill(writer, 3, start=40)
    assert writer.save(force=True).compacted
    writer.close()
    _catalog(root).write_bytes(old)


@pytest.mark.parametrize("state", ["missing", "behind"])
def test_reading_commands_never_write_the_catalog(tmp_path: Path, state: str) -> None:
    root = tmp_path / "memory"
    mm, _ids = three_chunks(root)
    mm.close()
    if state == "missing":
        _catalog(root).unlink()
    else:
        _catalog_behind(root)
    before = root_snapshot(root)
    for args in (
        ["status", "--json"],
        ["plan", "--json"],
        ["prompt", "--system", "s", "--task", "t", "--json"],
        ["recall", "camera", "--json"],
    ):
        run = run_cli(root, *args, timeout=HANG)
        assert run.returncode == 0, (args, run.stderr)
        assert root_snapshot(root) == before, args
    viewer = MemoryManager(root, small_config(), read_only=True)
    assert viewer.status().chunk_count == (3 if state == "missing" else 4)
    assert viewer.has_compressed_history()
    assert viewer.build_prompt("s", "t")
    assert viewer.recall("camera").results
    assert root_snapshot(root) == before, "the read-only manager (the TUI's)"


@pytest.mark.extended  # the whole inspector, every tab: ~5 s
async def test_the_read_only_inspector_never_writes_the_catalog(tmp_path: Path) -> None:
    """`session-inspector --read-only` on a root whose catalog is missing: every tab shown and
    a recall run; afterwards every file under the root is as it was."""
    from inspector.tui.views.recall_view import RecallView
    from tests.helpers.tui import SIZE, settle, started

    root = tmp_path / "memory"
    mm, _ids = three_chunks(root)
    mm.close()
    _catalog(root).unlink()
    before = root_snapshot(root)
    async with started(root, read_only=True, config=small_config(), size=SIZE) as (app, pilot):
        for tab in ("chunks", "summary", "prompt", "archive", "recall"):
            app.action_show_tab(tab)
            await settle(app, pilot)
        app.query_one(RecallView).search("camera")
        await settle(app, pilot)
    assert root_snapshot(root) == before


# --------------------------------------------------------------------------- 6: archives


def _damage(index: Path, how: str) -> None:
    if how == "not yaml":
        index.write_text("{{{ not yaml: [\n")
    elif how == "alias bomb":
        index.write_text("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n")
    else:
        index.unlink()
        os.mkfifo(index)


@pytest.mark.parametrize(
    "how",
    # ~4 s each: one in the default run, the other two in the extended step
    ["fifo", *(pytest.param(x, marks=pytest.mark.extended) for x in ("not yaml", "alias bomb"))],
)
def test_one_damaged_archive_is_reported_and_skipped_and_repair_mends_it(
    tmp_path: Path, how: str
) -> None:
    root = tmp_path / "memory"
    mm, _ids = seeded_root(root)
    archived = mm.rotate().archive_path
    assert archived is not None
    fill(mm, 3, start=50)
    assert mm.save(force=True).compacted
    mm.close()
    _damage(Path(archived) / "chunks" / "index.yaml", how)
    name = Path(archived).name

    run = run_cli(root, "status", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    status = json.loads(run.stdout)
    assert status["chunk_count"] == 1 and status["index_error"] is None
    assert any(name in w for w in status["warnings"]), status["warnings"]
    run = run_cli(root, "status", timeout=HANG)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr

    run = run_cli(root, "recall", "E51", "--all-sessions", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["results"], "the active session is still searched"
    assert name in run.stderr, "the skipped archive is named"
    for args in (
        ["recall", "E51"],
        ["plan"],
        ["prompt", "--system", "s", "--task", "t"],
        ["append", "--type", "user_input", "--text", "one more"],
        ["compact", "--force"],
    ):
        run = run_cli(root, *args, timeout=HANG)
        assert run.returncode == 0, (args, run.stderr)

    run = run_cli(root, "repair", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    repaired = json.loads(run.stdout)["repaired"]
    assert repaired.get("archive_indexes_rebuilt") == 1, repaired
    assert not repaired.get("archives_unrecoverable"), repaired
    aside = list((Path(archived) / "chunks").glob("index.yaml.corrupt-*"))
    assert len(aside) == 1, "the damaged file is kept aside"

    run = run_cli(root, "status", "--json", timeout=HANG)
    status = json.loads(run.stdout)
    assert not any(name in w for w in status["warnings"]), status["warnings"]
    assert [a["chunk_count"] for a in status["archives"]] == [1]
    run = run_cli(root, "recall", "E2", "--all-sessions", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    sessions = {r.get("session_id") for r in json.loads(run.stdout)["results"]}
    assert name in sessions, "the archive's chunks are found again"


def test_a_healthy_index_passes_the_checks_without_a_rebuild_or_a_warning(tmp_path: Path) -> None:
    """The checks refuse only what is wrong: an index.yaml copied to a new inode (the full
    re-read path) and a restarted process leave a healthy file as it is, with no warning."""
    root = tmp_path / "memory"
    mm, _ids = three_chunks(root)
    mm.close()
    index = root / "session" / "chunks" / "index.yaml"
    data = index.read_bytes()
    index.unlink()
    index.write_bytes(data)
    inode = index_file(root).stat().st_ino
    writer = MemoryManager(root, small_config())
    assert writer.recall("camera").results
    assert writer.recall_warnings == []
    store = writer.recall_service.file_for(writer.paths)
    assert not store.last_sync.rebuilt, store.last_sync
    writer.close()
    assert index_file(root).stat().st_ino == inode
    viewer = MemoryManager(root, small_config(), read_only=True)
    assert viewer.recall("E4").results and viewer.recall_warnings == []


@pytest.mark.parametrize("name", ["state.json", "events.jsonl"])
def test_an_archive_repair_cannot_mend_is_skipped_and_repair_says_how_to_set_it_aside(
    tmp_path: Path, name: str
) -> None:
    root = tmp_path / "memory"
    mm, _ids = seeded_root(root)
    archived = Path(str(mm.rotate().archive_path))
    fill(mm, 3, start=50)
    assert mm.save(force=True).compacted
    mm.close()
    (archived / name).unlink()
    os.mkfifo(archived / name)
    status = run_cli(root, "status", "--json", timeout=HANG)
    assert status.returncode == 0, status.stderr
    assert any(archived.name in w for w in json.loads(status.stdout)["warnings"])
    run = run_cli(root, "recall", "E51", "--all-sessions", "--json", timeout=HANG)
    assert run.returncode == 0 and json.loads(run.stdout)["results"], run.stderr
    run = run_cli(root, "repair", "--json", timeout=HANG)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["repaired"].get("archives_unreadable") == 1
    assert f"move {archived} out of" in run.stderr, "repair says how to set it aside"
    # Following that advice ends the warnings.
    archived.rename(tmp_path / archived.name)
    status = run_cli(root, "status", "--json", timeout=HANG)
    assert json.loads(status.stdout)["warnings"] == []
