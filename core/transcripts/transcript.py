"""The transcript model every importer builds (`ModelCall`, `Transcript`, `check_transcript`)
and the event builder the formats share (`_Builder`: ids, tool pairs, `FILE:LINE` errors; the
timestamp, argument and content helpers), read whole (core/transcripts/importers.py) or line by line
(core/transcripts/stream.py and the parsers beside it).

Pure: nothing here reads a file. Text from a transcript is untrusted: it is carried as event
content, never interpreted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.compaction.state import MAX_PROMPT_TOKENS
from core.errors import BadInputError, EventError
from core.events import validate_event
from core.jsonl import serialize_event


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
    cwd: str | None = None
    """The working directory the log names (a pi session header's `cwd`), set as `meta.cwd`
    on every event."""

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
        if self.cwd:
            event["meta"]["cwd"] = self.cwd
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
    (0 to 10¹², core.compaction.state.MAX_PROMPT_TOKENS). BadInputError naming the call's line."""
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


_PI_SKIPPED_ROLES = frozenset({"branchSummary", "compactionSummary"})
"""pi's own summaries: this project makes its own, so they are not imported."""


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
