"""The prompt ledger: `session/prompts.jsonl`, one line per model call (contract §1).

Every `MemoryManager.build_prompt` appends a `call` line saying what the model got, part by
part, small enough that the prompt can be rebuilt byte for byte later (core.timeline):

- the system prompt, the task and summary.md by content address: their text is written once to
  `session/prompt_texts/<sha256>.txt` and the line names the digest;
- the hot window as a compact range of event ids (`first`, `last`, `n`) plus, by id and
  position, the pinned root (the window's first `user_input`, which stays at the top of the
  window while the events after it are compacted) and the synthetic split-turn events (which a
  pass places after the root); every other event of the window is found later in the chunk files
  or events.jsonl, in the order the session appended them (events are immutable);
- a digest and a token estimate of each part.

`record_prompt_tokens` appends a `measured` line naming the call it measured; a pass appends a
`pass` line. The fields are documented in docs/FORMATS.md.

Cost: the line is one `write` on an O_APPEND descriptor, never under the session lock and
never fsynced (the ledger is a record for people, not state the engine relies on: a power
cut may lose its last lines, which readers then do without). Digests of the hot window's
events and of repeated texts are cached, so a call whose texts were seen before costs a few
dictionary lookups, one `json.dumps` and the write. Readers ignore a line that does not parse
(a torn last line); a writer that finds the file ending without a newline starts on a new one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import BadInputError, StoreError
from core.events import Event, is_synthetic, now_ts
from core.store.atomic import (
    append_mended,
    open_no_symlink,
    read_bytes_no_symlink,
    read_tail,
    write_all,
)
from core.store.paths import MemoryPaths
from core.tokens import estimate_event_tokens, estimate_tokens

LEDGER_NAME = "prompts.jsonl"
TEXTS_DIR = "prompt_texts"
LEDGER_VERSION = 1
TAIL_BYTES = 65536
"""How much of the ledger's end `last_call_id` reads to find the latest call."""
_TEXT_CACHE_MAX = 256
_SHA_RE_LEN = 64


def ledger_path(paths: MemoryPaths) -> Path:
    return paths.session / LEDGER_NAME


def texts_dir(paths: MemoryPaths) -> Path:
    return paths.session / TEXTS_DIR


def text_bytes(text: str) -> bytes:
    """The bytes a text is stored and addressed by (lone surrogates kept, as JSON allows)."""
    return text.encode("utf-8", "surrogatepass")


def text_sha(text: str) -> str:
    return hashlib.sha256(text_bytes(text)).hexdigest()


def event_digest(event: Event) -> bytes:
    """16 bytes naming an event's content (keys sorted, so a writer's key order is no matter)."""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.blake2b(text_bytes(data), digest_size=16).digest()


def hot_digest(digests: Sequence[bytes]) -> str:
    """The hot window's digest: over its events' digests, in order."""
    return hashlib.blake2b(b"".join(digests), digest_size=16).hexdigest()


def valid_sha(value: object) -> bool:
    return (
        isinstance(value, str)
        and len(value) == _SHA_RE_LEN
        and all(c in "0123456789abcdef" for c in value)
    )


def text_file(paths: MemoryPaths, sha: str) -> Path:
    if not valid_sha(sha):
        raise StoreError(f"not a text digest: {sha!r:.80}")
    return texts_dir(paths) / f"{sha}.txt"


def read_text(paths: MemoryPaths, sha: str) -> str | None:
    """The stored text with this digest; None when it is missing or does not match it."""
    try:
        data = read_bytes_no_symlink(text_file(paths, sha))
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != sha:
        return None
    return data.decode("utf-8", "surrogatepass")


def _write_text_file(paths: MemoryPaths, sha: str, data: bytes) -> None:
    """Write a text under its digest: a temporary file renamed into place (never a half file
    under the final name); not fsynced (see the module docstring)."""
    folder = texts_dir(paths)
    target = folder / f"{sha}.txt"
    if target.exists():
        return
    folder.mkdir(exist_ok=True)
    paths.ensure_inside_root(folder)
    tmp = folder / f".{sha}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
        "utf-8", "surrogatepass"
    )


def append_line(paths: MemoryPaths, obj: dict[str, Any], *, mend: bool = True) -> None:
    """Append one ledger line (one write on an O_APPEND descriptor; no lock, no fsync). `mend`:
    when the file ends without a newline (a torn line), start on a new line."""
    path = ledger_path(paths)
    data = _line(obj)
    fd = open_no_symlink(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        if mend:
            append_mended(fd, data)
        else:
            write_all(fd, data)
    finally:
        os.close(fd)


def last_call_id(paths: MemoryPaths) -> str | None:
    """The id of the latest `call` line (read from the ledger's end); None when there is none."""
    tail = read_tail(ledger_path(paths), TAIL_BYTES)
    if tail is None:
        return None
    data, start = tail
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]
    for raw in reversed(lines):
        if not raw.startswith(b'{"kind":"call"'):
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        cid = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(cid, str):
            return cid
    return None


def new_call_id() -> str:
    """Opaque and unique per session: 12 random hex digits after `c`."""
    return "c" + secrets.token_hex(6)


@dataclass
class _SessionMark:
    """What the writer knows of one session folder (a rotation makes a new one)."""

    inode: int
    texts: set[str] = field(default_factory=set)
    file: Any = None
    """The ledger opened for appending (unbuffered), kept while the folder is the same."""


@dataclass
class _HotState:
    """The hot-window part of the last call, kept so the next call only looks at the events
    appended since (a pass or rotation changes the window's start: it is computed again)."""

    ids: list[object] = field(default_factory=list)
    hasher: Any = None
    tokens: int = 0
    root: str | None = None
    root_at: int | None = None
    synthetic: list[list[Any]] = field(default_factory=list)
    first: str | None = None
    last: str | None = None
    n: int = 0
    resolvable: bool = True


class PromptLedger:
    """A manager's writer of `session/prompts.jsonl` (caches digests; one per manager)."""

    def __init__(self, paths: MemoryPaths) -> None:
        self.paths = paths
        self._mark: _SessionMark | None = None
        self._texts: dict[str, tuple[str, int]] = {}
        """text → (sha256, tokens), for the texts seen lately (system prompts, tasks, summaries)."""
        self._hot_state = _HotState()
        self.last_call_id: str | None = None

    def _session(self) -> _SessionMark:
        inode = os.stat(self.paths.session).st_ino
        mark = self._mark
        if mark is None or mark.inode != inode:
            self.close()
            mark = _SessionMark(inode)
            self._mark = mark
        return mark

    def close(self) -> None:
        """Close the kept descriptor (the manager's `close`; a new call opens it again)."""
        mark = self._mark
        if mark is not None and mark.file is not None:
            with contextlib.suppress(OSError):
                mark.file.close()
            mark.file = None

    def _text(self, text: str, mark: _SessionMark) -> tuple[str, int]:
        """(digest, tokens) of a text, stored once per session under its digest."""
        known = self._texts.get(text)
        if known is None:
            if len(self._texts) >= _TEXT_CACHE_MAX:
                self._texts.clear()
            data = text_bytes(text)
            known = (hashlib.sha256(data).hexdigest(), estimate_tokens(text))
            self._texts[text] = known
        sha = known[0]
        if sha not in mark.texts:
            _write_text_file(self.paths, sha, text_bytes(text))
            mark.texts.add(sha)
        return known

    def _hot(self, events: Sequence[Event]) -> dict[str, Any]:
        """The hot-window part of a call line (see the module docstring)."""
        ids = [e.get("id") for e in events]
        st = self._hot_state
        k = len(st.ids)
        if st.hasher is None or k > len(ids) or ids[:k] != st.ids:
            st = _HotState(hasher=hashlib.blake2b(digest_size=16))
            k = 0
        for i in range(k, len(events)):
            event = events[i]
            eid = ids[i]
            st.hasher.update(event_digest(event))
            st.tokens += estimate_event_tokens(event)
            if not isinstance(eid, str):
                st.resolvable = False
                continue
            if st.root is None and event.get("type") == "user_input":
                st.root, st.root_at = eid, i
                continue
            if is_synthetic(event):
                st.synthetic.append([i, eid])
                continue
            if st.first is None:
                st.first = eid
            st.last = eid
            st.n += 1
        st.ids = ids
        self._hot_state = st
        hot: dict[str, Any] = {
            "first": st.first,
            "last": st.last,
            "n": st.n,
            "root": st.root,
            "root_at": st.root_at,
            "synthetic": list(st.synthetic),
            "sha": st.hasher.copy().hexdigest(),
            "tokens": st.tokens,
        }
        if not st.resolvable:
            hot["unresolvable"] = True
        return hot

    def _append(self, mark: _SessionMark, obj: dict[str, Any]) -> None:
        """One write on the kept O_APPEND descriptor (opened, and a torn last line ended, on
        the first call in this session folder)."""
        if mark.file is not None and os.fstat(mark.file.fileno()).st_nlink == 0:
            self.close()  # the ledger was removed or replaced: open the one there now
        if mark.file is None:
            path = ledger_path(self.paths)
            fd = open_no_symlink(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    write_all(fd, b"\n")
            except BaseException:
                os.close(fd)
                raise
            mark.file = os.fdopen(fd, "ab", buffering=0)
        data = _line(obj)
        view = memoryview(data)
        while view:
            view = view[mark.file.write(view) :]

    def record_call(
        self,
        system_prompt: str,
        summary_md: str | None,
        hot_events: Sequence[Event],
        task: str,
        *,
        model: str | None,
        chunk_count: int,
        last_chunk_id: str | None,
        message_count: int,
    ) -> str:
        """Append the `call` line of one build_prompt; returns the call's id."""
        mark = self._session()
        system_sha, system_tokens = self._text(system_prompt, mark)
        task_sha, task_tokens = self._text(task, mark)
        summary: dict[str, Any] = {"sha": None, "tokens": 0}
        if summary_md and summary_md.strip():
            sha, tok = self._text(summary_md, mark)
            summary = {"sha": sha, "tokens": tok}
        summary["chunks"] = chunk_count
        summary["last_chunk"] = last_chunk_id
        hot = self._hot(hot_events)
        call_id = new_call_id()
        obj: dict[str, Any] = {
            "kind": "call",
            "v": LEDGER_VERSION,
            "id": call_id,
            "at": now_ts(),
            "model": model,
            "system": {"sha": system_sha, "tokens": system_tokens},
            "summary": summary,
            "hot": hot,
            "task": {"sha": task_sha, "tokens": task_tokens},
            "tokens": system_tokens + summary["tokens"] + hot["tokens"] + task_tokens,
            "messages": message_count,
        }
        try:
            self._append(mark, obj)
        except OSError:
            self.close()
            raise
        self.last_call_id = call_id
        return call_id

    def store_text(self, text: str) -> tuple[str, int]:
        """Store a text under its digest (a pass's summary.md after it); (sha, tokens)."""
        return self._text(text, self._session())


def record_measured(
    paths: MemoryPaths,
    prompt_tokens: int,
    *,
    model: str | None,
    after_event_id: str | None,
    call_id: str | None = None,
) -> None:
    """Append a `measured` line: the provider's prompt size of the latest call (read from the
    ledger's end unless given)."""
    if call_id is None:
        call_id = last_call_id(paths)
    append_line(
        paths,
        {
            "kind": "measured",
            "v": LEDGER_VERSION,
            "call": call_id,
            "at": now_ts(),
            "prompt_tokens": prompt_tokens,
            "model": model,
            "after_event_id": after_event_id,
        },
    )


# --------------------------------------------------------------------------- reading


CALL_PREFIX = b'{"kind":"call"'
"""How every call line starts (the writer puts `kind` first), so a reader can count and find
calls without parsing every line."""


def _call_slot(raw: bytes) -> bool:
    """Whether a line is a call's: a call line that was written whole. A call's number is its
    position among these, so a line damaged inside keeps the numbers after it as they were."""
    return raw.startswith(CALL_PREFIX) and raw.rstrip().endswith(b"}")


@dataclass
class LedgerRead:
    """Every line of a ledger, parsed, in file order; `bad_lines` counts those that did not
    parse (a torn last line among them) or had no known `kind`. Each call's object carries its
    number (from 1) under `_n`; `call_count` counts call lines, readable or not."""

    lines: list[dict[str, Any]]
    bad_lines: int = 0
    torn_tail: bool = False
    exists: bool = False
    call_count: int = 0

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [obj for obj in self.lines if obj.get("kind") == "call"]


KINDS = ("call", "measured", "pass")


def _read_bytes(paths: MemoryPaths) -> bytes | None:
    try:
        return read_bytes_no_symlink(ledger_path(paths))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {ledger_path(paths)}: {exc.strerror or exc}") from exc


def _parse_all(raws: list[bytes]) -> list[object]:
    """Each line parsed (an exception instance where one does not): the whole file in one
    `json.loads` of an array when every line parses (the common case), else line by line."""
    try:
        got = json.loads(b"[" + b",".join(raws) + b"]")
        if isinstance(got, list) and len(got) == len(raws):
            return got
    except (ValueError, RecursionError):
        pass
    out: list[object] = []
    for raw in raws:
        try:
            out.append(json.loads(raw))
        except (ValueError, RecursionError) as exc:
            out.append(exc)
    return out


def _start_read(paths: MemoryPaths) -> tuple[LedgerRead, list[bytes]]:
    """The ledger's raw lines and a LedgerRead to fill (exists, torn_tail set); no lines and
    an empty LedgerRead when the file is missing."""
    data = _read_bytes(paths)
    if data is None:
        return LedgerRead([]), []
    out = LedgerRead([], exists=True)
    raws = data.split(b"\n")
    if raws and raws[-1] != b"":
        out.torn_tail = True
    return out, raws


def read_ledger(paths: MemoryPaths) -> LedgerRead:
    """Parse `session/prompts.jsonl` (missing: empty). Never raises on bad lines."""
    out, raws = _start_read(paths)
    raws = [raw for raw in raws if raw.strip()]
    for raw, obj in zip(raws, _parse_all(raws), strict=True):
        slot = _call_slot(raw)
        if slot:
            out.call_count += 1
        if not isinstance(obj, dict) or obj.get("kind") not in KINDS:
            out.bad_lines += 1
            continue
        if obj["kind"] == "call":
            if not slot:
                out.bad_lines += 1
                continue
            obj["_n"] = out.call_count
        out.lines.append(obj)
    return out


_CALL_HEAD_RE = re.compile(rb'\{"kind":"call","v":1,"id":"([0-9A-Za-z_-]*)","at":"([0-9TZ:.+-]*)"')
_CALL_TAIL_RE = re.compile(rb',"tokens":(\d+),"messages":\d+\}\s*$')


def read_ledger_light(paths: MemoryPaths) -> LedgerRead:
    """`read_ledger` for a timeline that shows calls as points: a call line in the writer's
    layout becomes `{"kind": "call", "id", "at", "tokens", "light": True, "_n"}` read off its
    head and tail (no JSON parse; a 10,000-call ledger is mostly call lines); every other line,
    and a call line in another layout, is parsed whole. A full line is `find_call`'s."""
    out, raws = _start_read(paths)
    head_match = _CALL_HEAD_RE.match
    tail_search = _CALL_TAIL_RE.search
    rest: list[bytes] = []
    kinds: list[object] = []
    for raw in raws:
        if not raw.strip():
            continue
        if _call_slot(raw):
            out.call_count += 1
            head = head_match(raw)
            tail = tail_search(raw, len(raw) - 64) if head is not None else None
            if head is not None and tail is not None:
                kinds.append(
                    {
                        "kind": "call",
                        "id": head.group(1).decode("ascii"),
                        "at": head.group(2).decode("ascii"),
                        "tokens": int(tail.group(1)),
                        "light": True,
                        "_n": out.call_count,
                    }
                )
                continue
            kinds.append(out.call_count)
        else:
            kinds.append(None)
        rest.append(raw)
    parsed = iter(_parse_all(rest))
    for item in kinds:
        if isinstance(item, dict):
            out.lines.append(item)
            continue
        obj = next(parsed)
        if not isinstance(obj, dict) or obj.get("kind") not in KINDS:
            out.bad_lines += 1
            continue
        if obj["kind"] == "call":
            if not isinstance(item, int):
                out.bad_lines += 1
                continue
            obj["_n"] = item
        out.lines.append(obj)
    return out


@dataclass
class FoundCall:
    number: int
    call: dict[str, Any]
    measured: int | None
    """The provider's figure for it (the last `measured` line naming it), if any."""


def find_call(paths: MemoryPaths, spec: str) -> FoundCall:
    """The call `spec` names — its number (1 the first; negative counts from the end, -1 the
    latest) or its id — found without parsing the other lines. BadInputError naming what
    exists otherwise."""
    data = _read_bytes(paths) or b""
    starts: list[int] = []
    pos = 0
    for raw in data.split(b"\n"):
        if _call_slot(raw):
            starts.append(pos)
        pos += len(raw) + 1
    if not starts:
        raise BadInputError("the prompt ledger (session/prompts.jsonl) holds no model call yet")
    text = spec.strip()
    try:
        number = int(text)
    except ValueError:
        needle = b'"id":' + json.dumps(text).encode("utf-8", "surrogatepass") + b","
        at = -1
        for i, start in enumerate(starts):
            end = data.find(b"\n", start)
            if data.find(needle, start, end if end >= 0 else len(data)) >= 0:
                at = i
                break
        if at < 0:
            raise BadInputError(
                f"no model call {text!r:.60} in the prompt ledger: give a number from 1 to "
                f"{len(starts)} or a call id"
            ) from None
        number = at + 1
    else:
        if number < 0:
            number += len(starts) + 1
        if not 1 <= number <= len(starts):
            raise BadInputError(
                f"no model call {text}: the prompt ledger holds calls 1 to {len(starts)}"
            )
    start = starts[number - 1]
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    try:
        call = json.loads(data[start:end])
    except (ValueError, RecursionError):
        call = None
    if not isinstance(call, dict):
        raise BadInputError(f"the line of model call {number} in the prompt ledger is unreadable")
    call["_n"] = number
    measured: int | None = None
    cid = call.get("id")
    if isinstance(cid, str):
        needle = b'"call":' + json.dumps(cid).encode("utf-8", "surrogatepass") + b","
        hit = data.rfind(needle, end)
        if hit >= 0:
            line_start = data.rfind(b"\n", 0, hit) + 1
            line_end = data.find(b"\n", hit)
            try:
                obj = json.loads(data[line_start : line_end if line_end >= 0 else len(data)])
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict) and obj.get("kind") == "measured":
                figure = obj.get("prompt_tokens")
                if isinstance(figure, int) and not isinstance(figure, bool):
                    measured = figure
    return FoundCall(number, call, measured)


def check_ledger(paths: MemoryPaths) -> dict[str, int]:
    """What `repair` reports of the ledger: unreadable lines, a torn last line (ended with a
    newline, so the next append starts clean), and stored texts whose bytes no longer match
    their digest (moved aside as `<sha>.txt.corrupt`)."""
    counts: dict[str, int] = {}
    read = read_ledger(paths)
    if read.bad_lines:
        counts["ledger_lines_unreadable"] = read.bad_lines
    if read.torn_tail:
        path = ledger_path(paths)
        fd = open_no_symlink(path, os.O_WRONLY | os.O_APPEND)
        try:
            write_all(fd, b"\n")
        finally:
            os.close(fd)
        counts["ledger_torn_line_ended"] = 1
    folder = texts_dir(paths)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    bad = 0
    for name in names:
        if not name.endswith(".txt") or not valid_sha(name[:-4]):
            continue
        try:
            data = read_bytes_no_symlink(folder / name)
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() != name[:-4]:
            os.replace(folder / name, folder / f"{name}.corrupt")
            bad += 1
    if bad:
        counts["ledger_texts_corrupt"] = bad
    return counts


__all__ = [
    "CALL_PREFIX",
    "LEDGER_NAME",
    "LEDGER_VERSION",
    "TEXTS_DIR",
    "FoundCall",
    "LedgerRead",
    "PromptLedger",
    "append_line",
    "check_ledger",
    "event_digest",
    "find_call",
    "hot_digest",
    "last_call_id",
    "ledger_path",
    "read_ledger",
    "read_ledger_light",
    "read_text",
    "record_measured",
    "text_sha",
    "texts_dir",
]
