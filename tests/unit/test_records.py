"""Every persistence boundary scrubs screenshots: record conversion and chat-history sync."""

from __future__ import annotations

import json

from core.transcripts.records import sanitize_message_records, session_events_from_record

SHOT = {"data": "iVBORw0KGgoAAAANSUhEUg" * 50, "width": 1080, "height": 2400, "format": "png"}


def test_tool_record_with_screenshot_becomes_scrubbed_tool_result() -> None:
    (event,) = session_events_from_record(
        {"role": "tool", "name": "screenshot", "tool_call_id": "c1", "content": json.dumps(SHOT)}
    )
    assert event["type"] == "tool_result" and event["tool_call_id"] == "c1"
    assert "iVBORw0KGgo" not in json.dumps(event)
    assert event["meta"]["scrubbed"] is True
    assert json.loads(event["content"])["width"] == 1080


def test_assistant_record_with_parallel_tool_calls() -> None:
    events = session_events_from_record(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "function": {"name": "tap", "arguments": '{"x": 1}'}},
                {"id": "b", "function": {"name": "swipe", "arguments": "not json"}},
            ],
        }
    )
    assert [e["type"] for e in events] == ["tool_call", "tool_call"]
    assert events[0]["arguments"] == {"x": 1} and events[1]["arguments"] == "not json"
    assert [e["tool_call_id"] for e in events] == ["a", "b"]


def test_roles_map_to_event_types() -> None:
    for role, etype in [
        ("user", "user_input"),
        ("assistant", "assistant_output"),
        ("system", "system_event"),
    ]:
        assert session_events_from_record({"role": role, "content": "x"})[0]["type"] == etype


def test_sanitize_records_removes_payload_and_keeps_others() -> None:
    records = [
        {"role": "user", "content": "take a screenshot"},
        {"role": "tool", "name": "screenshot", "content": dict(SHOT)},
    ]
    clean = sanitize_message_records(records)
    assert clean[0] == records[0]
    assert "data" not in clean[1]["content"] and clean[1]["content"]["height"] == 2400
    assert "data" in records[1]["content"], "input records are not mutated"
    assert sanitize_message_records(clean) == clean
