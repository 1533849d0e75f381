"""Prompt assembly (contract §11, design "Hot-Window Prompt Placement").

The model gets: one system message (the system prompt, then summary.md when there is compressed
history), the hot-window events as native chat messages, then the task as a user message. No
"Conversation history:" block, no start/end markers; nothing here is written back to events.jsonl.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.events import Event, events_to_messages
from core.text import compact_json
from core.tokens import EVENT_OVERHEAD_TOKENS, estimate_tokens


def build_prompt_messages(
    system_prompt: str,
    summary_md: str | None,
    hot_events: Sequence[Event],
    task: str,
) -> list[dict[str, Any]]:
    """The messages a model would get for `task` now."""
    system = system_prompt
    if summary_md and summary_md.strip():
        system = f"{system_prompt}\n\n{summary_md}"
    return [
        {"role": "system", "content": system},
        *events_to_messages(list(hot_events)),
        {"role": "user", "content": task},
    ]


def estimate_message_tokens(msg: dict[str, Any]) -> int:
    """Estimate of one chat message, on the same scale as the event estimate (contract §3).

    Content (a string as is, anything else as compact JSON), each tool call's function name
    and arguments, and the message's name, plus the per-event overhead constant.
    """
    total = EVENT_OVERHEAD_TOKENS
    content = msg.get("content")
    if content is not None:
        total += estimate_tokens(content if isinstance(content, str) else compact_json(content))
    name = msg.get("name")
    if isinstance(name, str):
        total += estimate_tokens(name)
    for call in msg.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            total += estimate_tokens(compact_json(call))
            continue
        fname = function.get("name")
        if isinstance(fname, str):
            total += estimate_tokens(fname)
        args = function.get("arguments")
        if args is not None:
            total += estimate_tokens(args if isinstance(args, str) else compact_json(args))
    return total
