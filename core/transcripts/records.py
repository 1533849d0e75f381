"""Chat-message records ↔ session events, scrubbed at the boundary (design: Screenshot Data
Scrubbing: sanitizeMessageRecords and sessionEventFromRecord; the design's
compactToolResultForChatHistory is `sanitize_message_records` applied to tool records).

A runtime that keeps its own chat-history store (langchain-style message records) converts
through here, so a screenshot payload never reaches any persisted store by another path.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from core.events import Event
from core.scrub import strip_screenshot_data


def session_events_from_record(record: Mapping[str, Any]) -> list[Event]:
    role = str(record.get("role") or "system")
    content = record.get("content")
    calls = record.get("tool_calls")
    if role == "assistant" and isinstance(calls, list) and calls:
        events: list[Event] = []
        for call in calls:
            fn = call.get("function", {}) if isinstance(call, Mapping) else {}
            args: Any = fn.get("arguments") if isinstance(fn, Mapping) else None
            if isinstance(args, str):
                with contextlib.suppress(ValueError):
                    args = json.loads(args)
            events.append(
                {
                    "type": "tool_call",
                    "role": "assistant",
                    "name": fn.get("name") if isinstance(fn, Mapping) else None,
                    "tool_call_id": call.get("id") if isinstance(call, Mapping) else None,
                    "arguments": args,
                    "content": content,
                }
            )
        return [
            strip_screenshot_data({k: v for k, v in e.items() if v is not None}) for e in events
        ]
    etype = {
        "user": "user_input",
        "assistant": "assistant_output",
        "tool": "tool_result",
        "system": "system_event",
    }.get(role, role)
    event: Event = {"type": etype, "role": role, "content": content}
    for key in ("name", "tool_call_id"):
        if record.get(key) is not None:
            event[key] = record[key]
    return [strip_screenshot_data(event)]


def sanitize_message_records(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat-history records with screenshot payloads removed, before they are synchronised
    into session events or persisted as chat history."""
    out: list[dict[str, Any]] = []
    for record in records:
        rec = dict(record)
        if rec.get("role") == "tool":
            probe = strip_screenshot_data(
                {"type": "tool_result", "name": rec.get("name"), "content": rec.get("content")}
            )
            if probe.get("meta", {}).get("scrubbed"):
                rec["content"] = probe["content"]
        out.append(rec)
    return out
