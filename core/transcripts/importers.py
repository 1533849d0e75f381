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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from core.errors import BadInputError
from core.transcripts.transcript import (
    Transcript,
    _arguments,
    _blocks_text,
    _Builder,
    _epoch_ts,
    _int,
    _iso_ts,
    _kind,
    _pi_message,
)

if TYPE_CHECKING:
    from core.transcripts.stream import LineParser

FORMATS: tuple[str, ...] = ("pi", "openai", "mini-swe-agent", "claude-code", "codex")
LINE_FORMATS: tuple[str, ...] = ("claude-code", "codex")
"""Formats read line by line (core/transcripts/stream.py), so `follow` can tail them live."""


MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
"""The largest transcript `import` reads (256 MiB): a file is parsed whole before anything is
written, and `/dev/zero` or a runaway log must end in a clear error, not in all memory."""


def load_transcript(path: Path, fmt: str) -> Transcript:
    """Read and parse one transcript file; BadInputError on an unknown format or bad input."""
    check_format(fmt)
    return decode_transcript(read_transcript_bytes(path), fmt, str(path))


def read_transcript_bytes(path: Path) -> bytes:
    """A transcript file's bytes, at most MAX_TRANSCRIPT_BYTES; BadInputError (FILE) when it
    cannot be read or is larger."""
    source = str(path)
    try:
        with path.open("rb") as stream:
            return read_capped(stream, source)
    except OSError as exc:
        raise BadInputError(
            f"{source}: cannot read the transcript: {exc.strerror or exc}"
        ) from None


def decode_utf8(data: bytes, source: str) -> str:
    """The bytes as UTF-8 text; BadInputError naming the line (FILE:LINE) when they are not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BadInputError(f"{source}:{line}: not UTF-8 text") from None


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
    return parse_transcript(decode_utf8(data, source), fmt, source)


def parse_transcript(text: str, fmt: str, source: str = "<string>") -> Transcript:
    """Parse a transcript's text; every event is checked as appendable before this returns."""
    check_format(fmt)
    if text.startswith("\ufeff"):
        text = text[1:]
    if fmt in LINE_FORMATS:
        from core.transcripts.stream import parse_lines

        return parse_lines(text, line_parser(fmt, source))
    builder = _Builder(fmt, source)
    _PARSERS[fmt](text, builder)
    return builder.finish()


def line_parser(fmt: str, source: str) -> LineParser:
    """A fresh parser for one of `LINE_FORMATS` (core/transcripts/claude_code.py,
    core/transcripts/codex.py)."""
    if fmt == "claude-code":
        from core.transcripts.claude_code import ClaudeCodeParser

        return ClaudeCodeParser.create(source)
    if fmt == "codex":
        from core.transcripts.codex import CodexParser

        return CodexParser.create(source)
    raise BadInputError(f"format {fmt!r} cannot be read line by line (claude-code, codex can)")


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise BadInputError(
            f"unknown transcript format {fmt!r}: expected one of {', '.join(FORMATS)}"
        )


# --- building events --------------------------------------------------------------------------


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
    cwd = header.get("cwd")
    if isinstance(cwd, str) and cwd.startswith("/") and len(cwd) <= 300 and "\n" not in cwd:
        b.cwd = cwd  # every event names it (meta.cwd): summaries write paths relative to it
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
            from core.transcripts.stream import pi_compaction

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
    from core.transcripts.stream import reasoning_of

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
