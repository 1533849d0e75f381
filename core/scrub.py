"""Screenshot scrubbing (contract §2): drop base64 image payloads before they are persisted.

A screenshot's `data` is several KB of base64 that would count as ASCII text in every hot-window
token estimate and be useless to the model; its metadata (width, height, format, size,
action_output, ...) is what later turns need, so that is kept.
"""

from __future__ import annotations

import json
from typing import Any

from core.events import Event
from core.text import compact_json

SCREENSHOT_NAME = "screenshot"
IMAGE_METADATA_KEYS = frozenset({"width", "height", "format"})


def _looks_like_image(content: dict[str, Any]) -> bool:
    return "data" in content and not IMAGE_METADATA_KEYS.isdisjoint(content)


def _content_object(content: Any) -> tuple[dict[str, Any] | None, bool]:
    """The content as an object, and whether it came from a JSON string.

    Only strings that start with '{' are parsed, so long plain-text results cost nothing.
    """
    if isinstance(content, dict):
        return content, False
    if isinstance(content, str) and content.lstrip().startswith("{"):
        try:
            parsed = json.loads(content)
        except (ValueError, RecursionError):
            return None, False
        if isinstance(parsed, dict):
            return parsed, True
    return None, False


def _json_text(value: dict[str, Any]) -> str:
    """Compact JSON; ASCII escapes only when a lone surrogate (from a \\ud800 escape) would
    otherwise make the event impossible to write as UTF-8."""
    text = compact_json(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"))
    return text


def strip_screenshot_data(event: Event) -> Event:
    """The event without its screenshot `data`, marked `meta.scrubbed = true`.

    Applies to a `tool_result` named `screenshot`, or one whose content object (or JSON-object
    string) has `data` beside `width`, `height` or `format`. Anything else, and a screenshot
    result that has no `data` left to remove, is returned as is (the same object): the mark
    only ever records that a payload was actually dropped, which also makes a second pass a
    no-op. The input is never mutated; a JSON-string content is written back as compact JSON.
    A `meta` that is not an object is left alone rather than overwritten.
    """
    if event.get("type") != "tool_result":
        return event
    content, was_string = _content_object(event.get("content"))
    if content is None or "data" not in content:
        return event
    if event.get("name") != SCREENSHOT_NAME and not _looks_like_image(content):
        return event

    kept = {key: value for key, value in content.items() if key != "data"}
    scrubbed: Event = dict(event)
    scrubbed["content"] = _json_text(kept) if was_string else kept
    meta = event.get("meta")
    if meta is None:
        scrubbed["meta"] = {"scrubbed": True}
    elif isinstance(meta, dict):
        scrubbed["meta"] = {**meta, "scrubbed": True}
    return scrubbed
