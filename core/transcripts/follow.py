"""Follow a live agent log into a memory root (issue 23): `session-inspector follow FILE`.

A `Follower` tails a Claude Code or Codex JSONL log (or a pi session, read in file order) as
the agent writes it and replays each new line into a `MemoryManager` the way `--replay` does
(core/transcripts/replay.py): a pass before each model call when the trigger fires, the call's
prompt size recorded, its outputs appended. The parser's state (open call, tool pairs, held results)
is kept between reads, so a new line costs O(line) however long the log already is.

What it handles:

- **partial last line**: bytes after the last newline wait for the rest of their line (a line
  over `MAX_LINE_BYTES` is an error naming FILE:LINE);
- **truncation or replacement** (the file got shorter, its path now names another file, or
  its first bytes changed):
  the current session is closed (rotated into `session_archive/`) and the new content is read
  from its start into a fresh session, so no event is doubled;
- **the agent's own compactions**: kept as `system_event`s with `meta.source_compaction`;
- **stopping** (`stop()`, SIGINT/SIGTERM in the command line): checked between lines; the
  line in hand is finished first, so no event is half-written (appends are whole lines anyway).

It never opens the agent's file for writing.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import BadInputError
from core.maintenance.compaction_pass import PassResult
from core.manager import MemoryManager
from core.transcripts.detect import detect_format
from core.transcripts.importers import line_parser
from core.transcripts.replay import (
    REPLAY_SYSTEM_PROMPT,
    REPLAY_TASK,
    ProviderScale,
    ReplayStats,
    _append,
    _maybe_pass,
    prompt_estimate,
)
from core.transcripts.stream import (
    MAX_LINE_BYTES,
    Action,
    CallPrompt,
    CallStart,
    Input,
    LineParser,
    Output,
    decode_line,
)

FOLLOW_FORMATS: tuple[str, ...] = ("claude-code", "codex", "pi")
HEAD_BYTES = 256
READ_CHUNK = 1 << 20
"""Bytes read at a time: a long backlog is taken in slices, so `stop()` is seen between them."""


@dataclass
class FollowStats(ReplayStats):
    lines: int = 0
    restarts: int = 0
    """Times the log was truncated or replaced (each closes the session and starts over)."""
    source_compactions: int = 0
    warnings: list[str] = field(default_factory=list)


class LiveReplay:
    """`core.transcripts.replay.replay` one action at a time (the same pass and prompt-size
    rules)."""

    def __init__(
        self,
        mm: MemoryManager,
        stats: ReplayStats,
        after_pass: Callable[[PassResult], None] | None = None,
    ) -> None:
        self.mm = mm
        self.stats = stats
        self.after_pass = after_pass
        self.scale = ProviderScale()
        self.original = 0
        """Estimate of every log event appended so far (the original agent's context)."""
        self.at_call = 0
        """`original` when the current call started (its figure pairs with this)."""
        self.checked = False
        """The trigger was asked since the last append or record (asking again would give
        the same answer): `idle()` asks it while the agent's model runs, so a call's first
        line does not wait for it."""
        self.between_calls = True

    def play(self, actions: list[Action]) -> None:
        batch: list[dict[str, Any]] = []
        for action in actions:
            if isinstance(action, Input | Output):
                batch.append(action.event)
                continue
            self._flush(batch)
            batch = []
            if isinstance(action, CallStart):
                self.between_calls = False
                if not self.checked:
                    _maybe_pass(self.mm, self.stats, self.after_pass)
                # The call's line in the prompt ledger, as a replay writes it.
                self.mm.build_prompt(REPLAY_SYSTEM_PROMPT, REPLAY_TASK)
                self.at_call = self.original
                self.stats.calls += 1
                if action.prompt_tokens is not None:
                    self._record(action.prompt_tokens)
            elif isinstance(action, CallPrompt):
                self._record(action.prompt_tokens)
        self._flush(batch)

    def _flush(self, batch: list[dict[str, Any]]) -> None:
        if batch:
            self.original += _append(self.mm, batch, self.stats)
            self.checked = False
            self.between_calls = batch[-1].get("role") != "assistant"

    def idle(self) -> None:
        """Nothing new in the log: if the last events were inputs (the agent's model is about
        to run), run the pass the next call would run now."""
        if self.between_calls and not self.checked:
            _maybe_pass(self.mm, self.stats, self.after_pass)
            self.checked = True

    def _record(self, figure: int) -> None:
        self.checked = False
        self.scale.observe(self.at_call, figure)
        if self.stats.compactions == 0 and not self.scale.dropped:
            self.mm.record_prompt_tokens(figure)
        else:
            self.mm.record_prompt_tokens(self.scale.ours(prompt_estimate(self.mm)))
        self.stats.prompt_sizes_recorded += 1
        if self.scale.first is not None:
            self.stats.provider_ratio = round(self.scale.ratio, 3)
            self.stats.provider_fixed = self.scale.fixed


class Follower:
    """Tails `path` into `mm`. `poll_once()` reads what is new; `run()` polls until `stop()`."""

    def __init__(
        self,
        path: Path,
        mm: MemoryManager,
        fmt: str | None = None,
        *,
        interval: float = 0.02,
        after_pass: Callable[[PassResult], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> None:
        if fmt is not None and fmt not in FOLLOW_FORMATS:
            raise BadInputError(
                f"follow reads {', '.join(FOLLOW_FORMATS)} logs, not {fmt!r} "
                "(a finished transcript can be read with `import`)"
            )
        self.path = path
        self.source = str(path)
        self.mm = mm
        self.fmt = fmt
        self.interval = interval
        self.after_pass = after_pass
        self.on_notice = on_notice or (lambda _msg: None)
        self.stats = FollowStats()
        self._stop = threading.Event()
        self._reset()
        self._identity: tuple[int, int] | None = None

    def _reset(self) -> None:
        self.offset = 0
        self.head = b""  # the file's first bytes as read: others there later = rewritten
        self.line = 0
        self.partial = b""
        self.parser: LineParser | None = None
        self.live = LiveReplay(self.mm, self.stats, self.after_pass)

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self) -> FollowStats:
        """Poll until `stop()`; errors (bad lines, I/O) are raised after the lines before them
        were played."""
        self.check_readable()
        while not self._stop.is_set():
            if self.poll_once() == 0:
                self.live.idle()
                self._stop.wait(self.interval)
        self.finish()
        return self.stats

    def check_readable(self) -> None:
        try:
            with self.path.open("rb"):
                pass
        except OSError as exc:
            raise BadInputError(
                f"{self.source}: cannot read the log: {exc.strerror or exc}"
            ) from None

    def finish(self) -> None:
        """Stop for good: what a parser still holds (tool results of an open call) is played."""
        if self.parser is not None:
            self.parser.close()
            self._play()
        self.stats.warnings = self.parser.stream.warnings() if self.parser is not None else []

    def poll_once(self) -> int:
        """Read and play every complete new line; returns how many lines were read."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return 0  # replaced: the new file is not there yet
        identity = (st.st_dev, st.st_ino)
        if self._identity is not None and (identity != self._identity or st.st_size < self.offset):
            how = "replaced" if identity != self._identity else "truncated"
            self._restart(how)
        self._identity = identity
        if st.st_size <= self.offset:
            return 0
        count = 0
        try:
            with self.path.open("rb") as f:
                if self.head and f.read(len(self.head)) != self.head:
                    # Same file, other bytes at its start: rewritten past our offset between
                    # two polls (truncated, then written again).
                    self._restart("rewritten")
                f.seek(self.offset)
                while not self._stop.is_set():
                    data = f.read(READ_CHUNK)
                    if not data:
                        break
                    if self.offset < HEAD_BYTES:
                        self.head = (self.head + data)[:HEAD_BYTES]
                    self.offset += len(data)
                    count += self._take(data)
        except OSError as exc:
            raise BadInputError(
                f"{self.source}: cannot read the log: {exc.strerror or exc}"
            ) from None
        return count

    def _restart(self, how: str) -> None:
        if self.parser is not None:
            self.parser.close()
            self._play()
        self.stats.restarts += 1
        closed = self.mm.rotate() if self.mm.store.read_events().event_count else None
        where = f"; session {closed.closed_session_id} archived" if closed else ""
        self.on_notice(f"{self.source} was {how}: reading it again from the start{where}")
        self._reset()

    def _take(self, data: bytes) -> int:
        buf = self.partial + data
        lines = buf.split(b"\n")
        self.partial = lines.pop()
        if len(self.partial) > MAX_LINE_BYTES:
            raise BadInputError(
                f"{self.source}:{self.line + len(lines) + 1}: a line of over "
                f"{MAX_LINE_BYTES // (1024 * 1024)} MiB with no end"
            )
        count = 0
        for raw in lines:
            if self._stop.is_set():
                # Put the unread lines back: a later run (or nothing) takes them whole.
                rest = b"\n".join(lines[count:]) + b"\n" + self.partial
                self.offset -= len(rest)
                self.partial = b""
                break
            self.line += 1
            count += 1
            self._line(raw)
        return count

    def _line(self, raw: bytes) -> None:
        try:
            text = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            raise BadInputError(f"{self.source}:{self.line}: not UTF-8 text") from None
        if self.line == 1:
            text = text.removeprefix("\ufeff")
        if not text.strip():
            return
        if self.parser is None:
            self.parser = self._make_parser(text)
        self.parser.feed(self.line, decode_line(text, self.source, self.line))
        self.stats.lines += 1
        self._play()

    def _make_parser(self, first: str) -> LineParser:
        fmt = self.fmt
        if fmt is None:
            fmt = detect_format(first)
            if fmt is None or fmt not in FOLLOW_FORMATS:
                what = f"looks like {fmt}" if fmt else "is in no format this reader knows"
                raise BadInputError(
                    f"{self.source}:{self.line}: follow reads {', '.join(FOLLOW_FORMATS)} logs; "
                    f"this one {what}"
                )
            self.fmt = fmt
            self.on_notice(f"{self.source}: format {fmt} (detected; give --format to choose)")
        else:
            looks = detect_format(first)
            if looks is not None and looks != fmt:
                raise BadInputError(
                    f"{self.source}:{self.line}: this log looks like {looks}, not {fmt} "
                    f"(try --format {looks}, or leave --format out)"
                )
        if fmt == "pi":
            from core.transcripts.pi_lines import PiLineParser

            return PiLineParser.create(self.source)
        return line_parser(fmt, self.source)

    def _play(self) -> None:
        assert self.parser is not None
        actions = self.parser.stream.drain()
        self.stats.source_compactions += sum(
            1
            for a in actions
            if isinstance(a, Input) and "source_compaction" in a.event.get("meta", {})
        )
        self.live.play(actions)


def wait_for(predicate: Callable[[], bool], timeout: float, interval: float = 0.01) -> bool:
    """Poll `predicate` until it holds or `timeout` seconds pass (tests and the bench)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
