"""The .jsonl line format every session file uses (events.jsonl, chunk files, corrupt.jsonl):
one JSON object per line. Parsing never raises on bad data (a bad line is kept byte for byte
as a corrupt line); writing refuses what could not be read back.

Pure: no file I/O here, so the store, the chunk files, the tail reader and the TUI all parse
with the one parser and none of them has to sit above the store for it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.errors import EventError
from core.events import Event
from core.scrub import strip_screenshot_data

MAX_EVENT_BYTES = 8 * 1024 * 1024
"""Largest serialized event line (without its newline) that is appended or read as an event."""


@dataclass(frozen=True)
class CorruptLine:
    """A line of a .jsonl file that is not an event, kept byte for byte."""

    line_no: int
    offset: int
    raw: bytes
    error: str


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """One non-blank line: `event` when it parsed, else `error` and the verbatim `raw` bytes."""

    line_no: int
    offset: int
    length: int
    event: Event | None
    error: str | None
    raw: bytes


@dataclass
class ParsedLines:
    """`consumed` bytes were parsed into `lines`; `tail` is an unterminated rest (final=False).

    `events` and `corrupt` are the good and the bad lines of `lines`, in file order.
    """

    lines: list[ParsedLine]
    consumed: int
    tail: bytes
    next_line: int
    events: list[Event] = field(default_factory=list)
    corrupt: list[CorruptLine] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.events and not self.corrupt:
            for p in self.lines:
                if p.event is not None:
                    self.events.append(p.event)
                elif p.error is not None:
                    self.corrupt.append(CorruptLine(p.line_no, p.offset, p.raw, p.error))


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    """A line holding NaN or an overflowing number could never be written back (JSON has no
    such values), so it would block every pass: it is a corrupt line instead."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
"""One decoder for every line: `json.loads` with hooks builds a new decoder and scanner per
call, which was a fifth of the time a pass spent parsing."""


def classify_line(raw: bytes) -> tuple[Event | None, str | None]:
    """One line's event, or why it is no event (the reason a corrupt line carries)."""
    if len(raw) > MAX_EVENT_BYTES:
        return None, f"line of {len(raw)} bytes exceeds the {MAX_EVENT_BYTES}-byte limit"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start})"
    try:
        obj = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at column {exc.colno})"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    except RecursionError:
        return None, "not valid JSON (nested too deeply)"
    if not isinstance(obj, dict):
        return None, f"not a JSON object (a JSON {type(obj).__name__})"
    return obj, None


def parse_event_lines(
    data: bytes, *, base_offset: int = 0, base_line: int = 1, final: bool
) -> ParsedLines:
    """Split .jsonl bytes into events and corrupt lines; never raises on bad data.

    Blank lines are skipped (they hold nothing). An unterminated last line is returned as
    `tail` unless `final`, in which case it is a corrupt line (a writer stopped mid-line).
    """
    lines: list[ParsedLine] = []
    pos = 0
    end_of_data = len(data)
    line_no = base_line
    while pos < end_of_data:
        nl = data.find(b"\n", pos)
        if nl < 0:
            if not final:
                break
            raw = data[pos:]
            if raw.strip():
                lines.append(
                    ParsedLine(
                        line_no,
                        base_offset + pos,
                        len(raw),
                        None,
                        "unterminated last line (a writer stopped mid-line)",
                        raw,
                    )
                )
            pos = end_of_data
            line_no += 1
            break
        raw = data[pos:nl]
        if raw.strip():
            event, error = classify_line(raw)
            lines.append(
                ParsedLine(
                    line_no,
                    base_offset + pos,
                    nl + 1 - pos,
                    event,
                    error,
                    b"" if error is None else raw,
                )
            )
        pos = nl + 1
        line_no += 1
    return ParsedLines(lines=lines, consumed=pos, tail=data[pos:], next_line=line_no)


_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""Built once (as `_DECODER`): every append and every pass writes lines through it."""


def serialize_event(event: Mapping[str, Any], where: str = "event") -> bytes:
    """One compact JSON line with its newline; EventError when it cannot be stored.

    UTF-8 is kept as is; a lone surrogate (from a JSON `\\ud800` escape) falls back to ASCII
    escapes for that line so the event is still written, losslessly.
    """
    try:
        text = _LINE_ENCODER.encode(event)
    except (TypeError, ValueError, RecursionError) as exc:
        raise EventError(f"{where}: cannot be written as JSON ({exc})") from exc
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(event, separators=(",", ":"), allow_nan=False).encode("ascii")
    if len(data) > MAX_EVENT_BYTES:
        raise EventError(
            f"{where}: serialized event is {len(data)} bytes, over the {MAX_EVENT_BYTES}-byte limit"
        )
    return data + b"\n"


def stored_events_bytes(events: Iterable[Event], where: str) -> bytes:
    """`events` as a session file stores them: screenshots scrubbed, one line each; the i-th
    is named `<where> <i>` in an error. The one rule for every writer of event lines."""
    return b"".join(
        serialize_event(strip_screenshot_data(e), f"{where} {i}") for i, e in enumerate(events, 1)
    )


__all__ = [
    "MAX_EVENT_BYTES",
    "CorruptLine",
    "ParsedLine",
    "ParsedLines",
    "classify_line",
    "parse_event_lines",
    "serialize_event",
    "stored_events_bytes",
]
