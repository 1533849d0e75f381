"""The event model (contract §2) and events as native chat messages (contract §11)."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import EventError
from core.events import CutClass, cut_class, event_to_message, events_to_messages, validate_event


@pytest.mark.parametrize(
    ("etype", "expected"),
    [
        ("user_input", CutClass.BOUNDARY),
        ("assistant_output", CutClass.SPLIT),
        ("role_output", CutClass.SPLIT),
        ("tool_call", CutClass.SPLIT),
        ("tool_result", CutClass.FORBIDDEN),
        ("system_event", CutClass.FORBIDDEN),
        ("screen_context", CutClass.FORBIDDEN),
    ],
)
def test_cut_class_of_every_known_type(etype: str, expected: CutClass) -> None:
    assert cut_class({"type": etype}) is expected


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("user", CutClass.BOUNDARY),
        ("assistant", CutClass.SPLIT),
        ("tool", CutClass.FORBIDDEN),
        ("system", CutClass.FORBIDDEN),
        ("narrator", CutClass.FORBIDDEN),
        (None, CutClass.FORBIDDEN),
    ],
)
def test_unknown_type_falls_back_to_role(role: str | None, expected: CutClass) -> None:
    event: dict[str, Any] = {"type": "custom_thing"}
    if role is not None:
        event["role"] = role
    assert cut_class(event) is expected
    no_type = {"role": role} if role is not None else {}
    assert cut_class(no_type) is expected


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"type": "tool_result", "role": "user"}, CutClass.FORBIDDEN),
        ({"type": "user_input", "role": "tool"}, CutClass.BOUNDARY),
        ({"type": "system_event", "role": "assistant"}, CutClass.FORBIDDEN),
        ({"type": "tool_call", "role": "system"}, CutClass.SPLIT),
    ],
)
def test_known_type_wins_over_role(event: dict[str, Any], expected: CutClass) -> None:
    assert cut_class(event) is expected


@pytest.mark.parametrize("obj", [[1, 2], "text", 3, None])
def test_validate_refuses_a_non_object(obj: object) -> None:
    with pytest.raises(EventError, match="stdin line 3"):
        validate_event(obj, "stdin line 3")


@pytest.mark.parametrize("key", ["id", "type", "role"])
def test_validate_refuses_non_string_id_type_role(key: str) -> None:
    event: dict[str, Any] = {"type": "user_input", "role": "user", key: 5}
    with pytest.raises(EventError, match=key):
        validate_event(event)


def test_validate_needs_a_type_or_a_role() -> None:
    with pytest.raises(EventError, match="type"):
        validate_event({"content": "hi"})
    assert validate_event({"role": "user", "content": "hi"})["role"] == "user"
    assert validate_event({"type": "user_input"})["type"] == "user_input"


def test_validate_refuses_meta_that_is_not_an_object() -> None:
    with pytest.raises(EventError, match="meta"):
        validate_event({"type": "user_input", "meta": ["x"]})


def test_validate_keeps_unknown_fields_and_does_not_return_the_callers_dict() -> None:
    original = {"type": "user_input", "content": "hi", "x_custom": {"a": [1, 2]}, "priority": 3}
    checked = validate_event(original)
    assert checked == original
    assert checked is not original
    checked["id"] = "ev_1"
    assert "id" not in original


def test_user_and_assistant_events_become_plain_messages() -> None:
    assert event_to_message({"type": "user_input", "content": "hi"}) == {
        "role": "user",
        "content": "hi",
    }
    for etype in ("assistant_output", "role_output"):
        assert event_to_message({"type": etype, "content": "ok"}) == {
            "role": "assistant",
            "content": "ok",
        }


def test_tool_result_becomes_a_tool_message_with_its_call_id() -> None:
    msg = event_to_message(
        {"type": "tool_result", "name": "search", "tool_call_id": "c1", "content": {"n": 1}}
    )
    assert msg["role"] == "tool"
    assert msg["tool_call_id"] == "c1"
    assert msg["content"] == '{"n":1}'


@pytest.mark.parametrize("etype", ["system_event", "screen_context"])
def test_ambient_events_become_system_messages(etype: str) -> None:
    assert event_to_message({"type": etype, "content": "screen: home"}) == {
        "role": "system",
        "content": "screen: home",
    }


def test_tool_call_becomes_assistant_with_tool_calls() -> None:
    msg = event_to_message(
        {"type": "tool_call", "name": "search", "tool_call_id": "c1", "arguments": {"q": "天气"}}
    )
    assert msg["role"] == "assistant"
    assert msg["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "search", "arguments": '{"q":"天气"}'},
        }
    ]


def test_consecutive_tool_calls_merge_into_one_assistant_message() -> None:
    events: list[dict[str, Any]] = [
        {"type": "user_input", "content": "two lookups"},
        {"type": "tool_call", "name": "a", "tool_call_id": "c1", "arguments": {}},
        {"type": "tool_call", "name": "b", "tool_call_id": "c2", "arguments": {}},
        {"type": "tool_result", "tool_call_id": "c1", "content": "A"},
        {"type": "tool_result", "tool_call_id": "c2", "content": "B"},
        {"type": "tool_call", "name": "c", "tool_call_id": "c3", "arguments": {}},
        {"type": "tool_result", "tool_call_id": "c3", "content": "C"},
        {"type": "assistant_output", "content": "done"},
    ]
    messages = events_to_messages(events)
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["c1", "c2"]
    assert [c["id"] for c in messages[4]["tool_calls"]] == ["c3"]
    assert [m.get("tool_call_id") for m in messages if m["role"] == "tool"] == ["c1", "c2", "c3"]
    assert "tool_calls" not in messages[-1]
    assert all(
        set(m) <= {"role", "content", "tool_calls", "tool_call_id", "name"} for m in messages
    )


def test_tool_call_after_assistant_text_is_its_own_message() -> None:
    messages = events_to_messages(
        [
            {"type": "assistant_output", "content": "let me check"},
            {"type": "tool_call", "name": "a", "tool_call_id": "c1", "arguments": {}},
        ]
    )
    assert len(messages) == 2
    assert messages[0] == {"role": "assistant", "content": "let me check"}
    assert len(messages[1]["tool_calls"]) == 1


def test_converting_does_not_change_the_events() -> None:
    events = [
        {"type": "tool_call", "name": "a", "tool_call_id": "c1", "arguments": {"x": 1}},
        {"type": "tool_call", "name": "b", "tool_call_id": "c2", "arguments": {"y": 2}},
    ]
    before = [dict(e) for e in events]
    events_to_messages(events)
    assert events == before
