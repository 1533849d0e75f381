"""Real agent transcripts as contract §2 events, grouped by model call (issue 10, item 3).

Pure parsing: `load_transcript` reads one file, `parse_transcript` turns its text into a
`Transcript` and never touches a memory root. The whole file is parsed and every event checked
before a caller writes anything, so a bad line leaves nothing half-imported; errors are
`BadInputError("FILE:LINE: what is wrong")`.

Formats (docs/REPLAY.md has the full mapping):

- `pi`: the pi coding agent's session JSONL (header line `type: "session"`, then entries; the
  branch that ends at the last entry is followed, as pi itself builds its context).
- `openai`: a chat-completions message list (a JSON array, an object with `messages`, or JSONL).
- `mini-swe-agent`: a trajectory JSON (`messages`; bash actions in the assistant's reply).

Text from a transcript is untrusted: it is carried as event content, never interpreted.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from core.errors import BadInputError, EventError
from core.events import validate_event
from core.jsonl import serialize_event
from core.state import MAX_PROMPT_TOKENS

FORMATS: tuple[str, ...] = ("pi", "openai", "mini-swe-agent", "claude-code", "codex")
LINE_FORMATS: tuple[str, ...] = ("claude-code", "codex")
"""Formats read line by line (core/import_stream.py), so `follow` can tail them live."""


@dataclass(frozen=True)
class ModelCall:
    """One model call of the original agent: what was appended before it, what it produced."""

    inputs: list[dict[str, Any]]
    """Events to append before this model call (user_input, tool_result, ...)."""
    outputs: list[dict[str, Any]]
    """Events the call produced (assistant_output, tool_call ...)."""
    prompt_tokens: int | None
    """The provider's prompt size for this call, when the log has it."""


@dataclass(frozen=True)
class Transcript:
    format: str
    source: str
    """The file name as given (error messages and reports name it)."""
    calls: list[ModelCall]
    trailing: list[dict[str, Any]]
    """Events after the last model call (may be empty)."""
    warnings: list[str] = field(default_factory=list)
    """`FILE:LINE: ...` notes on lines skipped as unknown (claude-code, codex)."""

    def events(self) -> list[dict[str, Any]]:
        """Every event in the transcript's order: each call's inputs and outputs, then trailing."""
        out: list[dict[str, Any]] = []
        for call in self.calls:
            out.extend(call.inputs)
            out.extend(call.outputs)
        out.extend(self.trailing)
        return out

    @property
    def event_count(self) -> int:
        return sum(len(c.inputs) + len(c.outputs) for c in self.calls) + len(self.trailing)

    @property
    def last_prompt_tokens(self) -> int | None:
        """The provider figure of the last call that has one (None: the log has none)."""
        for call in reversed(self.calls):
            if call.prompt_tokens is not None:
                return call.prompt_tokens
        return None


MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
"""The largest transcript `import` reads (256 MiB): a file is parsed whole before anything is
written, and `/dev/zero` or a runaway log must end in a clear error, not in all memory."""


def load_transcript(path: Path, fmt: str) -> Transcript:
    """Read and parse one transcript file; BadInputError on an unknown format or bad input."""
    check_format(fmt)
    source = str(path)
    try:
        with path.open("rb") as stream:
            data = read_capped(stream, source)
    except OSError as exc:
        raise BadInputError(
            f"{source}: cannot read the transcript: {exc.strerror or exc}"
        ) from None
    return decode_transcript(data, fmt, source)


def read_capped(stream: BinaryIO, source: str, limit: int = MAX_TRANSCRIPT_BYTES) -> bytes:
    """At most `limit` bytes of a stream (a file, a pipe, stdin); BadInputError beyond it."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise BadInputError(
            f"{source}: the transcript is larger than {limit // (1024 * 1024)} MiB, the most "
            "`import` reads (split the log, or import the part you need)"
        )
    return data


def decode_transcript(data: bytes, fmt: str, source: str) -> Transcript:
    """Parse a transcript's bytes (UTF-8); BadInputError naming the line when they are not."""
    check_format(fmt)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BadInputError(f"{source}:{line}: not UTF-8 text") from None
    return parse_transcript(text, fmt, source)


def parse_transcript(text: str, fmt: str, source: str = "<string>") -> Transcript:
    """Parse a transcript's text; every event is checked as appendable before this returns."""
    check_format(fmt)
    if text.startswith("\ufeff"):
        text = text[1:]
    if fmt in LINE_FORMATS:
        from core.import_stream import line_parser, parse_lines

        return parse_lines(text, line_parser(fmt, source))
    builder = _Builder(fmt, source)
    _PARSERS[fmt](text, builder)
    return builder.finish()


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise BadInputError(
            f"unknown transcript format {fmt!r}: expected one of {', '.join(FORMATS)}"
        )


# --- building events --------------------------------------------------------------------------


@dataclass
class _Builder:
    """Collects events into model calls and checks tool pairs as they come."""

    fmt: str
    source: str
    calls: list[ModelCall] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    call_names: dict[str, str] = field(default_factory=dict)
    """tool_call_id -> tool name, for every call seen so far."""
    answered: set[str] = field(default_factory=set)
    open_ids: dict[str, str | None] = field(default_factory=dict)
    """The log's tool call id -> the stored id of its latest call while unanswered, None once
    answered (an id may be reused after that)."""
    count: int = 0

    def error(self, line: int, message: str) -> BadInputError:
        return BadInputError(f"{self.source}:{line}: {message}")

    def event(
        self,
        etype: str,
        role: str,
        content: Any,
        *,
        line: int,
        ts: str | None = None,
        meta: dict[str, Any] | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """A contract §2 event; `meta.source` says where in the log it came from."""
        event: dict[str, Any] = {"type": etype, "role": role, "content": content}
        event.update({k: v for k, v in fields.items() if v is not None})
        if ts is not None:
            event["ts"] = ts
        event["meta"] = {**(meta or {}), "source": {"format": self.fmt, "line": line}}
        try:
            serialize_event(validate_event(event, "event"), "event")
        except EventError as exc:
            raise self.error(line, str(exc).removeprefix("event: ")) from None
        return event

    def add_input(self, event: dict[str, Any]) -> None:
        self.pending.append(event)
        self.count += 1

    def tool_call(
        self, call_id: Any, name: Any, arguments: Any, *, line: int, ts: str | None
    ) -> dict[str, Any]:
        if not isinstance(call_id, str) or not call_id:
            raise self.error(line, "a tool call needs a non-empty string id")
        if not isinstance(name, str) or not name:
            raise self.error(line, f"tool call {call_id!r} needs a non-empty string name")
        source_id = call_id
        if call_id in self.call_names:
            if self.open_ids.get(call_id) is not None:
                raise self.error(
                    line, f"tool call id {call_id!r} is used again before its first call's result"
                )
            # A model may reuse an id once the call that had it was answered (issue 23): the
            # calls pair with results in order, and the store gets a unique id for each.
            n = 2
            while f"{call_id}#{n}" in self.call_names:
                n += 1
            call_id = f"{call_id}#{n}"
        self.call_names[call_id] = name
        self.open_ids[source_id] = call_id
        meta = {"source_tool_call_id": source_id} if call_id != source_id else None
        return self.event(
            "tool_call",
            "assistant",
            None,
            line=line,
            ts=ts,
            meta=meta,
            name=name,
            tool_call_id=call_id,
            arguments=arguments,
        )

    def tool_result(
        self,
        call_id: Any,
        content: Any,
        *,
        line: int,
        ts: str | None,
        name: Any = None,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        if not isinstance(call_id, str) or not call_id:
            raise self.error(line, "a tool result needs the string id of its tool call")
        if call_id not in self.open_ids:
            raise self.error(line, f"tool result for {call_id!r}, but no earlier tool call has it")
        source_id, call_id = call_id, self.open_ids.get(call_id)
        if call_id is None:
            raise self.error(line, f"a second tool result for tool call {source_id!r}")
        self.open_ids[source_id] = None
        if call_id != source_id:
            meta = {**(meta or {}), "source_tool_call_id": source_id}
        self.answered.add(call_id)
        tool_name = self.call_names[call_id]
        if isinstance(name, str) and name and name != tool_name:
            tool_name = name
        return self.event(
            "tool_result",
            "tool",
            content,
            line=line,
            ts=ts,
            meta=meta,
            name=tool_name,
            tool_call_id=call_id,
        )

    def add_call(self, outputs: list[dict[str, Any]], prompt_tokens: int | None) -> None:
        self.calls.append(ModelCall(list(self.pending), outputs, prompt_tokens))
        self.count += len(outputs)
        self.pending = []

    def finish(self) -> Transcript:
        if self.count == 0:
            raise BadInputError(f"{self.source}: no messages to import")
        transcript = Transcript(self.fmt, self.source, self.calls, list(self.pending))
        check_transcript(transcript)
        _fill_timestamps(transcript.events())
        return transcript


def check_transcript(transcript: Transcript) -> None:
    """What every format must satisfy before anything is written, checked on the parsed
    transcript (so each format's parser, and `replay`/`import_transcript` given a transcript
    built by hand, share it): each provider prompt size is one the store accepts
    (0 to 10¹², core.state.MAX_PROMPT_TOKENS). BadInputError naming the call's line."""
    for number, call in enumerate(transcript.calls, start=1):
        n = call.prompt_tokens
        if n is None or (
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_PROMPT_TOKENS
        ):
            continue
        where = _call_line(call)
        raise BadInputError(
            f"{transcript.source}:{where if where is not None else '?'}: model call {number}'s "
            f"provider prompt size ({str(n)[:40]}) is not an integer from 0 to "
            f"{MAX_PROMPT_TOKENS:,}; nothing was written"
        )


def _call_line(call: ModelCall) -> int | None:
    """The log line a model call came from (its first output's, else its last input's)."""
    for event in [*call.outputs, *reversed(call.inputs)]:
        source = (
            event.get("meta", {}).get("source") if isinstance(event.get("meta"), dict) else None
        )
        if isinstance(source, dict) and isinstance(source.get("line"), int):
            return int(source["line"])
    return None


def _fill_timestamps(events: list[dict[str, Any]]) -> None:
    """A log that times some messages and not others (mini-swe-agent times replies and
    observations, not the task): an untimed event takes the time of the timed event before
    it (the first timed one for those at the start), so `ts` never runs backwards. A log with
    no times at all is left alone (the store stamps the append time)."""
    first = next((e["ts"] for e in events if "ts" in e), None)
    if first is None:
        return
    last = first
    for event in events:
        if "ts" in event:
            last = event["ts"]
        else:
            event["ts"] = last


def _iso_ts(value: Any) -> str | None:
    """RFC 3339 UTC with milliseconds from an ISO 8601 string; None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return _fmt(when)


def _epoch_ts(value: Any, *, millis: bool) -> str | None:
    """RFC 3339 UTC from a Unix time (seconds, or milliseconds); None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = value / 1000.0 if millis else float(value)
    try:
        return _fmt(datetime.fromtimestamp(seconds, UTC))
    except (OverflowError, OSError, ValueError):
        return None


def _fmt(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _image_placeholder(mime: Any) -> str:
    """What stands for an image: the bytes never reach the memory root (contract §2 scrubbing
    would drop them anyway, and a base64 blob is noise to every summary)."""
    kind = mime if isinstance(mime, str) and mime else "image"
    return f"[image omitted: {kind}]"


def _blocks_text(content: Any, *, line: int, builder: _Builder) -> str:
    """Text of a content value: a string as is; a list of blocks (pi's text/image blocks,
    OpenAI's text/image_url parts) joined by newlines, images as placeholders."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise builder.error(line, f"content must be a string or a list, got {_kind(content)}")
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
            continue
        if not isinstance(block, dict):
            raise builder.error(line, f"a content block must be an object, got {_kind(block)}")
        btype = block.get("type")
        if btype in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif btype == "refusal" and isinstance(block.get("refusal"), str):
            parts.append(block["refusal"])
        elif btype == "image":
            parts.append(_image_placeholder(block.get("mimeType")))
        elif btype in ("image_url", "input_image"):
            parts.append(_image_placeholder(None))
        else:
            parts.append(f"[{btype if isinstance(btype, str) else 'block'} omitted]")
    return "\n".join(p for p in parts if p)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__
    )


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


# --- reading JSON with line numbers ------------------------------------------------------------

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")


class _Lines:
    """Offset -> 1-based line number."""

    def __init__(self, text: str) -> None:
        self._starts = [m.end() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset) + 1


def _json_error(source: str, exc: ValueError | RecursionError, line: int | None = None) -> str:
    if isinstance(exc, json.JSONDecodeError):
        where = exc.lineno if line is None else line
        msg = exc.msg.removesuffix(" at")  # "Unterminated string starting at"
        return f"{source}:{where}: not valid JSON ({msg} at column {exc.colno})"
    reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
    return f"{source}:{line or 1}: not valid JSON ({reason})"


def _loads(text: str, source: str, line: int | None = None) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise BadInputError(_json_error(source, exc, line)) from None


def _jsonl(text: str, source: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line. Split on \\n only: JSON strings may hold
    U+2028 and other characters str.splitlines() would break on."""
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if line.strip():
            yield number, _loads(line, source, number)


def _skip_ws(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _array_items(text: str, start: int, lines: _Lines) -> list[tuple[int, Any]]:
    """(line, value) of each element of the JSON array starting at text[start] ('['). The text
    was already parsed whole, so it is valid JSON here."""
    out: list[tuple[int, Any]] = []
    pos = _skip_ws(text, start + 1)
    if text[pos] == "]":
        return out
    while True:
        value, end = _DECODER.raw_decode(text, pos)
        out.append((lines.at(pos), value))
        pos = _skip_ws(text, end)
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        return out


def _member_offsets(text: str, start: int) -> dict[str, int]:
    """Key -> offset of its value, for the JSON object starting at text[start] ('{')."""
    out: dict[str, int] = {}
    pos = _skip_ws(text, start + 1)
    if text[pos] == "}":
        return out
    while True:
        key, end = _DECODER.raw_decode(text, pos)
        pos = _skip_ws(text, end)
        pos = _skip_ws(text, pos + 1)  # the ':'
        out[key] = pos
        _, end = _DECODER.raw_decode(text, pos)
        pos = _skip_ws(text, end)
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        return out


def _document_messages(
    text: str, source: str, *, allow_list: bool, expected: str
) -> tuple[list[tuple[int, Any]], Any]:
    """The (line, message) list of a JSON document that is a list of messages (when allowed)
    or an object with `messages`; also returns the whole document."""
    doc = _loads(text, source)
    lines = _Lines(text)
    start = _skip_ws(text, 0)
    if isinstance(doc, list) and allow_list:
        return _array_items(text, start, lines), doc
    if isinstance(doc, dict) and "messages" in doc:
        offset = _member_offsets(text, start)["messages"]
        if not isinstance(doc["messages"], list):
            raise BadInputError(
                f"{source}:{lines.at(offset)}: `messages` must be a list, "
                f"got {_kind(doc['messages'])}"
            )
        return _array_items(text, offset, lines), doc
    raise BadInputError(f"{source}:{lines.at(start)}: expected {expected}, got {_kind(doc)}")


# --- pi ----------------------------------------------------------------------------------------

_PI_SKIPPED_ROLES = frozenset({"branchSummary", "compactionSummary"})
"""pi's own summaries: this project makes its own, so they are not imported."""


def _parse_pi(text: str, b: _Builder) -> None:
    rows = list(_jsonl(text, b.source))
    if not rows:
        raise BadInputError(f"{b.source}: no messages to import")
    line, header = rows[0]
    if not isinstance(header, dict) or header.get("type") != "session":
        raise b.error(line, 'expected the pi session header ({"type": "session", ...}) first')
    version = header.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= 3:
        raise b.error(line, f"unsupported pi session version {version!r} (1 to 3 are read)")
    entries: list[tuple[int, dict[str, Any]]] = []
    for line, entry in rows[1:]:
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise b.error(line, 'an entry must be a JSON object with a string "type"')
        if entry["type"] == "session":
            raise b.error(line, "a second session header (two session files joined?)")
        entries.append((line, entry))
    for line, entry in _pi_active_branch(entries):
        etype = entry["type"]
        ts = _iso_ts(entry.get("timestamp"))
        if etype == "message":
            _pi_message(entry.get("message"), line, ts, b)
        elif etype == "custom_message":
            content = _blocks_text(entry.get("content"), line=line, builder=b)
            meta = {"custom_type": entry.get("customType")}
            b.add_input(b.event("system_event", "system", content, line=line, ts=ts, meta=meta))
        elif etype == "compaction":
            from core.import_stream import pi_compaction

            b.add_input(pi_compaction(b, entry, line=line, ts=ts))
        # branch_summary, model_change, thinking_level_change, custom, label,
        # session_info and entry types newer than this reader: not part of what is imported.


def _pi_active_branch(
    entries: list[tuple[int, dict[str, Any]]],
) -> list[tuple[int, dict[str, Any]]]:
    """The entries on the path from the last entry back to the root (pi's tree, v2+), in file
    order; every entry when the file has no tree (v1)."""
    if not any("parentId" in e for _, e in entries):
        return entries
    by_id = {e["id"]: i for i, (_, e) in enumerate(entries) if isinstance(e.get("id"), str)}
    leaf = next((i for i in range(len(entries) - 1, -1, -1) if "id" in entries[i][1]), None)
    on_path: set[int] = set()
    current = leaf
    while current is not None and current not in on_path:
        on_path.add(current)
        parent = entries[current][1].get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    return [row for i, row in enumerate(entries) if i in on_path or "id" not in row[1]]


def _pi_message(message: Any, line: int, ts: str | None, b: _Builder) -> None:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise b.error(line, 'a message entry needs a "message" object with a string "role"')
    role = message["role"]
    if ts is None:
        ts = _epoch_ts(message.get("timestamp"), millis=True)
    if role == "user":
        content = _blocks_text(message.get("content"), line=line, builder=b)
        b.add_input(b.event("user_input", "user", content, line=line, ts=ts))
    elif role == "assistant":
        b.add_call(_pi_assistant(message, line, ts, b), _pi_prompt_tokens(message.get("usage")))
    elif role == "toolResult":
        meta = {"is_error": True} if message.get("isError") is True else None
        content = _blocks_text(message.get("content"), line=line, builder=b)
        b.add_input(
            b.tool_result(
                message.get("toolCallId"),
                content,
                line=line,
                ts=ts,
                name=message.get("toolName"),
                meta=meta,
            )
        )
    elif role == "bashExecution":
        if message.get("excludeFromContext") is True:
            return
        b.add_input(
            b.event(
                "user_input",
                "user",
                _pi_bash_text(message),
                line=line,
                ts=ts,
                meta={"pi_role": "bashExecution"},
            )
        )
    elif role == "custom":
        content = _blocks_text(message.get("content"), line=line, builder=b)
        custom = {"custom_type": message.get("customType")}
        b.add_input(b.event("system_event", "system", content, line=line, ts=ts, meta=custom))
    elif role not in _PI_SKIPPED_ROLES:
        raise b.error(
            line,
            f"unknown message role {role!r} (expected user, assistant, toolResult, "
            "bashExecution, custom, branchSummary or compactionSummary)",
        )


def _pi_assistant(
    message: dict[str, Any], line: int, ts: str | None, b: _Builder
) -> list[dict[str, Any]]:
    """Text blocks (consecutive ones joined) and tool calls, in order; thinking is left out
    (providers do not send earlier turns' thinking back to the model)."""
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if content is None:
        content = []
    if not isinstance(content, list):
        raise b.error(line, f"assistant content must be a list of blocks, got {_kind(content)}")
    outputs: list[dict[str, Any]] = []
    texts: list[str] = []

    def flush() -> None:
        text = "\n".join(t for t in texts if t)
        texts.clear()
        if text:
            outputs.append(b.event("assistant_output", "assistant", text, line=line, ts=ts))

    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise b.error(line, 'an assistant content block needs a string "type"')
        if block["type"] == "text":
            value = block.get("text")
            texts.append(value if isinstance(value, str) else "")
        elif block["type"] == "toolCall":
            flush()
            args = block.get("arguments")
            if isinstance(args, str):
                args = _arguments(args)
            outputs.append(
                b.tool_call(block.get("id"), block.get("name"), args or {}, line=line, ts=ts)
            )
    flush()
    return outputs


def _pi_prompt_tokens(usage: Any) -> int | None:
    """input + cacheRead + cacheWrite: the whole prompt, cached or not (0: no figure)."""
    if not isinstance(usage, dict):
        return None
    parts = [_int(usage.get(k)) for k in ("input", "cacheRead", "cacheWrite")]
    total = sum(p for p in parts if p is not None)
    return total if total > 0 else None


def _pi_bash_text(message: dict[str, Any]) -> str:
    """What pi shows the model for a user's `!command` (its bashExecutionToText)."""
    command = message.get("command") if isinstance(message.get("command"), str) else ""
    output = message.get("output") if isinstance(message.get("output"), str) else ""
    text = f"Ran `{command}`\n" + (f"```\n{output}\n```" if output else "(no output)")
    code = message.get("exitCode")
    if message.get("cancelled") is True:
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    return text


def _arguments(raw: str) -> Any:
    """A tool call's JSON argument string as an object; text that is not a JSON object is kept
    under `raw_arguments` (models do emit broken JSON, and the call still happened)."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        return {"raw_arguments": raw}
    return value if isinstance(value, dict) else {"raw_arguments": raw}


# --- OpenAI chat completions ------------------------------------------------------------------


def _parse_openai(text: str, b: _Builder) -> None:
    stripped = text.lstrip()
    start_line = text.count("\n", 0, len(text) - len(stripped)) + 1
    shape = "expected a JSON message list, an object with `messages`, or JSONL of messages"
    rows: list[tuple[int, Any]]
    if stripped.startswith("["):
        rows, _ = _document_messages(text, b.source, allow_list=True, expected=shape)
    elif stripped.startswith("{") and _is_one_document(text):
        doc = json.loads(text)
        if isinstance(doc, dict) and "messages" in doc:
            rows, _ = _document_messages(text, b.source, allow_list=False, expected=shape)
        elif isinstance(doc, dict) and "role" in doc:
            rows = [(start_line, doc)]
        else:
            raise b.error(start_line, shape)
    elif stripped.startswith("{"):
        first = stripped.split("\n", 1)[0]
        if not _is_one_document(first):
            _loads(text, b.source)  # one broken JSON document, not JSONL: report where
        rows = list(_jsonl(text, b.source))
    else:
        raise b.error(start_line, shape)
    seen_conversation = False
    for line, message in rows:
        seen_conversation = _openai_message(message, line, b, seen_conversation)


def _is_one_document(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _openai_message(message: Any, line: int, b: _Builder, started: bool) -> bool:
    """Add one message; returns whether the conversation has started (a leading system prompt
    is skipped, a later system message is kept as a system_event)."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise b.error(line, 'a message must be a JSON object with a string "role"')
    role = message["role"]
    if role in ("system", "developer"):
        if started:
            content = _blocks_text(message.get("content"), line=line, builder=b)
            b.add_input(b.event("system_event", "system", content, line=line))
        return started
    if role == "user":
        content = _blocks_text(message.get("content"), line=line, builder=b)
        b.add_input(b.event("user_input", "user", content, line=line))
    elif role == "assistant":
        outputs = _openai_assistant(message, line, None, b)
        outputs = _with_reasoning(outputs, message, None, b, line, None)
        b.add_call(outputs, _openai_prompt_tokens(message))
    elif role == "tool":
        content = _blocks_text(message.get("content"), line=line, builder=b)
        b.add_input(
            b.tool_result(
                message.get("tool_call_id"), content, line=line, ts=None, name=message.get("name")
            )
        )
    else:
        raise b.error(
            line,
            f"unknown message role {role!r} (expected system, developer, user, assistant or "
            "tool; legacy `function` messages are not read)",
        )
    return True


def _openai_assistant(
    message: dict[str, Any], line: int, ts: str | None, b: _Builder
) -> list[dict[str, Any]]:
    outputs: list[dict[str, Any]] = []
    text = _blocks_text(message.get("content"), line=line, builder=b)
    if text:
        outputs.append(b.event("assistant_output", "assistant", text, line=line, ts=ts))
    calls = message.get("tool_calls")
    if calls is None:
        return outputs
    if not isinstance(calls, list):
        raise b.error(line, f"`tool_calls` must be a list, got {_kind(calls)}")
    for call in calls:
        if not isinstance(call, dict):
            raise b.error(line, f"a tool call must be an object, got {_kind(call)}")
        function = call.get("function")
        if not isinstance(function, dict):
            raise b.error(line, f"tool call {call.get('id')!r} has no `function` object")
        args = function.get("arguments")
        arguments = _arguments(args) if isinstance(args, str) else (args or {})
        outputs.append(
            b.tool_call(call.get("id"), function.get("name"), arguments, line=line, ts=ts)
        )
    return outputs


def _openai_prompt_tokens(message: dict[str, Any]) -> int | None:
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    n = _int(usage.get("prompt_tokens"))
    return n if n else None


# --- mini-swe-agent ---------------------------------------------------------------------------

_ACTION_OPEN = re.compile(r"```(?:bash|sh|mswea_bash_command)[ \t]*\n")
"""The opening fence of mini-swe-agent's action block (1.x: ```bash; 2.x:
```mswea_bash_command); the block runs to the first "\n```" after it."""
_ACTION_CLOSE = "\n```"
_OBSERVATION = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
MAX_RETURNCODE_DIGITS = 19
"""A `<returncode>` longer than this is no exit status (and Python refuses to turn a number of
more than 4,300 digits into an int): the transcript is refused as bad input."""


@dataclass(frozen=True)
class _Action:
    start: int
    end: int
    command: str


def _actions(content: str) -> list[_Action]:
    """The action blocks of a reply, as `re.finditer` of
    ```` ```(?:bash|sh|mswea_bash_command)[ \t]*\n(.*?)\n``` ```` (DOTALL) finds them, in
    linear time: that pattern tries every opening fence against the whole rest of the text,
    so a reply of unclosed fences took time quadratic in its length (22 s at 256 KB). When
    the leftmost opening fence has no closing one after it, no later fence has either."""
    out: list[_Action] = []
    pos = 0
    while True:
        opened = _ACTION_OPEN.search(content, pos)
        if opened is None:
            return out
        close = content.find(_ACTION_CLOSE, opened.end())
        if close < 0:
            return out
        end = close + len(_ACTION_CLOSE)
        out.append(_Action(opened.start(), end, content[opened.end() : close]))
        pos = end


def _parse_mini_swe_agent(text: str, b: _Builder) -> None:
    rows, _ = _document_messages(
        text,
        b.source,
        allow_list=False,
        expected="a mini-swe-agent trajectory (an object with `messages`)",
    )
    state = _MiniState()
    for line, message in rows:
        _mini_message(message, line, b, state)


@dataclass
class _MiniState:
    started: bool = False
    """The task (first user message) has been read."""
    open_action: str | None = None
    """tool_call_id of the bash action still waiting for its observation."""
    calls: int = 0


def _mini_message(message: Any, line: int, b: _Builder, st: _MiniState) -> None:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise b.error(line, 'a message must be a JSON object with a string "role"')
    role = message["role"]
    raw_extra = message.get("extra")
    extra: dict[str, Any] = raw_extra if isinstance(raw_extra, dict) else {}
    ts = _epoch_ts(extra.get("timestamp"), millis=False)
    if role == "system":
        if st.started:
            content = _blocks_text(message.get("content"), line=line, builder=b)
            b.add_input(b.event("system_event", "system", content, line=line, ts=ts))
        return
    if role == "assistant":
        st.started = True
        b.add_call(_mini_assistant(message, extra, line, ts, b, st), _mini_prompt_tokens(extra))
        return
    if role == "tool":
        content = _blocks_text(message.get("content"), line=line, builder=b)
        b.add_input(
            b.tool_result(
                message.get("tool_call_id"), content, line=line, ts=ts, name=message.get("name")
            )
        )
        return
    if role not in ("user", "exit"):
        raise b.error(
            line, f"unknown message role {role!r} (expected system, user, assistant, tool or exit)"
        )
    content = _blocks_text(message.get("content"), line=line, builder=b)
    if role == "user" and not st.started:
        st.started = True
        b.add_input(b.event("user_input", "user", content, line=line, ts=ts))
        return
    meta: dict[str, Any] = {}
    code = extra.get("returncode")
    if not isinstance(code, int) or isinstance(code, bool):
        found = _OBSERVATION.search(content)
        code = _returncode(found.group(1), line, b) if found else None
    if code is not None:
        meta["returncode"] = code
    if role == "exit" and isinstance(extra.get("exit_status"), str):
        meta["exit_status"] = extra["exit_status"]
    if st.open_action is not None:
        if code not in (None, 0):
            meta["is_error"] = True
        call_id, st.open_action = st.open_action, None
        b.add_input(b.tool_result(call_id, content, line=line, ts=ts, meta=meta or None))
        return
    if code is not None or "raw_output" in extra:
        raise b.error(
            line,
            "an observation (<returncode>) with no action before it: the previous assistant "
            "message has no ```bash block",
        )
    # Feedback from the agent loop itself (a format error, a timeout notice, the exit status):
    # context the model read, not a request from a person.
    meta["kind"] = "exit" if role == "exit" else "agent_feedback"
    b.add_input(b.event("system_event", "system", content, line=line, ts=ts, meta=meta))


def _returncode(digits: str, line: int, b: _Builder) -> int:
    if len(digits.lstrip("-")) > MAX_RETURNCODE_DIGITS:
        raise b.error(
            line,
            f"a <returncode> of {len(digits.lstrip('-')):,} digits is no exit status "
            f"(at most {MAX_RETURNCODE_DIGITS} are read)",
        )
    return int(digits)


def _mini_assistant(
    message: dict[str, Any],
    extra: dict[str, Any],
    line: int,
    ts: str | None,
    b: _Builder,
    st: _MiniState,
) -> list[dict[str, Any]]:
    """The reply's text (without its action block) and the action as a `bash` tool call; a
    reply with no action or several runs nothing (mini-swe-agent answers it with a format
    error), so it has no tool call. Tool-calling models' `tool_calls` are read as OpenAI's."""
    st.calls += 1
    st.open_action = None
    if message.get("tool_calls"):
        called = _openai_assistant(message, line, ts, b)
        return _with_reasoning(called, message, extra, b, line, ts)
    content = _blocks_text(message.get("content"), line=line, builder=b)
    commands: list[str] = []
    actions = extra.get("actions")
    if isinstance(actions, list) and actions:
        commands = [a["command"] for a in actions if isinstance(a, dict) and "command" in a]
        commands = [c for c in commands if isinstance(c, str)]
    found = _actions(content)
    if not commands:
        commands = [a.command.strip() for a in found]
    text = content
    if len(commands) == 1 and len(found) == 1:
        text = (content[: found[0].start] + content[found[0].end :]).strip()
    outputs: list[dict[str, Any]] = []
    if text:
        outputs.append(b.event("assistant_output", "assistant", text, line=line, ts=ts))
    if len(commands) == 1:
        call_id = f"mswea-{st.calls}"
        while call_id in b.call_names:
            call_id += "'"
        outputs.append(b.tool_call(call_id, "bash", {"command": commands[0]}, line=line, ts=ts))
        st.open_action = call_id
    return _with_reasoning(outputs, message, extra, b, line, ts)


def _with_reasoning(
    outputs: list[dict[str, Any]],
    message: dict[str, Any],
    extra: dict[str, Any] | None,
    b: _Builder,
    line: int,
    ts: str | None,
) -> list[dict[str, Any]]:
    """A reasoning model's `reasoning_content` (the message's, or the raw response's in
    mini-swe-agent's `extra`) as the call's first output: an `assistant_output` whose
    content is the reasoning, marked `meta.reasoning: true`. The agent sends it back with
    every later prompt (it is part of the assistant message it keeps), so the provider counts
    it: left out, every estimate misses it, the provider/estimate ratio learnt from the log
    comes out far too high, and a cut keeps far more than `keep_recent_tokens`, so passes
    follow each other (issue 23: 45 where 4 would do)."""
    from core.import_stream import reasoning_of

    text = reasoning_of(message, extra)
    if not text:
        return outputs
    meta = {"reasoning": True}
    return [b.event("assistant_output", "assistant", text, line=line, ts=ts, meta=meta), *outputs]


def _mini_prompt_tokens(extra: dict[str, Any]) -> int | None:
    response = extra.get("response")
    usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict):
        return None
    n = _int(usage.get("prompt_tokens"))
    return n if n else None


_PARSERS: dict[str, Callable[[str, _Builder], None]] = {
    "pi": _parse_pi,
    "openai": _parse_openai,
    "mini-swe-agent": _parse_mini_swe_agent,
}
