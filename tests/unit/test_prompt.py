"""Prompt assembly (contract §11): native chat messages, no history block, no markers."""

from __future__ import annotations

import json

from core.compaction.prompt import build_prompt_messages, estimate_message_tokens
from core.events import Event
from core.tokens import EVENT_OVERHEAD_TOKENS

HOT: list[Event] = [
    {"id": "e1", "type": "user_input", "role": "user", "content": "check the wifi"},
    {"id": "e2", "type": "tool_call", "role": "assistant", "name": "ping",
     "tool_call_id": "c1", "arguments": {"host": "router"}},
    {"id": "e3", "type": "tool_call", "role": "assistant", "name": "scan",
     "tool_call_id": "c2", "arguments": {}},
    {"id": "e4", "type": "tool_result", "role": "tool", "name": "ping", "tool_call_id": "c1",
     "content": "64 bytes"},
    {"id": "e5", "type": "tool_result", "role": "tool", "name": "scan", "tool_call_id": "c2",
     "content": {"ssids": ["home"]}},
    {"id": "e6", "type": "screen_context", "role": "system", "content": "settings open"},
    {"id": "e7", "type": "assistant_output", "role": "assistant", "content": "Router is up."},
]  # fmt: skip


def test_order_and_roles_with_summary() -> None:
    summary = "# Session History (compressed chunks)\n\n## Rolling Summary\n"
    msgs = build_prompt_messages("You are helpful.", summary, HOT, "what next?")
    assert [m["role"] for m in msgs] == [
        "system", "user", "assistant", "tool", "tool", "system", "assistant", "user",
    ]  # fmt: skip
    assert msgs[0] == {"role": "system", "content": "You are helpful.\n\n" + summary}
    assert msgs[1] == {"role": "user", "content": "check the wifi"}
    assert msgs[-1] == {"role": "user", "content": "what next?"}
    assert msgs[3]["tool_call_id"] == "c1" and msgs[3]["content"] == "64 bytes"
    assert json.loads(msgs[4]["content"]) == {"ssids": ["home"]}


def test_consecutive_tool_calls_merge_into_one_assistant_message() -> None:
    msgs = build_prompt_messages("sys", None, HOT, "t")
    calls = msgs[2]["tool_calls"]
    assert [c["id"] for c in calls] == ["c1", "c2"]
    assert calls[0]["function"] == {"name": "ping", "arguments": '{"host":"router"}'}
    assert sum(1 for m in msgs if m.get("tool_calls")) == 1


def test_summary_only_when_non_empty() -> None:
    for summary in (None, "", "  \n"):
        msgs = build_prompt_messages("sys", summary, [], "task")
        assert msgs == [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
        ]


def test_no_history_block_or_markers_and_events_untouched() -> None:
    before = json.dumps(HOT, sort_keys=True)
    msgs = build_prompt_messages("sys", "summary text", HOT, "task")
    text = json.dumps(msgs)
    assert "Conversation history" not in text
    assert "hot window" not in text.lower() and "BEGIN" not in text and "END" not in text
    assert json.dumps(HOT, sort_keys=True) == before


def test_estimate_message_tokens() -> None:
    assert estimate_message_tokens({"role": "user", "content": "abcdefgh"}) == (
        EVENT_OVERHEAD_TOKENS + 2
    )
    assert estimate_message_tokens({"role": "user", "content": "网络设置"}) == (
        EVENT_OVERHEAD_TOKENS + 4
    )
    msgs = build_prompt_messages("sys", None, HOT, "t")
    # name "ping" (1) + '{"host":"router"}' (17 chars -> 5) + "scan" (1) + "{}" (1)
    assert estimate_message_tokens(msgs[2]) == EVENT_OVERHEAD_TOKENS + 1 + 5 + 1 + 1
    assert estimate_message_tokens({"role": "assistant", "content": None}) == (
        EVENT_OVERHEAD_TOKENS
    )
