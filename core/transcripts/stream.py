"""Line-by-line transcript parsing shared by the JSONL formats that can be followed live
(Claude Code, Codex; issue 23).

A `LineParser` reads one line at a time and turns it into *actions* on a `Stream`:

- `Input(event)`: an event appended before the next model call (user input, tool result ...);
- `CallStart(prompt_tokens)`: the original agent called its model (prompt size when known);
- `Output(event)`: an event the current call produced (assistant text, tool call);
- `CallPrompt(prompt_tokens)`: the current call's prompt size, learnt after its outputs
  (Codex writes its `token_count` after the response).

`import` groups the actions into a `Transcript` (`Stream.transcript()`); `follow` drains them
as lines arrive and plays each at once, so a new line costs O(line) whatever the log's length.
The parser state (open call, tool pairs, held results) lives in the parser and the stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Self

from core.compaction.state import MAX_PROMPT_TOKENS
from core.errors import BadInputError
from core.transcripts.transcript import (
    ModelCall,
    Transcript,
    _Builder,
    _fill_timestamps,
    check_transcript,
)

MAX_LINE_BYTES = 64 * 1024 * 1024
"""A log line longer than this is refused (FILE:LINE): no agent writes one, and holding a
torn line of unbounded size in memory while following is not an option."""


@dataclass(frozen=True)
class Input:
    event: dict[str, Any]


@dataclass(frozen=True)
class CallStart:
    prompt_tokens: int | None


@dataclass(frozen=True)
class Output:
    event: dict[str, Any]


@dataclass(frozen=True)
class CallPrompt:
    prompt_tokens: int


Action = Input | CallStart | Output | CallPrompt


@dataclass
class Stream:
    """The actions parsed so far, with the `_Builder` that makes and checks events."""

    builder: _Builder
    actions: list[Action] = field(default_factory=list)
    session_id: str | None = None
    """The source session's id, when the log names it."""
    skipped: dict[str, int] = field(default_factory=dict)
    """What was read and deliberately not imported, by kind (reports and docs name them)."""
    unknown: dict[str, list[int]] = field(default_factory=dict)
    """Line kinds this reader does not know, skipped: kind -> [first line, count]. Agents add
    bookkeeping line types often; `import` warns with FILE:LINE instead of refusing the log."""
    in_call: bool = False
    """A model call has started and no input came since."""

    def input(self, event: dict[str, Any]) -> None:
        self.actions.append(Input(event))
        self.builder.count += 1
        self.in_call = False

    def call(self, prompt_tokens: int | None, line: int | None = None) -> None:
        self.actions.append(CallStart(self._checked(prompt_tokens, line)))
        self.in_call = True

    def output(self, event: dict[str, Any]) -> None:
        if not self.in_call:
            self.call(None)
        self.actions.append(Output(event))
        self.builder.count += 1

    def prompt(self, prompt_tokens: int, line: int | None = None) -> None:
        self.actions.append(CallPrompt(self._checked(prompt_tokens, line) or 0))

    def _checked(self, n: int | None, line: int | None) -> int | None:
        """A provider prompt size the store accepts (0 to 10¹², as `check_transcript`)."""
        if n is not None and n > MAX_PROMPT_TOKENS:
            where = f"{self.builder.source}:{line if line is not None else '?'}"
            raise BadInputError(
                f"{where}: a provider prompt size of {str(n)[:40]} is over "
                f"{MAX_PROMPT_TOKENS:,}, the most the store records"
            )
        return n

    def skip(self, kind: str) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + 1

    def skip_unknown(self, kind: str, line: int) -> None:
        seen = self.unknown.setdefault(kind, [line, 0])
        seen[1] += 1

    def orphan_result(self, call_id: Any, line: int) -> bool:
        """A tool result whose call is not in this log (a session resumed or forked from
        another file starts with results of calls it does not hold): skipped with a warning,
        not an error, so a live agent's log is not refused for its first lines."""
        if isinstance(call_id, str) and call_id and call_id not in self.builder.open_ids:
            self.skip_unknown("tool result with no call before it", line)
            return True
        return False

    def warnings(self) -> list[str]:
        """One line per unknown kind: `FILE:LINE: N lines of unknown kind K skipped`."""
        source = self.builder.source
        return [
            f"{source}:{first}: {count} line{'s' if count != 1 else ''} of unknown kind "
            f"{kind!r} skipped"
            for kind, (first, count) in self.unknown.items()
        ]

    def drain(self) -> list[Action]:
        out, self.actions = self.actions, []
        return out

    def transcript(self) -> Transcript:
        """The actions grouped by model call (a `CallPrompt` fills in its call's size)."""
        calls: list[tuple[list[dict[str, Any]], list[dict[str, Any]], list[int | None]]] = []
        pending: list[dict[str, Any]] = []
        for action in self.actions:
            if isinstance(action, Input):
                pending.append(action.event)
            elif isinstance(action, CallStart):
                calls.append((pending, [], [action.prompt_tokens]))
                pending = []
            elif isinstance(action, Output):
                calls[-1][1].append(action.event)
            elif calls and calls[-1][2][0] is None:
                calls[-1][2][0] = action.prompt_tokens
        b = self.builder
        if b.count == 0:
            raise BadInputError(f"{b.source}: no messages to import")
        transcript = Transcript(
            b.fmt,
            b.source,
            [ModelCall(i, o, p[0]) for i, o, p in calls],
            pending,
            self.warnings(),
        )
        _fill_timestamps(transcript.events())
        check_transcript(transcript)
        return transcript


@dataclass
class BuilderParser:
    """What the Claude Code and Codex line parsers share: a Stream whose `_Builder` is made for
    the subclass's FORMAT, reached as `self.b`."""

    stream: Stream
    FORMAT: ClassVar[str]

    @classmethod
    def create(cls, source: str) -> Self:
        return cls(Stream(_Builder(cls.FORMAT, source)))

    @property
    def b(self) -> _Builder:
        return self.stream.builder

    def input_source_compaction(
        self,
        *,
        line: int,
        ts: str | None,
        summary: str | None,
        tokens_before: int | None = None,
        trigger: str | None = None,
    ) -> None:
        """Input the marker of a compaction the agent did itself (`source_compaction`)."""
        self.stream.input(
            source_compaction(
                self.b,
                self.FORMAT,
                line=line,
                ts=ts,
                summary=summary,
                tokens_before=tokens_before,
                trigger=trigger,
            )
        )


class LineParser(Protocol):
    stream: Stream

    def feed(self, line: int, value: Any) -> None:
        """Read one parsed JSONL line (`line` is its 1-based number)."""

    def close(self) -> None:
        """The log ended (import) or stopped for now: flush what is held."""


def decode_line(raw: str, source: str, line: int) -> Any:
    """One JSONL line as a value; BadInputError("FILE:LINE: ...") when it is not JSON."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            msg = exc.msg.removesuffix(" at")
            raise BadInputError(
                f"{source}:{line}: not valid JSON ({msg} at column {exc.colno}); "
                "a torn or cut line?"
            ) from None
        raise BadInputError(f"{source}:{line}: not valid JSON (nested too deeply)") from None


def parse_lines(text: str, parser: LineParser) -> Transcript:
    """Feed every non-blank line of `text` to `parser`, then close it."""
    source = parser.stream.builder.source
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
            raise BadInputError(
                f"{source}:{number}: a line of {len(line):,} characters, over the "
                f"{MAX_LINE_BYTES // (1024 * 1024)} MiB line limit"
            )
        parser.feed(number, decode_line(line, source, number))
    parser.close()
    return parser.stream.transcript()


def text_of(content: Any) -> str:
    """Text of a string or a list of text blocks (other blocks as placeholders)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            btype = block.get("type")
            text = block.get("text")
            if isinstance(text, str) and btype in (
                "text",
                "input_text",
                "output_text",
                "summary_text",
                "reasoning_text",
            ):
                parts.append(text)
            elif btype in ("image", "input_image", "image_url"):
                source = block.get("source")
                mime = source.get("media_type") if isinstance(source, dict) else None
                parts.append(f"[image omitted: {mime if isinstance(mime, str) else 'image'}]")
            else:
                parts.append(f"[{btype if isinstance(btype, str) else 'block'} omitted]")
    return "\n".join(p for p in parts if p)


def carry_notes(event: dict[str, Any], key: str, notes: list[str]) -> None:
    """The open call's notes (Claude Code's thinking, Codex's reasoning summaries) put on its
    next output event's `meta[key]`, joined, and emptied: they belong to that output alone."""
    if notes:
        event["meta"][key] = "\n\n".join(notes)
        notes.clear()


def nonneg(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def source_compaction(
    b: _Builder,
    agent: str,
    *,
    line: int,
    ts: str | None,
    summary: str | None,
    tokens_before: int | None = None,
    trigger: str | None = None,
) -> dict[str, Any]:
    """The marker for a compaction the source agent did itself: a `system_event` whose
    content only says where the agent cut (so it costs a few tokens in our prompt, as a
    boundary note), with the agent's own summary and sizes in `meta.source_compaction`
    (the TUI's Chunks tab shows it beside the chunk this engine made for the same span)."""
    from core.tokens import estimate_tokens

    info: dict[str, Any] = {"agent": agent, "summary": summary or ""}
    info["summary_tokens"] = estimate_tokens(summary or "")
    if tokens_before is not None:
        info["tokens_before"] = tokens_before
    if trigger is not None:
        info["trigger"] = trigger
    before = f", {tokens_before:,} tokens before" if tokens_before is not None else ""
    how = f"{trigger}, " if trigger else ""
    size = f"summary of {info['summary_tokens']:,} estimated tokens"
    content = f"[{agent} compacted its own context here ({how}{size}{before})]"
    return b.event(
        "system_event",
        "system",
        content,
        line=line,
        ts=ts,
        meta={"source_compaction": info},
    )


def pi_compaction(
    b: _Builder, entry: dict[str, Any], *, line: int, ts: str | None
) -> dict[str, Any]:
    """pi's own `compaction` entry (`summary`, `tokensBefore`) as a source-compaction marker."""
    summary = entry.get("summary")
    return source_compaction(
        b,
        "pi",
        line=line,
        ts=ts,
        summary=summary if isinstance(summary, str) else None,
        tokens_before=nonneg(entry.get("tokensBefore")),
    )


def reasoning_of(message: dict[str, Any], extra: dict[str, Any] | None) -> str:
    """`reasoning_content` (or `reasoning`) of a chat message, else of the raw response's
    first choice kept in mini-swe-agent's `extra.response`; "" when there is none."""
    candidates: list[Any] = [message.get("reasoning_content"), message.get("reasoning")]
    response = extra.get("response") if isinstance(extra, dict) else None
    choices = response.get("choices") if isinstance(response, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        inner = choices[0].get("message")
        if isinstance(inner, dict):
            candidates += [inner.get("reasoning_content"), inner.get("reasoning")]
    return next((c for c in candidates if isinstance(c, str) and c.strip()), "")
