"""The persistent recall index: `chunks/recall.sqlite`, derived state beside the chunk files.

Why it exists: a fresh process (an agent's recall tool, the CLI, a TUI just opened) would
otherwise read and tokenize every chunk file before its first answer (seconds at 1,000
chunks). The index keeps, per chunk, the figures `core.recall.ranking.analyze_texts` computes (for
each term: the best unit's weight and the sum over units), so a query reads the rows of its
own terms and nothing else.

Why SQLite tables rather than FTS5: FTS5 is available in Python's sqlite3, but its tokenizers
cannot be replaced from Python (identifiers kept whole with their pieces, CamelCase parts, CJK
bigrams) and its bm25() ranks whole rows: the event-level score aggregated per chunk would need
one row per event and a scan of every event that holds a common word. A plain
`(term, chunk) -> (best, total)` table in SQLite keeps what a well-kept engine gives (atomic
transactions, WAL readers that never wait for a writer, detected corruption) with the ranking
of `core.recall.ranking` unchanged: answers equal an in-memory build of the same chunks.

Never the source of truth:

- every use checks it against what it was built from: index.yaml's stat, and each chunk
  file's inode, size and mtime (a warm process re-checks the files only when index.yaml or the
  chunks folder changed). Chunks added since are analysed and added (a pass adds one); a chunk
  changed or dropped, a summary rewritten, or another format version means a rebuild;
- any SQLite error (a corrupt or truncated file, a locked or read-only folder) deletes the file
  and builds it again once; if that fails too, `RecallIndexUnavailable` tells the caller to use
  the in-memory index (the manager does, with a warning).

It lives inside the session folder, so a rotation's rename carries it to the archive, where it
is still valid (same inodes and mtimes) and readable.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import stat
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence

from core.errors import SessionMemoryError, StoreError
from core.recall.ranking import (
    EventTexts,
    Part,
    Posting,
    RecallDoc,
    RecallResult,
    TermBound,
    analyze_texts,
    event_search_text,
    search,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # a cold recall imports neither typing, pathlib, the store nor the index parser
    from pathlib import Path
    from typing import Any

    from core.events import Event
    from core.index.format import ChunkEntry
    from core.store.paths import MemoryPaths

INDEX_FILE = "recall.sqlite"
FORMAT = "recall-index-2"
"""Stored in the file; a file of another format is rebuilt (bump it when tokenization or the
unit weights change). 2: event text is indexed with its secrets masked (core.redact)."""
BUSY_TIMEOUT_MS = 10_000
EVENTS_CACHED = 20_000
"""Events kept parsed between queries (whole chunks, least recently used dropped first):
~40 MB of Python objects for ~1 KB events; a warm query then reads no chunk file for the
chunks recent queries returned."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    no INTEGER PRIMARY KEY,
    chunk_id TEXT NOT NULL UNIQUE,
    summary TEXT NOT NULL,
    file_key TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS post (
    term TEXT NOT NULL,
    no INTEGER NOT NULL,
    best INTEGER NOT NULL,
    total INTEGER NOT NULL,
    PRIMARY KEY (term, no)
) WITHOUT ROWID;
"""

ReadEvents = Callable[["MemoryPaths", str], "list[Event]"]


class RecallIndexUnavailable(Exception):
    """The index file cannot be used or rebuilt: search the chunks in memory instead."""


def index_path(paths: MemoryPaths) -> Path:
    return paths.chunks_dir / INDEX_FILE


def _file_key_str(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def _first_changed(folder: str, keys: Iterable[tuple[str, str]]) -> str | None:
    """The first chunk id whose file no longer has its recorded key (None: all match). Each
    file is stat'ed relative to the folder (no path walk per file: ~2x faster at 1,000);
    the ids were validated when they were indexed."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return next((cid for cid, _ in keys), None)
    try:
        stat_at = os.stat
        for cid, key in keys:
            try:
                st = stat_at(f"{cid}.jsonl", dir_fd=fd)
            except OSError:  # recorded as "" when it was missing at indexing (`_file_key_str`)
                if key:
                    return cid
                continue
            if f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}" != key:
                return cid
        return None
    finally:
        os.close(fd)


def _busy(exc: BaseException) -> bool:
    """SQLite's "database is locked" / "busy": a writer elsewhere held on past the timeout."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


SIDECARS = ("", "-wal", "-shm", "-journal")
"""The index file and the files SQLite opens beside it by name."""


class UnsafeIndexFile(sqlite3.OperationalError):
    """The index file or a sidecar is a symbolic link or not a regular file: SQLite would
    write through the link (outside the memory root) or block opening a FIFO. Refused before
    SQLite opens anything; a writer removes the entry (the link itself, never its target)
    and builds the file afresh, a read-only reader answers from a copy in memory."""


class DamagedIndex(sqlite3.DatabaseError):
    """The file opens but does not hold what this module writes: another schema object (a
    trigger, a view, a table, an index), a malformed meta value or row. It is rebuilt."""


def _refuse_special(path: str) -> None:
    """UnsafeIndexFile when `path` or a sidecar exists as anything but a regular file (lstat:
    a link is never followed)."""
    from core.store.atomic import refuse_link_or_kind

    for suffix in SIDECARS:
        name = f"{path}{suffix}"
        refuse_link_or_kind(
            name,
            stat.S_ISREG,
            UnsafeIndexFile,
            unreadable=lambda where, exc: f"cannot check {where}: {exc.strerror or exc}",
            link=f"{name} is a symbolic link (never followed)",
            other=f"{name} is not a regular file",
        )


_EXPECTED_SCHEMA: list[tuple[object, ...]] = []


def _expected_schema() -> list[tuple[object, ...]]:
    """sqlite_master as _SCHEMA makes it (every object, its type, table and SQL text)."""
    if not _EXPECTED_SCHEMA:
        mem = sqlite3.connect(":memory:")
        try:
            mem.executescript(_SCHEMA)
            _EXPECTED_SCHEMA.extend(_schema_rows(mem))
        finally:
            mem.close()
    return _EXPECTED_SCHEMA


def _schema_rows(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
    ).fetchall()


def _check_schema(conn: sqlite3.Connection) -> bool:
    """True when the file holds exactly the schema this module writes, False when it is
    empty (a new file); DamagedIndex for anything else (a planted trigger would run inside
    every update, a view or an extra table is not ours)."""
    rows = _schema_rows(conn)
    if not rows:
        return False
    if rows != _expected_schema():
        kinds = sorted(
            {f"{r[0]} {r[1]}" for r in rows} - {f"{r[0]} {r[1]}" for r in _expected_schema()}
        )
        found = ", ".join(str(k) for k in kinds[:3]) or "a changed table"
        raise DamagedIndex(f"unexpected schema ({found})")
    return True


_DAMAGE = (
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    ArithmeticError,
)
"""What a row of the wrong type or value raises in Python (a file is checked as it is read,
and a search that still meets one falls back): every one means "rebuild", never an internal
error."""

_NUMERIC_META = ("next_no", "generation", "count")
_CHUNK_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""core.ids.CHUNK_ID_RE with its length limit in one pattern: a row's id is checked by one
match."""


def _meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The meta table, checked: text keys and values, the counters decimal integers."""
    meta: dict[str, str] = {}
    for k, v in conn.execute("SELECT k, v FROM meta"):
        if not isinstance(k, str) or not isinstance(v, str):
            raise DamagedIndex("malformed meta row")
        meta[k] = v
    for key in _NUMERIC_META:
        value = meta.get(key)
        if value is not None and not (value.isascii() and value.isdigit() and len(value) < 19):
            raise DamagedIndex(f"malformed meta value {key!r}")
    return meta


def _chunk_rows(conn: sqlite3.Connection, first: str | None = None) -> list[tuple[Any, ...]]:
    """Rows `(first, chunk_id, file_key)` of the chunks table (`first`: "no", "summary" or
    none), checked: the number an integer, the summary text, the id a safe chunk id (it
    names a file: no row may point outside the chunks folder), the key text."""
    match = _CHUNK_ID_RE.fullmatch
    columns = "chunk_id, file_key" if first is None else f"{first}, chunk_id, file_key"
    rows = conn.execute(f"SELECT {columns} FROM chunks").fetchall()
    want = {None: None, "no": int, "summary": str}[first]
    for row in rows:
        cid, key = row[-2], row[-1]
        if not isinstance(cid, str) or match(cid) is None or not isinstance(key, str):
            raise DamagedIndex("malformed chunks row")
        if want is not None and not isinstance(row[0], want):
            raise DamagedIndex("malformed chunks row")
    return rows


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _stat_tuple(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _stat_text(path: str) -> str:
    """index.yaml's identity as stored in the file's meta table."""
    st = _stat_tuple(path)
    return "null" if st is None else f"[{st[0]}, {st[1]}, {st[2]}]"


class _Stored:
    """What the file holds, read in one transaction. (Plain classes: a cold recall imports
    this module, and a dataclass costs about a millisecond to define.)"""

    __slots__ = ("fmt", "generation", "ids", "index_key", "keys", "next_no")

    def __init__(
        self,
        fmt: str | None,
        index_key: str | None,
        ids: dict[int, str],
        next_no: int,
        generation: tuple[str | None, str | None] = (None, None),
        keys: list[tuple[str, str]] | None = None,
    ) -> None:
        self.fmt = fmt
        self.index_key = index_key
        self.ids = ids
        self.next_no = next_no
        self.generation = generation
        self.keys = keys
        """(chunk id, file key) rows when they were read with the ids (a cold start)."""


class SyncReport:
    """What `refresh` did: chunks analysed and added, whether it rebuilt from scratch."""

    __slots__ = ("added", "reason", "rebuilt")

    def __init__(self, added: int = 0, rebuilt: bool = False, reason: str = "") -> None:
        self.added = added
        self.rebuilt = rebuilt
        self.reason = reason

    def __repr__(self) -> str:
        return f"SyncReport(added={self.added}, rebuilt={self.rebuilt}, reason={self.reason!r})"


class PersistentRecallIndex:
    """A `core.recall.ranking.Corpus` over `chunks/recall.sqlite`, kept in step with the chunk
    files.

    Use `with index.reading(): search(...)`: it brings the file up to date, then holds one
    read transaction, so a writer in another process (a recall after a pass) never shows a
    search half its work.
    """

    def __init__(
        self, paths: MemoryPaths, read_events: ReadEvents | None, *, read_only: bool = False
    ) -> None:
        self._setup(str(paths.root), str(paths.session), read_events, read_only)
        self._paths: MemoryPaths | None = paths

    @classmethod
    def at(cls, root: str, *, read_only: bool = False) -> PersistentRecallIndex:
        """The active session's index of the memory root `root`, built without `MemoryPaths`
        (a cold recall imports neither it nor pathlib; it is made if a write needs it)."""
        self = cls.__new__(cls)
        root = os.path.abspath(root)
        self._setup(root, f"{root}/session", None, read_only)
        self._paths = None
        return self

    def _setup(
        self, root: str, session: str, read_events: ReadEvents | None, read_only: bool
    ) -> None:
        self.root = root
        self.chunks_dir = f"{session}/chunks"
        self.index_yaml = f"{self.chunks_dir}/index.yaml"
        self.path = f"{self.chunks_dir}/{INDEX_FILE}"
        self.read_only = read_only
        """Never create, change or delete the file or its sidecars: open it read-only and,
        when it is missing, stale or unreadable, answer from a copy in memory instead."""
        self.in_memory = False
        """(read-only) Whether the answers come from an in-memory copy, not the file."""
        self._session = session
        self._read_events = read_events
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None
        self._opened: tuple[object, ...] | None = None
        self._memory_only = False
        self._ids: dict[int, str] = {}
        self._checked: tuple[object, ...] | None = None
        self._cache: dict[str, Sequence[Event]] = {}
        self._cached_events = 0
        self._chunk_ids: tuple[dict[int, str] | None, list[str]] = (None, [])
        self.line_filter: tuple[bytes, ...] | None = None
        """(one query, cold) Parse only the chunk lines that can match: see `_read_chunk_at`."""
        self.warnings: list[str] = []
        self.last_sync = SyncReport()

    @property
    def paths(self) -> MemoryPaths:
        if self._paths is None:
            from core.store.paths import MemoryPaths

            self._paths = MemoryPaths(self.root, self._session)
        return self._paths

    def _read(self, chunk_id: str) -> list[Event]:
        if self._read_events is not None:
            return self._read_events(self.paths, chunk_id)
        return _read_chunk_at(self.chunks_dir, chunk_id, lambda: self.paths)

    # -- connection ----------------------------------------------------------------------

    def _ensure_inside_root(self) -> None:
        """`MemoryPaths.ensure_inside_root` for the chunks folder, without importing it."""
        root = os.path.realpath(self.root)
        real = os.path.realpath(self.chunks_dir)
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            raise StoreError(
                f"refusing {self.chunks_dir}: it resolves to {real}, outside the memory root {root}"
            )

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None:
            if self.read_only:
                if self.in_memory or self._opened == self._file_state():
                    return self._conn
            elif _stat_tuple(self.path) is not None and self._inode == _inode(self.path):
                return self._conn
            self.close()  # deleted, replaced, or moved away by a rotation: open what is here
        self._ensure_inside_root()
        _refuse_special(self.path)
        if self.read_only:
            return self._connect_read_only()
        conn = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,  # the owner serialises use (the manager's recall lock)
        )
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA trusted_schema=OFF")
            if not _check_schema(conn):
                conn.executescript(_SCHEMA)
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._inode = _inode(self.path)
        return conn

    def _file_state(self) -> tuple[object, ...]:
        """What a read-only connection was opened on: the file and whether a WAL is beside it."""
        return (_stat_tuple(self.path), os.path.exists(f"{self.path}-wal"))

    def _connect_read_only(self) -> sqlite3.Connection:
        """The file opened read-only, or an empty in-memory index when there is none (or it
        was found unusable). `mode=ro` alone would create the -wal and -shm sidecars of a
        WAL database that has none; with no WAL beside it the file is opened `immutable`
        (nothing is created or locked), and any change to it reopens it (`_file_state`)."""
        state = self._file_state()
        if self._memory_only or state[0] is None:
            return self._use_memory(None)
        quoted = self.path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
        mode = "ro" if state[1] else "ro&immutable=1"
        conn = sqlite3.connect(
            f"file:{quoted}?mode={mode}",
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            conn.execute("PRAGMA trusted_schema=OFF")
            if not _check_schema(conn):
                conn.close()
                return self._use_memory(None)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._opened = state
        return conn

    def _use_memory(self, source: sqlite3.Connection | None) -> sqlite3.Connection:
        """(read-only) Switch to an in-memory index: a copy of `source`, else empty."""
        mem = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        if source is not None:
            source.backup(mem)
            with contextlib.suppress(sqlite3.Error):
                source.close()
        else:
            mem.executescript(_SCHEMA)
        self._conn = mem
        self.in_memory = True
        return mem

    def release(self) -> None:
        """Close the connection but keep what was learnt (the next use reopens it): a writer
        that holds no file open lets the file system be remounted or unmounted."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        self.in_memory = False
        self._opened = None
        self._checked = None
        self._cache = {}
        self._cached_events = 0
        self._ids = {}
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _discard_file(self) -> None:
        """Delete the index and its WAL files (it is derived state: nothing is lost); a
        read-only index leaves them alone and builds an in-memory one instead."""
        self.close()
        if self.read_only:
            self._memory_only = True
            return
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):  # a failure shows when it is opened again
                os.unlink(f"{self.path}{suffix}")

    # -- reading -------------------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[PersistentRecallIndex]:
        """The index brought up to date, inside a read transaction for the search."""
        conn = self._with_recovery(self._refresh_and_begin)
        try:
            yield self
        except (sqlite3.Error, *_DAMAGE) as exc:  # a row the search could not use: rebuild
            self._discard_file()
            raise RecallIndexUnavailable(f"{self.path}: {exc}") from exc
        finally:
            with contextlib.suppress(sqlite3.Error):  # (closed already when it was discarded)
                if conn.in_transaction:
                    conn.execute("COMMIT")

    def refresh(self) -> SyncReport:
        """Bring the file up to date with the chunks (what `repair` and a pass's hook call)."""
        conn = self._with_recovery(self._refresh_and_begin)
        with contextlib.suppress(sqlite3.Error):
            conn.execute("COMMIT")
        return self.last_sync

    def catch_up(self) -> SyncReport:
        """What a pass's hook calls: add the entries the pass appended to index.yaml, without
        checking every chunk file (at 10k chunks that check was most of the hook's time; the
        next query makes it before answering). Anything but an append updates as `refresh`."""

        def write() -> sqlite3.Connection:
            conn = self._connect()
            self._write(conn)
            return self._conn or conn

        self._with_recovery(write)
        return self.last_sync

    def rebuild(self) -> SyncReport:
        """Delete the file and build it again from the chunk files."""
        self._discard_file()
        return self.refresh()

    def _with_recovery(self, action: Callable[[], sqlite3.Connection]) -> sqlite3.Connection:
        try:
            return action()
        except (sqlite3.Error, OSError, *_DAMAGE) as exc:
            if _busy(exc):  # another process is writing it: healthy, not ours to delete
                self.release()
                raise RecallIndexUnavailable(
                    f"{self.path}: another process is updating it ({exc})"
                ) from exc
            again = "searching a copy in memory" if self.read_only else "rebuilding it"
            self.warnings.append(f"{self.path}: {exc}; {again} from the chunk files")
        self._discard_file()
        try:
            conn = action()
        except (sqlite3.Error, OSError, *_DAMAGE) as exc:
            self.close()
            raise RecallIndexUnavailable(f"{self.path}: {exc}") from exc
        self.last_sync = SyncReport(self.last_sync.added, True, "unreadable")
        return conn

    def _refresh_and_begin(self) -> sqlite3.Connection:
        """Check the file against the chunks; update it if it lags; return inside a read
        transaction on an up-to-date file."""
        conn = self._connect()
        for _ in range(3):
            conn.execute("BEGIN")
            stored = self._read_stored(conn)
            work = self._plan(stored)
            if work is None:
                self._ids = stored.ids
                return conn
            conn.execute("COMMIT")
            self._write(conn)
            conn = self._conn or conn  # (read-only: now the copy in memory)
        raise sqlite3.OperationalError("the index keeps changing under this process")

    def _read_stored(self, conn: sqlite3.Connection) -> _Stored:
        meta = _meta(conn)
        generation = (meta.get("generation"), meta.get("count"))
        keys: list[tuple[str, str]] | None = None
        if self._checked is not None and self._checked[0] == generation and self._ids:
            ids = self._ids
        else:
            rows = _chunk_rows(conn, "no")
            ids = {no: cid for no, cid, _ in rows}
            keys = [(cid, key) for _, cid, key in rows]
        return _Stored(
            fmt=meta.get("format"),
            index_key=meta.get("index_key"),
            ids=ids,
            next_no=int(meta.get("next_no", "1")),
            generation=generation,
            keys=keys,
        )

    def _fingerprint(self) -> tuple[object, ...]:
        return (
            _stat_tuple(self.index_yaml),
            _stat_tuple(self.chunks_dir),
            self.in_memory or _stat_tuple(self.path),
        )

    def _plan(self, stored: _Stored) -> str | None:
        """None when the file matches the chunks, else why not (the writer redoes the check
        under its write lock)."""
        if stored.fmt != FORMAT:
            return "format"
        index_key = _stat_text(self.index_yaml)
        if stored.index_key != index_key:
            return "index.yaml changed"
        fingerprint = (
            (stored.index_key, len(stored.ids)),
            self._fingerprint(),
        )
        if self._checked is not None and self._checked[1:] == fingerprint:
            return None
        assert self._conn is not None
        keys = stored.keys
        if keys is None:
            keys = [(cid, key) for cid, key in _chunk_rows(self._conn)]
        changed = _first_changed(self.chunks_dir, keys)
        if changed is not None:
            return f"{changed} changed"
        self._checked = (stored.generation, *fingerprint)
        return None

    # -- writing -------------------------------------------------------------------------

    def _write(self, conn: sqlite3.Connection) -> None:
        """Under the write lock: add the chunks index.yaml lists that the file lacks, or
        rebuild it when anything it holds no longer matches."""
        if self.read_only and not self.in_memory:
            conn = self._use_memory(conn)  # never write the file: update a copy in memory
        conn.execute("BEGIN IMMEDIATE")
        try:
            meta = _meta(conn)
            index_key = _stat_text(self.index_yaml)
            # A pass appended its entry: add it alone. Neither the stored summaries nor every
            # chunk file's stat is read here (at 10k chunks that was most of the update); the
            # query path checks the files before answering and sends a change back here.
            known = {cid for (cid,) in conn.execute("SELECT chunk_id FROM chunks")}
            appended = None
            if meta.get("format") == FORMAT:
                appended = self._appended_entries(meta.get("index_end"), known)
            if appended is not None:
                entries, index_end = appended
                rebuild = False
            else:
                stored = {cid: (summary, key) for summary, cid, key in _chunk_rows(conn, "summary")}
                files_match = (
                    _first_changed(self.chunks_dir, [(c, k) for c, (_, k) in stored.items()])
                    is None
                )
                entries, index_end = self._all_entries()
                wanted = {e.chunk_id: e for e in entries}
                rebuild = (
                    meta.get("format") != FORMAT
                    or not files_match
                    or any(
                        cid not in wanted or wanted[cid].summary != summary
                        for cid, (summary, _) in stored.items()
                    )
                )
            generation = int(meta.get("generation", "0"))
            if rebuild:
                conn.execute("DELETE FROM post")
                conn.execute("DELETE FROM chunks")
                known = set()
                generation += 1
                next_no = 1
            else:
                next_no = int(meta.get("next_no", "1"))
            added = 0
            for entry in entries:
                if entry.chunk_id in known:
                    continue
                self._insert(conn, next_no, entry)
                next_no += 1
                added += 1
            count = len(known) + added
            conn.executemany(
                "INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)",
                [
                    ("format", FORMAT),
                    ("index_key", index_key),
                    ("next_no", str(next_no)),
                    ("generation", str(generation)),
                    ("count", str(count)),
                    ("index_end", index_end),
                ],
            )
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        self._checked = None
        if rebuild:
            self._cache.clear()
            self._cached_events = 0
        self.last_sync = SyncReport(added, rebuild, "" if not rebuild else "chunks changed")

    def _all_entries(self) -> tuple[list[ChunkEntry], str]:
        """Every entry of index.yaml (a full parse), and the stamp of the bytes it holds
        (core.index.stamp: taken first, so it is never newer than the entries)."""
        from core.index.reader import read_index
        from core.index.stamp import read_stamp

        stamp = read_stamp(self.index_yaml)
        entries = read_index(self.paths).entries  # its errors (not a regular file, …) stand
        return entries, "" if stamp is None else stamp.text()

    def _appended_entries(
        self, index_end: str | None, stored: Iterable[str]
    ) -> tuple[list[ChunkEntry], str] | None:
        """When index.yaml only grew since the last update (a pass appends its entry), the
        entries after the stamp `index_end`, parsed alone (core.index.stamp.appended_since,
        as the chunk catalog catches up); None when anything else happened, or nothing was
        appended (the same size, yet changed: rewritten in place): then the whole file is
        parsed."""
        from core.index.stamp import IndexStamp, appended_since

        stamp = IndexStamp.parse(index_end)
        if stamp is None:
            return None
        appended = appended_since(self.index_yaml, stamp, stored)
        if appended is None or not appended.entries:
            return None
        return [entry for entry, _, _ in appended.entries], appended.stamp().text()

    def _insert(self, conn: sqlite3.Connection, no: int, entry: ChunkEntry) -> None:
        cid = entry.chunk_id
        key = _file_key_str(str(self.paths.chunk_file(cid)))  # the id validated; before the
        events = self._read(cid) if key else []  # read: a file replaced meanwhile is "changed"
        stats = analyze_texts(entry.summary, (event_search_text(e) for e in events))
        conn.execute(
            "INSERT INTO chunks (no, chunk_id, summary, file_key) VALUES (?, ?, ?, ?)",
            (no, cid, entry.summary, key),
        )
        conn.executemany(
            "INSERT INTO post (term, no, best, total) VALUES (?, ?, ?, ?)",
            [(term, no, best, total) for term, (best, total) in sorted(stats.items())],
        )

    # -- core.recall.ranking.Corpus --------------------------------------------------------------

    def doc_count(self) -> int:
        return len(self._ids)

    def doc_freq(self, terms: Sequence[str]) -> Mapping[str, int]:
        conn = self._conn
        assert conn is not None, "doc_freq() outside reading()"
        out: dict[str, int] = {}
        for term in terms:
            (n,) = conn.execute("SELECT count(*) FROM post WHERE term = ?", (term,)).fetchone()
            if n:
                out[term] = int(n)
        return out

    def term_stats(self, terms: Sequence[str]) -> Mapping[str, TermBound]:
        """Counted and maximised in SQLite over the term's rows (no row reaches Python)."""
        conn = self._conn
        assert conn is not None, "term_stats() outside reading()"
        out: dict[str, TermBound] = {}
        for term in terms:
            n, best, rest = conn.execute(
                "SELECT count(*), max(best), max(total - best) FROM post WHERE term = ?", (term,)
            ).fetchone()
            if n:
                out[term] = (int(n), int(best), int(rest))
        return out

    def postings_for(self, term: str, keys: Sequence[Hashable]) -> Sequence[Posting]:
        conn = self._conn
        assert conn is not None, "postings_for() outside reading()"
        out: list[Posting] = []
        for at in range(0, len(keys), 500):
            batch = list(keys[at : at + 500])
            marks = ",".join("?" * len(batch))
            out += conn.execute(
                f"SELECT no, best, total FROM post WHERE term = ? AND no IN ({marks})",
                (term, *batch),
            ).fetchall()
        return out

    def postings(self, terms: Sequence[str]) -> Mapping[str, Sequence[Posting]]:
        conn = self._conn
        assert conn is not None, "postings() outside reading()"
        out: dict[str, Sequence[Posting]] = {}
        for term in terms:
            rows = conn.execute(
                "SELECT no, best, total FROM post WHERE term = ?", (term,)
            ).fetchall()
            if rows:
                out[term] = rows
        return out

    def doc(self, key: Hashable) -> RecallDoc:
        conn = self._conn
        assert conn is not None, "doc() outside reading()"
        row = conn.execute("SELECT chunk_id, summary FROM chunks WHERE no = ?", (key,)).fetchone()
        # Only a chunk the checked rows hold (its id validated): a posting of another number,
        # or a row changed since, is a damaged file, never a path to open.
        if row is None or self._ids.get(key) != row[0] or not isinstance(row[1], str):  # type: ignore[call-overload]
            raise DamagedIndex(f"malformed posting (chunk number {key!r})")
        cid, summary = row
        return RecallDoc(cid, "active", summary, (), load=lambda: self._events(cid))

    def _events(self, chunk_id: str) -> Sequence[Event]:
        """A chunk's events, the chunks of the last EVENTS_CACHED events kept (chunk files are
        written once; a changed one makes the index stale, and a rebuild clears this)."""
        if self.line_filter is not None and self._read_events is None:
            return _read_chunk_at(self.chunks_dir, chunk_id, lambda: self.paths, self.line_filter)
        cached = self._cache.pop(chunk_id, None)
        if cached is None:
            cached = EventTexts(self._read(chunk_id))
            self._cached_events += len(cached)
        self._cache[chunk_id] = cached
        while self._cached_events > EVENTS_CACHED and len(self._cache) > 1:
            self._cached_events -= len(self._cache.pop(next(iter(self._cache))))
        return cached

    def chunk_ids(self) -> list[str]:
        """The indexed chunk ids in index order (kept until the ids change)."""
        if self._chunk_ids[0] is not self._ids:
            self._chunk_ids = (self._ids, [self._ids[no] for no in sorted(self._ids)])
        return list(self._chunk_ids[1])

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.stat(f"{self.path}{suffix}").st_size
        return total


# -- a cold recall -------------------------------------------------------------------------


def read_chunk_file(paths: MemoryPaths, chunk_id: str) -> list[Event]:
    """A chunk's events as `core.index.chunk_files.read_chunk_events` gives them, without
    importing the store: a clean file (every line a JSON object with a type or role, string
    fields strings, a final newline) is parsed here; anything else goes to the canonical
    reader. A missing or unreadable file gives no events (the summary is still searchable)."""
    return _read_chunk_at(str(paths.chunks_dir), chunk_id, lambda: paths)


def _read_chunk_at(
    folder: str,
    chunk_id: str,
    paths: Callable[[], MemoryPaths],
    needles: tuple[bytes, ...] | None = None,
) -> list[Event]:
    """`read_chunk_file` of the chunks folder `folder` (`paths` only for an unclean file).

    With `needles` (a query's terms, lowercased), a line is parsed only when it can match:
    it has a needle in its lowercased bytes, a byte outside ASCII (NFKC could fold it into
    a term) or a backslash (a JSON escape could hide one). A skipped line is an event
    recall would neither list nor find a phrase in, so a search's answer is the same."""
    from core.store.atomic import read_regular

    read = read_regular(f"{folder}/{chunk_id}.jsonl")
    if read is None:  # missing, unreadable or not a regular file (a FIFO would block)
        return []
    data = read[1]
    from json import loads

    events: list[Event] = []
    clean = not data or data.endswith(b"\n")
    if clean:
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            if needles is not None and raw.isascii() and b"\\" not in raw:
                low = raw.lower()
                if not any(n in low for n in needles):
                    continue
            try:
                obj = loads(raw)
            except ValueError:
                clean = False
                break
            if not _plain_event(obj):
                clean = False
                break
            events.append(obj)
    if clean:
        return events
    from core.index.chunk_files import read_chunk_events

    try:
        return read_chunk_events(paths(), chunk_id)[0]
    except StoreError:
        return []


def _plain_event(obj: Any) -> bool:
    """An object `core.events.validate_event` accepts as it is."""
    if not isinstance(obj, dict) or not (obj.get("type") or obj.get("role")):
        return False
    for key in ("id", "type", "role", "ts", "name", "tool_call_id", "run_id"):
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            return False
    if obj.get("id") == "":
        return False
    meta = obj.get("meta")
    return meta is None or isinstance(meta, dict)


def recall_once(
    memory_dir: Path | str, query: str, limit: int = 5, *, read_only: bool = False
) -> RecallResult | None:
    """A recall from a fresh process (an agent's recall tool): the active session's chunks
    through recall.sqlite, importing neither the manager, the store, pathlib nor typing. None
    when this path cannot give the manager's exact answer (pending evidence to consider, no
    index file yet, or the index is unusable): then use `MemoryManager.recall`, which handles
    every case. `read_only`: write nothing under the memory root (a stale index is brought up
    to date in a copy in memory)."""
    store = PersistentRecallIndex.at(os.fspath(memory_dir), read_only=read_only)
    try:
        with os.scandir(f"{store.chunks_dir}/pending") as listing:
            if any(listing):
                return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    if not os.path.exists(store.index_yaml) or (read_only and not os.path.exists(store.path)):
        return None
    from core.recall.ranking import query_terms

    store.line_filter = tuple(t.encode() for t in query_terms(query).weights)
    try:
        with store.reading():
            if store.warnings:
                return None
            return search([Part(store)], query, limit)
    except (RecallIndexUnavailable, SessionMemoryError):  # the manager says what is wrong
        return None
    finally:
        store.close()
