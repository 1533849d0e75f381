"""Atomic file replacement (contract §1): a reader sees the old file or the new one, never half.

A temporary file in the same folder is written, flushed and fsynced, then `os.replace`d over the
target and the folder is fsynced so the rename itself survives a power loss. On any failure the
temporary file is removed and the previous file stays as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator

from core.errors import StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:  # a cold recall (core.recall.sqlite_index) reads through here without pathlib
    from pathlib import Path

_DIR_FSYNC_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.EACCES})
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
TEMP_NAME_RE = re.compile(r"^\..+\.[0-9a-f]{12}\.tmp$")
"""Names of `atomic_write_bytes` temporary files (left behind only by a writer that died)."""


def os_reason(exc: OSError) -> str:
    """What went wrong, in the system's words (`No space left on device`), for an error line."""
    return exc.strerror or str(exc)


def fsync_dir(path: Path | str) -> None:
    """fsync a folder so renames and creations in it are durable.

    File systems that cannot fsync a folder (EINVAL and the like) are tolerated; a real I/O
    error is a StoreError naming the folder.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise StoreError(f"cannot open folder {path}: {os_reason(exc)}") from exc
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _DIR_FSYNC_UNSUPPORTED:
            raise StoreError(f"cannot sync folder {path}: {os_reason(exc)}") from exc
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _not_regular(path: Path | str, mode: int) -> OSError:
    return OSError(
        errno.EINVAL,
        f"not a regular file ({_kind(mode)}); move it away or run repair",
        str(path),
    )


def open_no_symlink(path: Path | str, flags: int, mode: int = 0o666) -> int:
    """`os.open` refusing a symbolic link as the file itself (O_NOFOLLOW), and anything but a
    regular file (a FIFO or a device would hang the reader or swallow an append).

    The folders are checked to resolve inside the memory root; this keeps a link planted as
    `events.jsonl` or `chunks/<id>.jsonl` from leading a read or an append out of it. The open
    is O_NONBLOCK so a FIFO cannot block it; `fstat` then refuses what is not a regular file
    (O_NONBLOCK means nothing for a regular file, so the descriptor behaves as usual).
    """
    try:
        fd = os.open(path, flags | _NO_FOLLOW | os.O_NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):
            raise OSError(
                errno.ELOOP, "refusing a symbolic link (links are never followed here)", str(path)
            ) from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):
            # ENXIO: a FIFO opened for writing with no reader; EISDIR: a folder.
            try:
                found = os.lstat(path).st_mode
            except OSError:
                raise exc from None
            if not stat.S_ISREG(found):
                raise _not_regular(path, found) from None
        raise
    try:
        st_mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st_mode):
        os.close(fd)
        raise _not_regular(path, st_mode)
    return fd


def read_bytes_no_symlink(path: Path | str) -> bytes:
    """The bytes of a regular file, never through a symbolic link (see `open_no_symlink`)."""
    with os.fdopen(open_no_symlink(path, os.O_RDONLY), "rb") as fh:
        return fh.read()


def read_regular(
    path: Path | str, offset: int = 0, *, tail: int | None = None
) -> tuple[os.stat_result, bytes] | None:
    """A regular file's stat and its bytes from `offset` to its end (`tail`: from
    max(0, size - tail) instead, its last `tail` bytes); None when it is missing, unreadable,
    a symbolic link or not a regular file (see `open_no_symlink`: a FIFO put in its place
    never hangs the reader)."""
    try:
        fd = open_no_symlink(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        at = offset if tail is None else max(0, st.st_size - tail)
        parts: list[bytes] = []
        while part := os.pread(fd, 1 << 20, at):
            parts.append(part)
            at += len(part)
        return st, b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


def refuse_link_or_kind(
    path: Path | str,
    is_kind: Callable[[int], bool],
    error: Callable[[str], Exception],
    *,
    unreadable: Callable[[Path | str, OSError], str],
    link: str,
    other: str,
) -> None:
    """Raise `error(link)` when `path` is a symbolic link, `error(other)` when it is anything
    `is_kind` (a `stat.S_IS*` test of its mode) refuses, `error(unreadable(path, exc))` when
    it cannot be checked; return when nothing is there or it is of that kind. lstat: a link is
    never followed."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise error(unreadable(path, exc)) from exc
    if stat.S_ISLNK(mode):
        raise error(link)
    if not is_kind(mode):
        raise error(other)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd` (one `os.write` may write fewer)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def append_mended(fd: int, data: bytes) -> None:
    """Write `data` to `fd` (opened O_APPEND and readable), on a new line when the file's last
    byte is not a newline (a torn append before)."""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        data = b"\n" + data
    write_all(fd, data)


def read_tail(path: Path | str, limit: int) -> tuple[bytes, int] | None:
    """The last `limit` bytes of the file and the offset they start at, never through a link;
    None when the file cannot be opened (a read error after that raises OSError)."""
    try:
        fd = open_no_symlink(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - limit)
        return os.pread(fd, size - start, start), start
    finally:
        os.close(fd)


def append_synced(path: Path | str, data: bytes, *, mend: bool = False) -> None:
    """Append `data` to the existing regular file `path` and fsync it: what follows (a
    rename, a deletion of the evidence) may rely on the bytes being durable. `mend`: create
    the file when it is missing, and start on a new line when its last line has no newline (a
    torn append before). Never through a link (`open_no_symlink`); StoreError (one line,
    naming `path`) on failure."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT if mend else os.O_WRONLY | os.O_APPEND
    try:
        fd = open_no_symlink(path, flags)
        try:
            if mend:
                append_mended(fd, data)
            else:
                write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {os_reason(exc)}") from exc


def stage_bytes(path: Path | str, data: bytes) -> Path:
    """`data` in a new temporary file beside `path`, written and fsynced, not yet renamed over
    it: publishing it is one `os.replace`. Its name matches TEMP_NAME_RE, so recovery sweeps
    one a crash leaves. StoreError (one line, naming `path`) on failure, the temp file gone."""
    import secrets
    from pathlib import Path

    target = Path(path)
    tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    try:
        # 0o666 filtered by the umask: the same mode a plain open() would give the file.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise StoreError(f"cannot write {target}: {os_reason(exc)}") from exc
    with _removed_on_failure(tmp, target):
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    return tmp


def publish(tmp: Path | str, path: Path | str) -> None:
    """Rename the staged `tmp` over `path` (the folder is not fsynced: the caller does it,
    at once or once after several renames). StoreError naming `path`, `tmp` gone, on failure."""
    with _removed_on_failure(tmp, path):
        os.replace(tmp, path)


@contextlib.contextmanager
def _removed_on_failure(tmp: Path | str, target: Path | str) -> Iterator[None]:
    """Remove `tmp` when the block fails; an OSError becomes one StoreError naming `target`."""
    try:
        yield
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise StoreError(f"cannot write {target}: {os_reason(exc)}") from exc
        raise


def atomic_write_bytes(path: Path | str, data: bytes, *, sync_folder: bool = True) -> None:
    """Replace `path` with `data` atomically; StoreError (one line, naming the file) on failure.

    `sync_folder=False`: the caller fsyncs the folder itself later (a pass does it outside the
    session lock, before anything depends on the rename being durable)."""
    from pathlib import Path

    target = Path(path)
    publish(stage_bytes(target, data), target)
    if sync_folder:
        fsync_dir(target.parent)


def atomic_write_text(path: Path | str, text: str) -> None:
    """UTF-8 text through `atomic_write_bytes`."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StoreError(f"cannot write {path}: text is not valid Unicode ({exc.reason})") from exc
    atomic_write_bytes(path, data)


__all__ = [
    "TEMP_NAME_RE",
    "append_synced",
    "atomic_write_bytes",
    "atomic_write_text",
    "fsync_dir",
    "open_no_symlink",
    "os_reason",
    "publish",
    "read_bytes_no_symlink",
    "read_regular",
    "refuse_link_or_kind",
    "stage_bytes",
    "write_all",
]
