"""Watching a memory root for changes made by any process (an agent, the CLI, the TUI itself).

Directories are watched, never single files: every rewrite is an atomic `os.replace`, which a
watch on the old file would miss, and rotation renames `session/` away. The memory root is
watched recursively (session/, chunks/, chunks/pending/, session_archive/), changes are grouped
by watchfiles for at most `debounce_ms`, then coalesced per view ("events", "state", "summary",
"chunks", "archive", "session") so each view reloads once per burst. With `poll=True`, or when
the OS gives no notifications, the watcher polls instead: it stats the few folders it cares
about every `poll_delay_ms` and compares inode, size and mtime (in ns) of each entry, which also
catches an atomic replace within the same second (watchfiles' poll mode misses those).

UI-agnostic: the caller passes `on_change` and runs `run()` in a thread; `stop()` ends it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import watchfiles

VIEWS = ("events", "state", "summary", "chunks", "archive", "session")

_IGNORED_NAMES = frozenset({".session.lock", ".maintenance.lock"})


@dataclass(frozen=True)
class Change:
    """One coalesced burst of changes."""

    views: frozenset[str]
    paths: tuple[str, ...]
    """Paths relative to the memory root, sorted (for the activity log)."""
    at: float
    """time.monotonic() when the burst was delivered."""


def classify(root: Path, path: str) -> str | None:
    """The view a changed path belongs to, or None when it is none of the inspector's business."""
    try:
        rel = Path(path).relative_to(root)
    except ValueError:
        return None
    parts = rel.parts
    if not parts or parts[-1] in _IGNORED_NAMES:
        return None
    if parts[0] == "session_archive":
        return "archive"
    if parts[0] != "session":
        return None
    if len(parts) == 1:
        return "session"
    name = parts[1]
    if name == "chunks":
        return "chunks"
    if name == "events.jsonl" or name == "corrupt.jsonl":
        return "events"
    if name == "state.json":
        return "state"
    if name in ("summary.md", "summary_archive.md"):
        return "summary"
    return None


def coalesce(root: Path, raw: Iterable[tuple[object, str]]) -> Change | None:
    views: set[str] = set()
    paths: set[str] = set()
    for _kind, path in raw:
        view = classify(root, path)
        if view is None:
            continue
        views.add(view)
        try:
            paths.add(str(Path(path).relative_to(root)))
        except ValueError:
            paths.add(path)
    if not views:
        return None
    return Change(frozenset(views), tuple(sorted(paths)), time.monotonic())


class MemoryWatcher:
    """Delivers `Change`s for a memory root until stopped; `mode` is "watching" or "polling"."""

    def __init__(
        self,
        root: Path,
        on_change: Callable[[Change], None],
        *,
        poll: bool = False,
        debounce_ms: int = 100,
        step_ms: int = 20,
        poll_delay_ms: int = 50,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.on_change = on_change
        self.on_error = on_error
        self.force_polling = poll
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.poll_delay_ms = poll_delay_ms
        self._stop = threading.Event()

    @property
    def mode(self) -> str:
        return "polling" if self.force_polling else "watching"

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _scan(self) -> dict[str, tuple[int, int, int]]:
        """Stat every entry of the watched folders (not recursive beyond them)."""
        out: dict[str, tuple[int, int, int]] = {}
        session = self.root / "session"
        folders = [session, session / "chunks", session / "chunks" / "pending"]
        archive = self.root / "session_archive"
        folders.append(archive)
        for folder in folders:
            try:
                st = os.stat(folder)
            except OSError:
                continue
            out[str(folder)] = (st.st_ino, 0, st.st_mtime_ns)
            try:
                with os.scandir(folder) as it:
                    for entry in it:
                        try:
                            est = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        out[entry.path] = (est.st_ino, est.st_size, est.st_mtime_ns)
            except OSError:
                continue
        return out

    def _poll_loop(self) -> None:
        delay = self.poll_delay_ms / 1000
        before = self._scan()
        while not self._stop.wait(delay):
            now = self._scan()
            if now == before:
                continue
            # Group a burst: rescan every step until quiet or the debounce limit.
            start = time.monotonic()
            while time.monotonic() - start < self.debounce_ms / 1000:
                if self._stop.wait(self.step_ms / 1000):
                    return
                later = self._scan()
                if later == now:
                    break
                now = later
            changed = {p for p in before.keys() | now.keys() if before.get(p) != now.get(p)}
            before = now
            change = coalesce(self.root, ((None, p) for p in changed))
            if change is not None:
                self.on_change(change)

    def run(self) -> None:
        """Block, delivering changes, until `stop()`; survives the root vanishing and returning."""
        if self.force_polling:
            self._poll_loop()
            return
        while not self._stop.is_set():
            if not self.root.is_dir():
                # Nothing to watch yet (a root created later): look again shortly.
                if self._stop.wait(self.poll_delay_ms / 1000):
                    return
                if self.root.is_dir():
                    self.on_change(Change(frozenset(VIEWS), ("",), time.monotonic()))
                continue
            try:
                for raw in watchfiles.watch(
                    self.root,
                    watch_filter=None,
                    debounce=self.debounce_ms,
                    step=self.step_ms,
                    stop_event=self._stop,
                    force_polling=self.force_polling,
                    poll_delay_ms=self.poll_delay_ms,
                    recursive=True,
                    raise_interrupt=False,
                    ignore_permission_denied=True,
                    yield_on_timeout=False,
                    rust_timeout=0,
                ):
                    change = coalesce(self.root, raw)
                    if change is not None:
                        self.on_change(change)
            except (OSError, RuntimeError) as exc:
                if self._stop.is_set():
                    return
                if self.on_error is not None:
                    self.on_error(f"file watching failed ({exc}); polling instead")
                self.force_polling = True
                self.on_change(Change(frozenset(VIEWS), ("",), time.monotonic()))
                self._poll_loop()
                return
            else:
                # The generator ends when stopped, or when the watched root went away.
                if not self._stop.is_set():
                    self.on_change(Change(frozenset(VIEWS), ("",), time.monotonic()))
                    self._stop.wait(self.poll_delay_ms / 1000)


# -- what changed, for the activity log --------------------------------------------------


def file_sizes(root: Path, paths: tuple[str, ...]) -> dict[str, int | None]:
    """The size of each changed file now (None when it is gone or is not a regular file)."""
    out: dict[str, int | None] = {}
    for rel in paths[:50]:
        try:
            st = (root / rel).stat()
        except OSError:
            out[rel] = None
            continue
        out[rel] = st.st_size if not (root / rel).is_dir() else None
    return out


def initial_sizes(root: Path) -> dict[str, int | None]:
    """Sizes of the files of session/ and session/chunks/ (relative paths), best effort."""
    out: dict[str, int | None] = {}
    for folder in ("session", "session/chunks", "session/chunks/pending"):
        try:
            with os.scandir(root / folder) as it:
                for entry in it:
                    if entry.is_file(follow_symlinks=False):
                        out[f"{folder}/{entry.name}"] = entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return out


def _size(n: int) -> str:
    sign = "-" if n < 0 else ""
    n = abs(n)
    if n < 1024:
        return f"{sign}{n} B"
    if n < 1024 * 1024:
        return f"{sign}{n / 1024:.1f} KB"
    return f"{sign}{n / 1024 / 1024:.1f} MB"


def describe_file_change(rel: str, before: int | None, now: int | None) -> str:
    """ "session/events.jsonl +1.2 KB (45.3 KB)", "… new (3 KB)", "… removed", "… rewritten"."""
    if now is None:
        return f"{rel} removed" if before is not None else f"{rel} changed"
    if before is None:
        return f"{rel} new ({_size(now)})"
    delta = now - before
    if delta == 0:
        return f"{rel} rewritten ({_size(now)})"
    return f"{rel} {'+' if delta > 0 else ''}{_size(delta)} ({_size(now)})"
