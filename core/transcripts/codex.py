"""Codex CLI rollout logs (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as events
(issue 23; docs/REPLAY.md has the mapping and what is skipped and why).

Each line is `{"timestamp", "type", "payload"}`. `response_item` lines are what the model read
and wrote (the Responses API items); `event_msg` lines are the UI's copies of them, skipped,
except `token_count`: Codex writes one after each model response, and one whose total moved
gives that response's prompt size (`last_token_usage.input_tokens`). A response item the model
wrote, after inputs (or after a `token_count`), starts a model call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from core.transcripts.stream import BuilderParser, carry_notes, nonneg, text_of
from core.transcripts.transcript import _arguments, _iso_ts

FORMAT = "codex"

_CONTEXT = re.compile(
    r"^\s*(<environment_context>|<user_instructions>|<permissions instructions>|"
    r"# AGENTS\.md instructions|<INSTRUCTIONS>|<user_shell_command>|<turn_aborted>)"
)
"""User-role messages Codex wrote itself (environment, AGENTS.md, notices)."""

_BARE_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
    }
)
"""Response items as the first rollout format wrote them, without the envelope."""

_SKIPPED_ITEMS = frozenset({"web_search_call", "ghost_snapshot", "other", "image_generation_call"})
"""Response items with no text the model reads back (a search it ran server-side, an undo
snapshot of the work tree)."""


@dataclass
class CodexParser(BuilderParser):
    FORMAT: ClassVar[str] = FORMAT
    last_total: int | None = None
    """`total_token_usage.total_tokens` of the last token_count (a repeat has not moved)."""
    reasoning: list[str] = field(default_factory=list)
    """Reasoning summaries of the open call, put on its next output's `meta.reasoning_summary`."""
    awaiting_prompt: bool = False
    """The open call has no prompt size yet (its token_count is still to come)."""

    def feed(self, line: int, value: Any) -> None:
        if isinstance(value, dict) and "type" not in value:
            # Codex before its `session_meta` envelope (spring 2025): a bare header line
            # (`id`, `timestamp`, `instructions`), bare response items, and
            # `{"record_type": "state"}` lines.
            if "record_type" in value:
                self.stream.skip("record_type state")
                return
            if {"id", "timestamp"} <= value.keys():
                sid = value.get("id")
                self.stream.session_id = sid if isinstance(sid, str) else None
                return
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise self.b.error(line, 'a Codex line must be a JSON object with a string "type"')
        ltype = value["type"]
        if ltype in _BARE_ITEMS and "payload" not in value:
            self._item(value, line, _iso_ts(value.get("timestamp")))
            return
        payload = value.get("payload")
        ts = _iso_ts(value.get("timestamp"))
        if not isinstance(payload, dict):
            if ltype in ("session_meta", "response_item", "event_msg", "compacted"):
                raise self.b.error(line, f'a Codex {ltype!r} line needs a "payload" object')
            payload = {}
        if ltype == "session_meta":
            sid = payload.get("id")
            if isinstance(sid, str) and self.stream.session_id is None:
                self.stream.session_id = sid
        elif ltype == "response_item":
            self._item(payload, line, ts)
        elif ltype == "event_msg":
            if payload.get("type") == "token_count":
                self._token_count(payload, line)
            else:
                self.stream.skip("event_msg copy")
        elif ltype == "compacted":
            message = payload.get("message")
            self._inputs_follow()
            self.input_source_compaction(
                line=line, ts=ts, summary=message if isinstance(message, str) else None
            )
        elif ltype in ("turn_context", "world_state"):
            self.stream.skip(ltype)
        else:
            self.stream.skip_unknown(ltype, line)

    def close(self) -> None:
        self.reasoning = []

    # --- items ---------------------------------------------------------------------------

    def _item(self, item: dict[str, Any], line: int, ts: str | None) -> None:
        itype = item.get("type")
        b = self.b
        if itype == "message":
            role = item.get("role")
            text = text_of(item.get("content"))
            if role == "assistant":
                if text:
                    self._output(b.event("assistant_output", "assistant", text, line=line, ts=ts))
            elif role == "user" and not _CONTEXT.match(text):
                self._inputs_follow()
                self.stream.input(b.event("user_input", "user", text, line=line, ts=ts))
            elif role in ("user", "developer", "system"):
                self._inputs_follow()
                kind = {"kind": f"codex_{role}"}
                self.stream.input(
                    b.event("system_event", "system", text, line=line, ts=ts, meta=kind)
                )
            else:
                raise b.error(line, f"unknown Codex message role {role!r}")
        elif itype == "reasoning":
            summary = text_of(item.get("summary"))
            if summary:
                self.reasoning.append(summary)
        elif itype in ("function_call", "custom_tool_call", "local_shell_call"):
            if itype == "function_call":
                raw = item.get("arguments")
                args = _arguments(raw) if isinstance(raw, str) else (raw or {})
                name = item.get("name")
            elif itype == "custom_tool_call":
                args = {"input": item.get("input")}
                name = item.get("name")
            else:
                action = item.get("action")
                args = action if isinstance(action, dict) else {}
                name = "local_shell"
            call_id = item.get("call_id") or item.get("id")
            self._output(b.tool_call(call_id, name, args, line=line, ts=ts))
        elif itype in (
            "function_call_output",
            "custom_tool_call_output",
            "local_shell_call_output",
        ):
            self._inputs_follow()
            if self.stream.orphan_result(item.get("call_id"), line):
                return
            content, meta = _output_text(item.get("output"))
            self.stream.input(
                b.tool_result(item.get("call_id"), content, line=line, ts=ts, meta=meta)
            )
        elif itype == "agent_message":
            # A message between agents (multi-agent Codex): context this agent read.
            self._inputs_follow()
            meta = {"kind": "codex_agent_message"}
            text = text_of(item.get("content"))
            self.stream.input(b.event("system_event", "system", text, line=line, ts=ts, meta=meta))
        elif itype in _SKIPPED_ITEMS:
            self.stream.skip(f"response_item {itype}")
        else:
            self.stream.skip_unknown(f"response_item {itype}", line)

    def _output(self, event: dict[str, Any]) -> None:
        carry_notes(event, "reasoning_summary", self.reasoning)
        if not self.stream.in_call:
            self.awaiting_prompt = True
        self.stream.output(event)

    def _inputs_follow(self) -> None:
        self.reasoning = []
        self.stream.in_call = False

    def _token_count(self, payload: dict[str, Any], line: int) -> None:
        info = payload.get("info")
        if not isinstance(info, dict):
            return
        total = info.get("total_token_usage")
        last = info.get("last_token_usage")
        moved = nonneg(total.get("total_tokens")) if isinstance(total, dict) else None
        if moved is None or moved == self.last_total:
            return
        self.last_total = moved
        prompt = nonneg(last.get("input_tokens")) if isinstance(last, dict) else None
        if self.awaiting_prompt and prompt:
            self.stream.prompt(prompt, line)
        self.awaiting_prompt = False
        self.stream.in_call = False  # the next item the model writes is another call


def _output_text(output: Any) -> tuple[str, dict[str, Any] | None]:
    """A tool output as the model read it; `meta.exit_code` (and is_error) when it says."""
    if isinstance(output, dict):
        content = output.get("content")
        text = content if isinstance(content, str) else json.dumps(output, ensure_ascii=False)
        return text, ({"is_error": True} if output.get("success") is False else None)
    if not isinstance(output, str):
        return text_of(output), None
    meta: dict[str, Any] | None = None
    if output.startswith("{"):
        try:
            parsed = json.loads(output)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
            code = nonneg(parsed["metadata"].get("exit_code"))
            if code is not None:
                meta = {"exit_code": code, **({"is_error": True} if code else {})}
    return output, meta
