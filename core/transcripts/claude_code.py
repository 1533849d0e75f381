"""Claude Code session logs (`~/.claude/projects/<project>/<session>.jsonl`) as events
(issue 23; docs/REPLAY.md has the mapping and what is skipped and why).

Claude Code writes one line per content block of an assistant message, each with the message's
`id` and its `usage`: one model call per `message.id`, prompt size input + cache creation +
cache read tokens. Tool results come back in `user` lines, sometimes between two blocks of the
same message (tools start while the message streams): they are held until the message is done,
so the API order (results after all the calls of their message) is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from core.transcripts.stream import BuilderParser, carry_notes, nonneg, text_of
from core.transcripts.transcript import _iso_ts, _kind

FORMAT = "claude-code"

_SKIPPED_TYPES = frozenset(
    {
        "file-history-snapshot",
        "file-history-delta",
        "progress",
        "summary",
        "custom-title",
        "ai-title",
        "last-prompt",
        "mode",
        "permission-mode",
        "agent-name",
        "bridge-session",
        "atis-latch",
        "tag",
    }
)
"""Bookkeeping lines: titles, file snapshots for undo, progress of running tools. The model
never reads them."""

_WRAPPERS = re.compile(
    r"^\s*(<command-name>|<command-message>|<command-args>|<local-command-stdout>|"
    r"<local-command-stderr>|<local-command-caveat>|<task-notification>|<system-reminder>|"
    r"<bash-stdout>|<bash-stderr>|<user-prompt-submit-hook>|\[Request interrupted by user)"
)
"""User-role text Claude Code wrote itself (command output, notices, interruptions)."""

_SLASH = re.compile(r"^\s*<command-(message|name)>")
"""A slash command as Claude Code records it: `<command-message>…<command-name>/init…`."""


@dataclass
class ClaudeCodeParser(BuilderParser):
    FORMAT: ClassVar[str] = FORMAT
    message_id: str | None = None
    """The assistant message (model call) still open."""
    held: list[dict[str, Any]] = field(default_factory=list)
    """Tool results that came while their message was still being written."""
    thinking: list[str] = field(default_factory=list)
    """Thinking of the open call, put on its next output event's `meta.thinking`."""
    boundary: tuple[int, str | None, dict[str, Any]] | None = None
    """A compact_boundary waiting for its summary line: (line, ts, compactMetadata)."""
    queued: list[str] = field(default_factory=list)
    """Prompts typed while the agent worked (queue `enqueue`), not yet delivered."""

    def feed(self, line: int, value: Any) -> None:
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise self.b.error(
                line, 'a Claude Code line must be a JSON object with a string "type"'
            )
        ltype = value["type"]
        ts = _iso_ts(value.get("timestamp"))
        if self.boundary is not None and not (ltype == "user" and value.get("isCompactSummary")):
            self._compaction(None)
        if value.get("sessionId") and self.stream.session_id is None:
            sid = value["sessionId"]
            self.stream.session_id = sid if isinstance(sid, str) else None
        if value.get("isSidechain") is True:
            self.stream.skip("sidechain (subagent) line")
            return
        if ltype == "assistant":
            self._assistant(value, line, ts)
        elif ltype == "user":
            self._user(value, line, ts)
        elif ltype == "system":
            if value.get("subtype") == "compact_boundary":
                self._end_call()
                raw = value.get("compactMetadata")
                self.boundary = (line, ts, raw if isinstance(raw, dict) else {})
            else:
                self.stream.skip("system note")
        elif ltype == "queue-operation":
            self._queue(value, line, ts)
        elif ltype == "attachment":
            att = value.get("attachment")
            if isinstance(att, dict) and att.get("type") == "queued_command":
                prompt = att.get("prompt")
                if isinstance(prompt, str) and prompt in self.queued:
                    self.queued.remove(prompt)
                    self._typed(prompt, line, ts, mid_turn=True)
                    return
            self.stream.skip("attachment")
        elif ltype in _SKIPPED_TYPES:
            self.stream.skip(ltype)
        else:
            self.stream.skip_unknown(ltype, line)

    def close(self) -> None:
        if self.boundary is not None:
            self._compaction(None)
        self._end_call()

    # --- lines ---------------------------------------------------------------------------

    def _blocks(self, message: dict[str, Any], line: int, problem: str) -> list[Any]:
        """The message's content blocks (a plain string is one text block); `problem`, with
        what the content is instead, as the error when it is neither."""
        content = message.get("content")
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise self.b.error(line, f"{problem}, got {_kind(content)}")
        return content

    def _assistant(self, value: dict[str, Any], line: int, ts: str | None) -> None:
        message = value.get("message")
        if not isinstance(message, dict):
            raise self.b.error(line, 'an assistant line needs a "message" object')
        content = self._blocks(message, line, "assistant content must be a list of blocks")
        if value.get("isApiErrorMessage") is True or message.get("model") == "<synthetic>":
            # Claude Code's own stand-in for a reply (an API error, "No response requested."):
            # no model call happened.
            self._end_call()
            text = text_of(content)
            if text:
                self.stream.input(
                    self.b.event(
                        "system_event", "system", text, line=line, ts=ts, meta={"kind": "synthetic"}
                    )
                )
            return
        mid = message.get("id")
        if not isinstance(mid, str) or not mid:
            mid = f"line-{line}"
        if mid != self.message_id:
            self._end_call()
            self.message_id = mid
            self.stream.call(_prompt_tokens(message.get("usage")), line)
        for block in content:
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise self.b.error(line, 'an assistant content block needs a string "type"')
            btype = block["type"]
            if btype == "text":
                said = block.get("text")
                if isinstance(said, str) and said.strip():
                    self._output(
                        self.b.event("assistant_output", "assistant", said, line=line, ts=ts)
                    )
            elif btype in ("tool_use", "server_tool_use"):
                args = block.get("input")
                self._output(
                    self.b.tool_call(
                        block.get("id"),
                        block.get("name"),
                        args if isinstance(args, dict) else {"input": args},
                        line=line,
                        ts=ts,
                    )
                )
            elif btype == "thinking":
                thought = block.get("thinking")
                if isinstance(thought, str) and thought:
                    self.thinking.append(thought)
            elif btype == "redacted_thinking":
                self.thinking.append("[redacted thinking]")
            else:
                self.stream.skip_unknown(f"assistant {btype} block", line)

    def _output(self, event: dict[str, Any]) -> None:
        carry_notes(event, "thinking", self.thinking)
        self.stream.output(event)

    def _user(self, value: dict[str, Any], line: int, ts: str | None) -> None:
        message = value.get("message")
        if not isinstance(message, dict):
            raise self.b.error(line, 'a user line needs a "message" object')
        if value.get("isCompactSummary") is True:
            summary = text_of(message.get("content"))
            if self.boundary is None:
                self.boundary = (line, ts, {})
            self._compaction(summary)
            return
        content = self._blocks(message, line, "user content must be a string or a list")
        results = [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]
        others = [
            c for c in content if not (isinstance(c, dict) and c.get("type") == "tool_result")
        ]
        for block in results:
            if self.stream.orphan_result(block.get("tool_use_id"), line):
                continue
            meta = {"is_error": True} if block.get("is_error") is True else None
            event = self.b.tool_result(
                block.get("tool_use_id"), text_of(block.get("content")), line=line, ts=ts, meta=meta
            )
            if self.message_id is not None:
                self.held.append(event)  # its message may still be streaming more blocks
            else:
                self.stream.input(event)
        text = text_of(others)
        if not text:
            return
        if _SLASH.match(text) and value.get("isMeta") is not True:
            # The slash command a person typed (`/init`, `/review 12`) is their request: without
            # it a session started by a command would have no turn at all.
            self._typed(text, line, ts, mid_turn=False, kind="slash_command")
            return
        if value.get("isMeta") is True or _WRAPPERS.match(text):
            self._end_call()
            self.stream.input(
                self.b.event(
                    "system_event", "system", text, line=line, ts=ts, meta={"kind": "claude_code"}
                )
            )
            return
        if text in self.queued:
            self.queued.remove(text)  # a queued prompt delivered as a turn of its own
        self._typed(text, line, ts, mid_turn=False)

    def _typed(
        self, text: str, line: int, ts: str | None, *, mid_turn: bool, kind: str | None = None
    ) -> None:
        self._end_call()
        meta: dict[str, Any] = {"queued": "mid_turn"} if mid_turn else {}
        if kind is not None:
            meta["kind"] = kind
        self.stream.input(self.b.event("user_input", "user", text, line=line, ts=ts, meta=meta))

    def _queue(self, value: dict[str, Any], line: int, ts: str | None) -> None:
        op = value.get("operation")
        content = value.get("content")
        text = content if isinstance(content, str) else None
        if op == "enqueue" and text is not None:
            self.queued.append(text)
        elif op == "remove" and text is not None and text in self.queued:
            # Taken from the queue and given to the model mid-turn (with the tool results).
            self.queued.remove(text)
            if text.lstrip().startswith("<task-notification>"):
                self._end_call()
                self.stream.input(
                    self.b.event(
                        "system_event",
                        "system",
                        text,
                        line=line,
                        ts=ts,
                        meta={"kind": "claude_code"},
                    )
                )
            else:
                self._typed(text, line, ts, mid_turn=True)
        elif op in ("popAll", "clear"):
            self.queued.clear()  # given back to the input box, not to the model
        else:
            self.stream.skip("queue operation")

    # --- calls and compactions -----------------------------------------------------------

    def _end_call(self) -> None:
        """The open message is done: its held tool results follow it."""
        if self.thinking and self.message_id is not None:
            self.stream.skip("thinking with no output after it")
        self.thinking = []
        self.message_id = None
        for event in self.held:
            self.stream.input(event)
        self.held = []

    def _compaction(self, summary: str | None) -> None:
        assert self.boundary is not None
        line, ts, meta = self.boundary
        self.boundary = None
        self._end_call()
        trigger = meta.get("trigger")
        self.input_source_compaction(
            line=line,
            ts=ts,
            summary=summary,
            tokens_before=nonneg(meta.get("preTokens")),
            trigger=trigger if isinstance(trigger, str) else None,
        )


def _prompt_tokens(usage: Any) -> int | None:
    if not isinstance(usage, dict):
        return None
    parts = [
        nonneg(usage.get(k))
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    ]
    total = sum(p for p in parts if p is not None)
    return total if total > 0 else None
