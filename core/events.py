"""The event model (contract §2): plain dicts that keep unknown fields verbatim."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from core.errors import EventError
from core.text import compact_json

Event = dict[str, Any]
"""One line of events.jsonl. Known fields: id, type, role, content, ts, name, tool_call_id,
arguments, run_id, meta. Anything else is carried through every rewrite untouched."""

KNOWN_TYPES = (
    "user_input",
    "assistant_output",
    "role_output",
    "tool_call",
    "tool_result",
    "system_event",
    "screen_context",
)
AMBIENT_TYPES = frozenset({"system_event", "screen_context"})
SPLIT_ALLOWED_TYPES = frozenset({"assistant_output", "role_output", "tool_call"})
FORBIDDEN_TYPES = frozenset({"tool_result", "system_event", "screen_context"})


class CutClass(StrEnum):
    """Whether the hot window may start at an event (design: Legal Cut Points)."""

    BOUNDARY = "boundary"
    SPLIT = "split"
    FORBIDDEN = "forbidden"


def _text_field(event: Event, key: str) -> str | None:
    """`type` / `role` as read from a file may be any JSON value; only a string counts."""
    value = event.get(key)
    return value if isinstance(value, str) else None


def cut_class(event: Event) -> CutClass:
    """By type; by role only when the type is not one of the known seven."""
    etype = _text_field(event, "type")
    if etype == "user_input":
        return CutClass.BOUNDARY
    if etype in SPLIT_ALLOWED_TYPES:
        return CutClass.SPLIT
    if etype in FORBIDDEN_TYPES:
        return CutClass.FORBIDDEN
    role = _text_field(event, "role")
    if role == "user":
        return CutClass.BOUNDARY
    if role == "assistant":
        return CutClass.SPLIT
    return CutClass.FORBIDDEN


def is_turn_boundary(event: Event) -> bool:
    return cut_class(event) is CutClass.BOUNDARY


def is_ambient(event: Event) -> bool:
    """system_event / screen_context: context pulled into the hot window with the event after it."""
    return _text_field(event, "type") in AMBIENT_TYPES


def is_synthetic(event: Event) -> bool:
    meta = event.get("meta")
    return isinstance(meta, dict) and meta.get("synthetic") == "split_turn_prefix"


def new_event_id() -> str:
    """Opaque, unique per memory root (122 random bits)."""
    return "ev_" + uuid.uuid4().hex


def now_ts() -> str:
    """RFC 3339 UTC with milliseconds, e.g. 2026-11-29T17:45:43.120Z."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def validate_event(obj: object, where: str = "event") -> Event:
    """Check the shape of an event to be appended; raise EventError naming `where`.

    Returns a shallow copy so the caller's object is never mutated by later steps.
    """
    if not isinstance(obj, dict):
        raise EventError(f"{where}: an event must be a JSON object, got {type(obj).__name__}")
    for key in ("id", "type", "role", "ts", "name", "tool_call_id", "run_id"):
        if key in obj and obj[key] is not None and not isinstance(obj[key], str):
            raise EventError(f"{where}: field {key!r} must be a string")
    if "id" in obj and obj["id"] is not None and not obj["id"]:
        raise EventError(f"{where}: field 'id' must not be empty")
    if not obj.get("type") and not obj.get("role"):
        raise EventError(f"{where}: an event needs a 'type' or a 'role'")
    if "meta" in obj and obj["meta"] is not None and not isinstance(obj["meta"], dict):
        raise EventError(f"{where}: field 'meta' must be an object")
    return dict(obj)


def make_event(
    etype: str,
    content: Any,
    *,
    role: str | None = None,
    name: str | None = None,
    **extra: Any,
) -> Event:
    """A new event with the conventional role for its type (ids and ts come at append)."""
    event: Event = {"type": etype, "role": role or default_role(etype), "content": content}
    if name is not None:
        event["name"] = name
    event.update({k: v for k, v in extra.items() if v is not None})
    return event


def default_role(etype: str) -> str:
    return {
        "user_input": "user",
        "assistant_output": "assistant",
        "role_output": "assistant",
        "tool_call": "assistant",
        "tool_result": "tool",
        "system_event": "system",
        "screen_context": "system",
    }.get(etype, "system")


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else compact_json(content)


def event_to_message(event: Event) -> dict[str, Any]:
    """One native chat message for one hot-window event (contract §11)."""
    etype = _text_field(event, "type")
    if etype == "user_input":
        return {"role": "user", "content": _text(event.get("content"))}
    if etype in ("assistant_output", "role_output"):
        return {"role": "assistant", "content": _text(event.get("content"))}
    if etype == "tool_call":
        return {"role": "assistant", "content": None, "tool_calls": [tool_call_entry(event)]}
    if etype == "tool_result":
        msg: dict[str, Any] = {"role": "tool", "content": _text(event.get("content"))}
        if event.get("tool_call_id") is not None:
            msg["tool_call_id"] = event["tool_call_id"]
        if event.get("name") is not None:
            msg["name"] = event["name"]
        return msg
    if etype in AMBIENT_TYPES:
        return {"role": "system", "content": _text(event.get("content"))}
    role = event.get("role")
    mapped = role if role in ("user", "assistant", "system", "tool") else "system"
    return {"role": mapped, "content": _text(event.get("content"))}


def tool_call_entry(event: Event) -> dict[str, Any]:
    """The OpenAI-style tool_calls[] entry of a tool_call event."""
    args = event.get("arguments")
    if args is None and isinstance(event.get("content"), dict):
        args = event["content"]
    return {
        "id": event.get("tool_call_id") or event.get("id"),
        "type": "function",
        "function": {
            "name": event.get("name") or "",
            "arguments": args if isinstance(args, str) else compact_json(args or {}),
        },
    }


def events_to_messages(events: list[Event]) -> list[dict[str, Any]]:
    """Native chat messages; consecutive tool_call events merge into one assistant message."""
    out: list[dict[str, Any]] = []
    for event in events:
        msg = event_to_message(event)
        if (
            event.get("type") == "tool_call"
            and out
            and out[-1].get("role") == "assistant"
            and out[-1].get("tool_calls")
            and out[-1].get("_merge")
        ):
            out[-1]["tool_calls"].extend(msg["tool_calls"])
            continue
        if event.get("type") == "tool_call":
            msg["_merge"] = True
        out.append(msg)
    for msg in out:
        msg.pop("_merge", None)
    return out
