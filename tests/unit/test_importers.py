"""Importers (core/transcripts/importers.py): each format on a real-format sample and on bad
input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.errors import BadInputError
from core.events import validate_event
from core.transcripts.importers import FORMATS, load_transcript, parse_transcript
from core.transcripts.transcript import Transcript
from tests.helpers.paths import TRANSCRIPTS

DATA = TRANSCRIPTS
PI = DATA / "pi_session.jsonl"
OPENAI = DATA / "openai_chat.json"
MINI = DATA / "mini_swe_agent.traj.json"
SAMPLES = [(PI, "pi"), (OPENAI, "openai"), (MINI, "mini-swe-agent")]


def types(t: Transcript) -> list[str]:
    return [e["type"] for e in t.events()]


def raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- every format ---------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "fmt"), SAMPLES, ids=[f for _, f in SAMPLES])
def test_sample_events_are_appendable_and_every_result_follows_its_call(
    path: Path, fmt: str
) -> None:
    t = load_transcript(path, fmt)
    assert t.format == fmt and t.source == str(path)
    assert t.calls, "a sample has model calls"
    calls_seen: dict[str, str] = {}
    for event in t.events():
        validate_event(event)
        assert event["meta"]["source"]["format"] == fmt
        assert isinstance(event["meta"]["source"]["line"], int)
        if event["type"] == "tool_call":
            assert isinstance(event["arguments"], dict)
            calls_seen[event["tool_call_id"]] = event["name"]
        if event["type"] == "tool_result":
            assert event["tool_call_id"] in calls_seen, "a result never comes before its call"
            assert event["name"] == calls_seen[event["tool_call_id"]]
    assert t.event_count == len(t.events())
    # Calls group the log as the agent ran: outputs are what the model produced.
    for call in t.calls:
        assert all(e["role"] == "assistant" for e in call.outputs)
        assert all(e["type"] != "assistant_output" for e in call.inputs)


@pytest.mark.parametrize(("path", "fmt"), SAMPLES, ids=[f for _, f in SAMPLES])
def test_timestamps_are_rfc3339_utc_and_never_run_backwards(path: Path, fmt: str) -> None:
    stamps = [e.get("ts") for e in load_transcript(path, fmt).events()]
    if fmt == "openai":  # chat-completions messages carry no times: the append stamps them
        assert stamps == [None] * len(stamps)
        return
    assert all(isinstance(s, str) and s.endswith("Z") and "T" in s for s in stamps)
    assert stamps == sorted(stamps)  # type: ignore[type-var]


def test_unknown_format_lists_the_formats() -> None:
    with pytest.raises(BadInputError) as err:
        parse_transcript("{}", "claude")
    for fmt in FORMATS:
        assert fmt in str(err.value)


def test_missing_file_and_non_utf8_are_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="cannot read the transcript"):
        load_transcript(tmp_path / "nope.jsonl", "pi")
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"type":"session","version":3}\n{"x":"caf\xe9"}\n')
    with pytest.raises(BadInputError, match=r"latin1\.jsonl:2: not UTF-8"):
        load_transcript(bad, "pi")


# --- pi -------------------------------------------------------------------------------------


def test_pi_maps_messages_blocks_and_usage() -> None:
    t = load_transcript(PI, "pi")
    events = t.events()
    first = events[0]
    assert first["type"] == "user_input"
    assert first["content"].startswith("`tally status` should accept --json")
    assert first["ts"] == "2026-11-28T09:14:23.777Z"  # the entry's timestamp, kept
    # assistant: text block, then the toolCall as a tool_call with its arguments object
    assert events[1] == {**events[1], "type": "assistant_output"}
    assert events[1]["content"] == "Let me look at the command first."
    read = events[2]
    assert read["type"] == "tool_call" and read["name"] == "read"
    assert read["tool_call_id"] == "toolu_01HzXq8VtTf3n2YkR6c1pA9d"
    assert read["arguments"] == {"path": "src/commands/status.ts"}
    # thinking is not imported
    assert not any("I need to see how status prints" in str(e.get("content")) for e in events)
    # prompt size = input + cacheRead + cacheWrite of the assistant message's usage
    usages = [
        e["message"]["usage"]
        for e in raw_lines(PI)
        if e.get("type") == "message" and e["message"]["role"] == "assistant"
    ]
    first_usage = usages[0]
    assert t.calls[0].prompt_tokens == (
        first_usage["input"] + first_usage["cacheRead"] + first_usage["cacheWrite"]
    )
    # a failed tool run keeps isError as meta.is_error
    failed = [e for e in events if e.get("meta", {}).get("is_error")]
    assert failed and all(e["type"] == "tool_result" for e in failed)
    assert "Cannot read properties of undefined" in failed[0]["content"]


def test_pi_follows_the_active_branch_and_skips_pi_summaries_and_images() -> None:
    events = load_transcript(PI, "pi").events()
    text = "\n".join(str(e.get("content")) for e in events)
    assert "--pretty to indent" not in text  # the abandoned branch
    assert "Never mind --pretty" in text  # the branch the session went on with
    assert "The user asked for a --pretty flag" not in text  # branch_summary
    assert "Add --json to `tally status`..." not in text  # compaction summary
    assert "iVBORw0KGgo" not in text  # image bytes
    assert "[image omitted: image/png]" in text
    # two parallel edits in one assistant message: two calls, results in order
    both = [e for e in events if e.get("tool_call_id") in ("toolu_01Rs6Gj1ZwTn3LcF8aR5sP7v",)]
    assert [e["type"] for e in both] == ["tool_call", "tool_result"]


def test_pi_linear_file_without_tree_reads_every_entry() -> None:
    text = "\n".join(
        json.dumps(x)
        for x in [
            {"type": "session", "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"},
            {
                "type": "message",
                "timestamp": "2026-01-01T00:00:01Z",
                "message": {"role": "user", "content": "hi"},
            },
            {
                "type": "message",
                "timestamp": "2026-01-01T00:00:02+01:00",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "hello"}],
                    "usage": {"input": 0, "cacheRead": 0, "cacheWrite": 0},
                },
            },
        ]
    )
    t = parse_transcript(text, "pi")
    assert types(t) == ["user_input", "assistant_output"]
    assert t.calls[0].prompt_tokens is None  # all zero: the log has no figure
    assert t.events()[1]["ts"] == "2025-12-31T23:00:02.000Z"  # +01:00 converted to UTC


PI_HEADER = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}'


def pi_text(*messages: dict[str, Any]) -> str:
    lines = [PI_HEADER]
    for i, m in enumerate(messages):
        parent = f"e{i - 1}" if i else None
        lines.append(
            json.dumps(
                {
                    "type": "message",
                    "id": f"e{i}",
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:01Z",
                    "message": m,
                }
            )
        )
    return "\n".join(lines) + "\n"


USER = {"role": "user", "content": "go"}
CALL = {
    "role": "assistant",
    "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}],
}


def assert_bad_input_names_file_and_line(text: str, fmt: str, name: str, needle: str) -> None:
    """Parsing `text` as `fmt` from a file called `name` is BadInputError saying `name:`
    first (then the line) and `needle`."""
    with pytest.raises(BadInputError) as err:
        parse_transcript(text, fmt, name)
    assert str(err.value).startswith(f"{name}:")
    assert needle in str(err.value)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (PI_HEADER + "\n" + '{"type":"message","message":{"role":"user"\n', ":2: not valid JSON"),
        (pi_text(USER, {"role": "robot", "content": "x"}), ":3: unknown message role 'robot'"),
        (
            pi_text(USER, {"role": "toolResult", "toolCallId": "zz", "content": []}),
            ":3: tool result for 'zz', but no earlier tool call has it",
        ),
        (
            pi_text(
                USER,
                CALL,
                {"role": "toolResult", "toolCallId": "c1", "content": []},
                {"role": "toolResult", "toolCallId": "c1", "content": []},
            ),
            ":5: a second tool result for tool call 'c1'",
        ),
        ('[{"type": "session"}]\n', ":1: expected the pi session header"),
        ('{"type":"message","message":{"role":"user","content":"x"}}\n', ":1: expected the pi"),
        (PI_HEADER + "\n" + '["not", "an", "entry"]\n', ":2: an entry must be a JSON object"),
        (
            pi_text(USER, {"role": "assistant", "content": [{"type": "toolCall", "name": "x"}]}),
            ":3: a tool call needs a non-empty string id",
        ),
        (PI_HEADER + "\n", "no messages to import"),
        ("", "no messages to import"),
    ],
)
def test_pi_bad_input_names_file_and_line(text: str, needle: str) -> None:
    assert_bad_input_names_file_and_line(text, "pi", "s.jsonl", needle)


# --- OpenAI ---------------------------------------------------------------------------------


def test_openai_maps_roles_parallel_calls_and_usage() -> None:
    t = load_transcript(OPENAI, "openai")
    doc = json.loads(OPENAI.read_text(encoding="utf-8"))
    events = t.events()
    assert not any(e["type"] == "system_event" for e in events), "leading system prompt skipped"
    assert events[0]["type"] == "user_input"
    assert events[0]["content"] == doc["messages"][1]["content"]
    assistants = [m for m in doc["messages"] if m["role"] == "assistant"]
    assert [c.prompt_tokens for c in t.calls] == [m["usage"]["prompt_tokens"] for m in assistants]
    parallel = next(
        c for c in t.calls if [e["type"] for e in c.outputs] == ["tool_call", "tool_call"]
    )
    assert [e["name"] for e in parallel.outputs] == ["run_python", "run_python"]
    args = json.loads(assistants[3]["tool_calls"][0]["function"]["arguments"])
    assert parallel.outputs[0]["arguments"] == args  # the JSON string, as an object
    # both results come back as the next call's inputs, named after their calls
    after = t.calls[t.calls.index(parallel) + 1]
    assert [e["tool_call_id"] for e in after.inputs] == [
        e["tool_call_id"] for e in parallel.outputs
    ]


def test_openai_array_object_and_jsonl_give_the_same_events() -> None:
    messages = json.loads(OPENAI.read_text(encoding="utf-8"))["messages"]
    as_array = parse_transcript(json.dumps(messages, indent=1), "openai")
    as_jsonl = parse_transcript("\n".join(json.dumps(m) for m in messages) + "\n", "openai")
    as_object = load_transcript(OPENAI, "openai")

    def strip(t: Transcript) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k != "meta"} for e in t.events()]

    assert strip(as_array) == strip(as_jsonl) == strip(as_object)
    # the line of each message is where it starts in the file
    assert as_jsonl.events()[0]["meta"]["source"]["line"] == 2


def test_openai_later_system_message_and_broken_arguments_are_kept() -> None:
    text = "\n".join(
        json.dumps(m)
        for m in [
            {"role": "system", "content": "You are terse."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:x"}},
                ],
            },
            {"role": "system", "content": "The user switched to metric units."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{not json"},
                    }
                ],
            },
        ]
    )
    t = parse_transcript(text, "openai")
    assert types(t) == ["user_input", "system_event", "tool_call"]
    assert t.events()[0]["content"] == "look\n[image omitted: image]"
    assert t.events()[2]["arguments"] == {"raw_arguments": "{not json"}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"role": "user", "content": "a"}\n{"role": "user", "content": \n', ":2: not valid JSON"),
        (
            '[\n {"role": "user", "content": "a"},\n {"role": "function", "name": "f"}\n]',
            ":3: unknown message role 'function'",
        ),
        (
            '{"messages": [\n {"role": "user", "content": "a"},\n'
            ' {"role": "tool", "tool_call_id": "nope", "content": "r"}\n]}',
            ":3: tool result for 'nope', but no earlier tool call has it",
        ),
        ('"just a string"', ":1: expected a JSON message list"),
        ('{\n  "model": "x",\n  "choices": []\n}', ":1: expected a JSON message list"),
        ('{"messages": {"role": "user"}}', ":1: `messages` must be a list"),
        ('[{"role": "user", "content": "a"}, 7]', ":1: a message must be a JSON object"),
    ],
)
def test_openai_bad_input_names_file_and_line(text: str, needle: str) -> None:
    assert_bad_input_names_file_and_line(text, "openai", "chat.json", needle)


# --- mini-swe-agent -------------------------------------------------------------------------


def test_mini_swe_agent_maps_task_actions_observations_and_usage() -> None:
    t = load_transcript(MINI, "mini-swe-agent")
    doc = json.loads(MINI.read_text(encoding="utf-8"))
    events = t.events()
    assert events[0]["type"] == "user_input"
    assert events[0]["content"] == doc["messages"][1]["content"]  # the task; system skipped
    assert events[1]["type"] == "assistant_output"
    assert events[1]["content"] == "THOUGHT: Let me find where parse_duration is defined."
    call, result = events[2], events[3]
    assert call["type"] == "tool_call" and call["name"] == "bash"
    assert call["arguments"] == {"command": 'grep -rn "def parse_duration" --include=*.py .'}
    assert result["type"] == "tool_result" and result["tool_call_id"] == call["tool_call_id"]
    assert result["meta"]["returncode"] == 0
    assistants = [m for m in doc["messages"] if m["role"] == "assistant"]
    assert [c.prompt_tokens for c in t.calls] == [
        m["extra"]["response"]["usage"]["prompt_tokens"] for m in assistants
    ]
    failing = [e for e in events if e.get("meta", {}).get("returncode") == 1]
    assert failing and failing[0]["meta"]["is_error"] is True
    # the reply with two bash blocks ran nothing: no tool call, and the format error that
    # answered it is agent feedback, not a user request
    feedback = [e for e in events if e["type"] == "system_event"]
    assert len(feedback) == 1 and "EXACTLY ONE action" in feedback[0]["content"]
    assert sum(1 for e in events if e["type"] == "user_input") == 1
    # the submission answers the last action, after the last model call
    assert [e["type"] for e in t.trailing] == ["tool_result"]
    assert t.trailing[0]["content"].startswith("diff --git a/durations/parse.py")


def mini_doc(*messages: dict[str, Any]) -> str:
    return json.dumps(
        {"messages": list(messages), "trajectory_format": "mini-swe-agent-1"}, indent=2
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"messages": [\n {"role": "user", "content": "a"},\n', "not valid JSON"),
        (
            mini_doc({"role": "user", "content": "task"}, {"role": "critic", "content": "x"}),
            ":7: unknown message role 'critic'",
        ),
        (
            mini_doc(
                {"role": "user", "content": "task"},
                {"role": "assistant", "content": "THOUGHT: thinking only"},
                {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
            ),
            ":11: an observation (<returncode>) with no action before it",
        ),
        ('[{"role": "user", "content": "task"}]', ":1: expected a mini-swe-agent trajectory"),
        ('{"info": {}, "trajectory": []}', ":1: expected a mini-swe-agent trajectory"),
    ],
)
def test_mini_swe_agent_bad_input_names_file_and_line(text: str, needle: str) -> None:
    assert_bad_input_names_file_and_line(text, "mini-swe-agent", "run.traj.json", needle)


def test_mini_swe_agent_v2_actions_and_exit_message() -> None:
    text = mini_doc(
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "THOUGHT: x\n\n```mswea_bash_command\nls -la\n```",
            "extra": {
                "actions": [{"command": "ls -la"}],
                "timestamp": 1764322800.5,
                "response": {"usage": {"prompt_tokens": 1234}},
            },
        },
        {
            "role": "user",
            "content": "<returncode>0</returncode>\n<output>\na\n</output>",
            "extra": {"returncode": 0, "raw_output": "a\n", "timestamp": 1764322801.0},
        },
        {"role": "exit", "content": "", "extra": {"exit_status": "LimitsExceeded"}},
    )
    t = parse_transcript(text, "mini-swe-agent")
    assert types(t) == [
        "user_input",
        "assistant_output",
        "tool_call",
        "tool_result",
        "system_event",
    ]
    assert t.calls[0].prompt_tokens == 1234
    assert t.events()[2]["arguments"] == {"command": "ls -la"}
    assert t.events()[4]["meta"]["exit_status"] == "LimitsExceeded"
    assert t.events()[0]["ts"] == "2025-11-28T09:40:00.500Z"  # untimed task: first time after
