"""The extractive summarizer, split-turn summaries and the fallback (contract §4, §5, §8)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.config import SummarizerConfig
from core.errors import ConfigError
from core.events import Event
from core.summarizer import (
    SPLIT_TURN_MARKER,
    ExtractiveSummarizer,
    OpenAISummarizer,
    SummarizerError,
    SummaryKind,
    make_summarizer,
    split_turn_summary,
    summarize_with_fallback,
)
from core.tokens import estimate_tokens

EVENTS: list[Event] = [
    {"id": "1", "type": "user_input", "role": "user",
     "content": "Please fix the failing test in src/app/main.py. Don't touch the config file."},
    {"id": "2", "type": "tool_call", "role": "assistant", "name": "read_file",
     "tool_call_id": "c1", "arguments": {"path": "src/app/main.py"}},
    {"id": "3", "type": "tool_result", "role": "tool", "name": "read_file", "tool_call_id": "c1",
     "content": "def main():\n    return load('data/input.csv')\n"},
    {"id": "4", "type": "tool_call", "role": "assistant", "name": "run_tests",
     "tool_call_id": "c2", "arguments": '{"cmd": "pytest -q tests/test_main.py"}'},
    {"id": "5", "type": "tool_result", "role": "tool", "name": "run_tests", "tool_call_id": "c2",
     "content": "Traceback (most recent call last):\n  File \"src/app/main.py\", line 2\n"
                "FileNotFoundError: [Errno 2] No such file or directory: 'data/input.csv'"},
    {"id": "6", "type": "assistant_output", "role": "assistant",
     "content": "The test fails because data/input.csv is missing. "
                "Next I will create it with 3 sample rows. Docs: https://example.com/csv?x=1."},
    {"id": "7", "type": "screen_context", "role": "system",
     "content": "Terminal: 1 failed, 41 passed in 0.52s"},
    {"id": "8", "type": "user_input", "role": "user",
     "content": "好的，请继续。不要修改网络设置。"},
    {"id": "9", "type": "tool_call", "role": "assistant", "name": "write_file",
     "tool_call_id": "c3", "arguments": {"path": "data/input.csv"}},
]  # fmt: skip

EX = ExtractiveSummarizer()


def section(text: str, heading: str) -> list[str]:
    """The lines under a label line up to the next top-level label."""
    lines = text.split("\n")
    start = lines.index(heading) + 1
    out: list[str] = []
    for line in lines[start:]:
        if line and not line.startswith((" ", "-")):
            break
        out.append(line)
    return out


HISTORY_LABELS = [
    "Goal:",
    "Constraints & Preferences:",
    "Progress:",
    "Key Decisions:",
    "Next Steps:",
    "Critical Context:",
]


def labels_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if line and not line.startswith((" ", "-"))]


def entry(text: str, request_prefix: str) -> list[str]:
    """A Progress entry: its `- Request:` line and the indented lines under it."""
    lines = text.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("- ") and request_prefix in ln)
    out = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


def test_sections_present_in_order() -> None:
    text = EX.summarize(EVENTS)
    labels = labels_of(text)
    assert labels[:3] == ["Goal:", "Constraints & Preferences:", "Progress:"]
    assert labels == [label for label in HISTORY_LABELS if label in labels], "canonical order"
    assert "Next Steps:" in labels


def test_one_entry_per_run_grounded_in_the_events() -> None:
    text = EX.summarize(EVENTS)
    assert "- Don't touch the config file." in section(text, "Constraints & Preferences:")
    assert "- 不要修改网络设置。" in section(text, "Constraints & Preferences:")
    first = entry(text, "Request: Please fix the failing test")
    assert first[0] == (
        "- Request: Please fix the failing test in src/app/main.py. Don't touch the config file."
    )
    assert "  read: src/app/main.py" in first
    assert "  ran: pytest -q tests/test_main.py" in first
    assert any(
        line.startswith("  outcome: The test fails because data/input.csv") for line in first
    )
    assert (
        "  error: FileNotFoundError: [Errno 2] No such file or directory: 'data/input.csv'"
    ) in first
    assert "  (screen) Terminal: 1 failed, 41 passed in 0.52s" in first
    second = entry(text, "Request: 好的")
    assert second == ["- Request: 好的，请继续。不要修改网络设置。", "  edited: data/input.csv"]
    steps = section(text, "Next Steps:")
    assert "- Check the result of write_file(path=data/input.csv)" in steps


def test_goal_of_a_multi_run_chunk_is_not_only_the_first_request() -> None:
    text = EX.summarize(EVENTS)
    goal = section(text, "Goal:")
    assert goal[0] == "- 好的，请继续。不要修改网络设置。", "the latest request leads"
    assert not any("Please fix" in line for line in goal)
    assert goal[1] == "- (2 requests in this range, each under Progress)"


def coding_run(n: int, edits: int = 2) -> list[Event]:
    events: list[Event] = [
        {"type": "user_input", "role": "user", "content": f"Task {n}: refactor module_{n} "
         "so that the session loader reads configs lazily; keep the public API."}
    ]  # fmt: skip
    for k in range(edits):
        events.append({"type": "tool_call", "name": "edit", "tool_call_id": f"e{n}-{k}",
                       "arguments": {"path": f"packages/coding-agent/src/core/m{n}/f{k}.ts",
                                     "oldText": "x", "newText": "y"}})  # fmt: skip
        events.append({"type": "tool_result", "name": "edit", "tool_call_id": f"e{n}-{k}",
                       "content": "Successfully replaced text."})  # fmt: skip
    events.append({"type": "tool_call", "name": "bash", "tool_call_id": f"b{n}",
                   "arguments": {"command": f"npm test -- m{n}"}})  # fmt: skip
    events.append({"type": "tool_result", "name": "bash", "tool_call_id": f"b{n}",
                   "content": "PASS 12 tests"})  # fmt: skip
    events.append({"type": "tool_call", "name": "read", "tool_call_id": f"r{n}",
                   "arguments": {"path": f"docs/m{n}.md"}})  # fmt: skip
    events.append({"type": "tool_result", "name": "read", "tool_call_id": f"r{n}",
                   "content": "# notes"})  # fmt: skip
    events.append({"type": "assistant_output", "role": "assistant",
                   "content": f"Done: module_{n} loads lazily."})  # fmt: skip
    return events


def test_edits_first_with_whole_paths_then_commands_then_reads() -> None:
    text = EX.summarize(coding_run(1))
    assert entry(text, "Request: Task 1") == [
        "- Request: Task 1: refactor module_1 so that the session loader reads configs lazily; "
        "keep the public API.",
        "  edited: packages/coding-agent/src/core/m1/f0.ts, "
        "packages/coding-agent/src/core/m1/f1.ts",
        "  ran: npm test -- m1",
        "  read: docs/m1.md",
        "  outcome: Done: module_1 loads lazily.",
    ]


def test_a_file_edited_many_times_is_named_once() -> None:
    events: list[Event] = [{"type": "user_input", "content": "Port the session code."}]
    for k in range(32):
        events.append({"type": "tool_call", "name": "edit", "tool_call_id": f"e{k}",
                       "arguments": {"path": "packages/coding-agent/src/core/agent-session.ts",
                                     "oldText": "a" * 400, "newText": "b" * 400}})  # fmt: skip
        events.append({"type": "tool_result", "name": "edit", "tool_call_id": f"e{k}",
                       "content": "Successfully replaced text in agent-session.ts."})  # fmt: skip
    text = EX.summarize(events, max_tokens=200)
    assert "  edited: packages/coding-agent/src/core/agent-session.ts" in text.split("\n")
    assert text.count("agent-session.ts") == 1


def test_requests_are_shortened_never_dropped_under_pressure() -> None:
    events = [e for n in range(8) for e in coding_run(n, edits=4)]
    full = EX.summarize(events, max_tokens=4000)
    tight = EX.summarize(events, max_tokens=400)
    assert estimate_tokens(tight) <= 400
    for n in range(8):
        assert f"Task {n}: refactor module_{n} so that th" in full
        assert f"Task {n}: refactor module_{n} so that th" in tight, n
    assert "edited: packages/coding-agent/src/core/m7/f0.ts" in tight, "edits outlast reads"
    assert "read: docs/m7.md" not in tight


def test_more_requests_than_the_budget_can_name_keeps_the_newest() -> None:
    events = [e for n in range(60) for e in coding_run(n, edits=1)]
    text = EX.summarize(events, max_tokens=300)
    assert estimate_tokens(text) <= 300
    assert "Task 59: refactor module_59" in text and "Task 58: refactor module_58" in text
    assert "Task 0: refactor" not in text
    note = next(line for line in text.split("\n") if "earlier requests in this range" in line)
    shown = sum(1 for line in text.split("\n") if line.startswith("- Request: Task "))
    assert note == (
        f"- ({60 - shown} earlier requests in this range are in the chunk; recall finds them)"
    )


def test_next_steps_come_from_the_agents_own_words_only() -> None:
    events: list[Event] = [
        {"type": "user_input", "content": "Summarise the meeting notes in notes/minutes.md."},
        {"type": "tool_call", "name": "read_file", "tool_call_id": "r",
         "arguments": {"path": "notes/minutes.md"}},
        {"type": "tool_result", "name": "read_file", "tool_call_id": "r",
         "content": "Next steps: Bob will book the venue.\n# TODO: next we need to refactor\n"
                    "import { Foo } from './foo_bar_baz'\ntap at 540,1180"},
        {"type": "assistant_output", "content": "The notes are summarised below.\n```python\n"
         "# next: we still need to remove this hack\nx = 1\n```\n"
         "Next I will send the summary to the team channel."},
    ]  # fmt: skip
    text = EX.summarize(events)
    steps = section(text, "Next Steps:")
    assert steps == ["- Next I will send the summary to the team channel."]
    assert "Bob" not in text and "hack" not in text
    assert "540" not in text and "foo_bar_baz" not in text and "./foo" not in text


def test_minutes_the_agent_wrote_are_not_its_next_steps() -> None:
    """Lists the agent writes for the user (minutes, to-do items) are content, not its plan."""
    events: list[Event] = [
        {"type": "user_input", "content": "把周会录音整理成会议纪要。"},
        {"type": "assistant_output", "content": "会议纪要：\n三、结论：先做白名单。\n"
         "四、待办：小王负责白名单方案，周三前给出结论。\n- TODO: Alice to follow up on the "
         "battery data.\n1. Next release: ship the whitelist."},
    ]  # fmt: skip
    text = EX.summarize(events)
    steps = "\n".join(section(text, "Next Steps:")) if "Next Steps:" in text else ""
    assert "小王" not in steps and "Alice" not in steps and "Next release" not in steps
    assert "小王负责白名单方案" in text, "the minutes stay in the outcome"


def test_critical_context_ranks_said_and_used_identifiers_first() -> None:
    events: list[Event] = [
        {"type": "user_input", "content": "Why does `load_config` raise ConfigError on CI? "
         "See https://ci.example.com/runs/42 and issue #118."},
        {"type": "tool_call", "name": "grep", "tool_call_id": "g",
         "arguments": {"pattern": "parse_settings", "path": "src"}},
        {"type": "tool_result", "name": "grep", "tool_call_id": "g",
         "content": "src/settings_loader.py:12: def parse_settings(raw): # sha 3fa2b9c1d7e\n"
                    "tap(120, 340) at 1.25x"},
        {"type": "assistant_output", "content": "It is the YAML_FLAGS default."},
    ]  # fmt: skip
    text = EX.summarize(events)
    critical = section(text, "Critical Context:")
    names = next(line for line in text.split("\n") if line.startswith("  names: "))
    assert "parse_settings" in names, "a tool-call argument, named with its run"
    for ident in ("load_config", "ConfigError", "https://ci.example.com/runs/42", "#118",
                  "YAML_FLAGS"):  # fmt: skip
        assert ident in text
    shown = [line for line in critical if line.startswith("- seen in tool output: ")]
    assert shown and "src/settings_loader.py" in shown[0]
    assert text.index(names) < text.index(shown[0])
    assert "3fa2b9c1d7e" not in text and "340" not in text


def test_synthetic_split_turn_event_is_carried_once_flattened() -> None:
    prefix = EX.summarize(coding_run(3), kind="turn_prefix", max_tokens=300)
    meta = {"synthetic": "split_turn_prefix", "chunk_id": "chunk_0001"}
    synthetic: Event = {"type": "system_event", "role": "system", "content": prefix, "meta": meta}
    tail = coding_run(4)[1:5]
    for kind in ("history", "turn_prefix"):
        text = EX.summarize([synthetic, *tail], kind=kind)
        assert "Task 3: refactor module_3" in text
        assert text.count("Original request:") == (1 if kind == "turn_prefix" else 0)
        assert "system_event" not in text and "(system)" not in text
        assert "Early progress:" not in text or kind == "turn_prefix"
        assert "packages/coding-agent/src/core/m3/f0.ts" in text, "carried edits"
        assert "packages/coding-agent/src/core/m4/f0.ts" in text
    history = EX.summarize([synthetic, *tail])
    assert entry(history, "Continued: Task 3")[0].startswith("- Continued: Task 3: refactor")


def test_cjk_only_session_is_summarised() -> None:
    events: list[Event] = [
        {"type": "user_input", "role": "user",
         "content": "帮我检查路由器的网络设置。密码是多少？"},
        {"type": "assistant_output", "role": "assistant",
         "content": "路由器的网络设置正常。下一步需要重启设备！"},
    ]  # fmt: skip
    text = EX.summarize(events)
    assert section(text, "Goal:") == ["- 帮我检查路由器的网络设置。密码是多少？"]
    assert "  outcome: 路由器的网络设置正常。下一步需要重启设备！" in section(text, "Progress:")
    assert section(text, "Next Steps:") == ["- 下一步需要重启设备！"]


def test_first_sentences_split_on_cjk_punctuation() -> None:
    long_cjk = "第一句话说明目标。" + "这是很长的第二句话" * 30 + "。第三句。"
    text = EX.summarize([{"type": "user_input", "role": "user", "content": long_cjk}])
    goal = section(text, "Goal:")[0]
    assert goal.startswith("- 第一句话说明目标。这是很长的第二句话")
    assert "第三句" not in goal and goal.endswith("…")


def test_tool_results_are_trimmed_before_reading() -> None:
    late_path = "deep/hidden/file_after_limit.txt"
    content = "ok\n" + "x" * 5000 + "\n" + late_path
    events: list[Event] = [
        {"type": "tool_call", "name": "cat", "tool_call_id": "t", "arguments": {}},
        {"type": "tool_result", "name": "cat", "tool_call_id": "t", "content": content},
    ]
    text = EX.summarize(events, max_tokens=4000)
    assert late_path not in text
    assert "  tools: cat" in text


def test_unpaired_tool_result_and_error_object() -> None:
    events: list[Event] = [
        {"type": "tool_result", "name": "fetch", "tool_call_id": "old",
         "content": {"error": "HTTP 503 from https://api.example.com/v2"}},
    ]  # fmt: skip
    text = EX.summarize(events)
    assert "  error: HTTP 503 from https://api.example.com/v2" in text
    assert section(text, "Goal:") == ["- (no user request in this range)"]
    assert "- Continued: (begun before this range)" in text
    assert "- Resolve: HTTP 503 from https://api.example.com/v2" in text


def test_goal_from_previous_summary_when_no_request() -> None:
    previous = "[chunk_0001] Goal:\n- Migrate the database to v2\nProgress:"
    events: list[Event] = [{"type": "assistant_output", "content": "Tables copied."}]
    text = EX.summarize(events, previous_summary=previous)
    assert section(text, "Goal:") == ["- Migrate the database to v2"]


def test_control_characters_stripped() -> None:
    events: list[Event] = [
        {"type": "user_input", "role": "user",
         "content": "Run\x1b[31m the\x00 job\u202e now\x07.\ttab kept"},
        {"type": "tool_result", "name": "sh", "content": "Error: bad\x08 thing\r\nline2"},
    ]  # fmt: skip
    text = EX.summarize(events)
    assert not any(
        (ord(ch) < 32 and ch != "\n") or 0x7F <= ord(ch) <= 0x9F or ch == "\u202e" for ch in text
    )
    assert "Run[31m the job now." in text
    assert "  error: Error: bad thing" in text


def test_focus_ranks_lines_and_is_never_written() -> None:
    events: list[Event] = [{"type": "user_input", "role": "user", "content": "Clean up the repo."}]
    for i in range(40):
        events.append({"type": "tool_call", "name": "shell", "tool_call_id": f"t{i}",
                       "arguments": {"cmd": f"ls dir{i}"}})  # fmt: skip
        events.append({"type": "tool_result", "name": "shell", "tool_call_id": f"t{i}",
                       "content": f"listing {i}"})  # fmt: skip
    events[41]["arguments"] = {"cmd": "rm database.sqlite"}
    plain = EX.summarize(events, max_tokens=60)
    focused = EX.summarize(events, max_tokens=60, focus="what happened to the database")
    assert "database.sqlite" not in plain
    assert "rm database.sqlite" in focused
    assert "Focus" not in focused and "what happened" not in focused
    assert estimate_tokens(focused) <= 60
    for kind in ("history", "turn_prefix"):
        text = EX.summarize(events, kind=kind, focus="keep file paths")
        assert "keep file paths" not in text and "Focus:" not in text


def test_turn_prefix_kind() -> None:
    prefix = EVENTS[:6]
    text = EX.summarize(prefix, kind="turn_prefix")
    assert labels_of(text) == [
        "Original request:",
        "Early progress:",
        "Context for the retained suffix:",
    ]
    assert section(text, "Original request:") == [
        "- Please fix the failing test in src/app/main.py. Don't touch the config file."
    ]
    progress = section(text, "Early progress:")
    assert "- read: src/app/main.py" in progress
    assert "- ran: pytest -q tests/test_main.py" in progress
    assert any(line.startswith("- outcome: The test fails because") for line in progress)
    suffix = section(text, "Context for the retained suffix:")
    assert suffix[0] == (
        "- Last tool call: run_tests(cmd=pytest -q tests/test_main.py) → error: "
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/input.csv'"
    )
    assert not any(line.startswith("- error:") for line in suffix), "said once"
    pending = EX.summarize([*EVENTS[:2]], kind="turn_prefix")
    assert "- Awaiting the result of read_file(path=src/app/main.py)" in pending


def test_turn_prefix_without_its_request_says_where_it_is() -> None:
    text = EX.summarize(EVENTS[1:3], kind="turn_prefix")
    assert section(text, "Original request:") == [
        "- (the first request, kept verbatim at the top of the hot window)"
    ]


def test_bounded_and_truncated_with_ellipsis() -> None:
    text = EX.summarize(EVENTS, max_tokens=40)
    assert estimate_tokens(text) <= 40
    assert text.startswith("Goal:\n- 好的，请继续。")
    assert EX.summarize(EVENTS, max_tokens=5).endswith("…")
    assert estimate_tokens(EX.summarize(EVENTS, max_tokens=5)) <= 5
    assert EX.summarize(EVENTS, max_tokens=0) == ""


def test_never_cuts_inside_a_grapheme() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    events: list[Event] = [{"type": "user_input", "content": ("e\u0301" + family) * 200}]
    for budget in range(3, 60):
        text = EX.summarize(events, max_tokens=budget)
        assert estimate_tokens(text) <= budget
        for line in text.split("\n"):
            if family[0] not in line:
                continue
            body = line.removesuffix("…")
            assert not body.endswith("\u200d") and not body.endswith("e")
            assert not body.endswith(("\U0001f468", "\U0001f469"))


EVENT_TYPES = [
    "user_input", "assistant_output", "role_output", "tool_call", "tool_result",
    "system_event", "screen_context", "weird", "",
]  # fmt: skip
EVENT_TYPES = [
    "user_input", "assistant_output", "role_output", "tool_call", "tool_result",
    "system_event", "screen_context", "weird", "",
]  # fmt: skip
_event = st.fixed_dictionaries(
    {
        "type": st.sampled_from(EVENT_TYPES),
        "content": st.one_of(
            st.none(),
            st.text(max_size=600),
            st.dictionaries(st.text(max_size=8), st.text(max_size=40), max_size=4),
        ),
    },
    optional={
        "role": st.sampled_from(["user", "assistant", "tool", "system", "x"]),
        "name": st.text(max_size=20),
        "tool_call_id": st.sampled_from(["a", "b", "c"]),
        "arguments": st.one_of(
            st.text(max_size=80), st.dictionaries(st.text(max_size=5), st.integers())
        ),
        "meta": st.dictionaries(st.sampled_from(["error", "x"]), st.booleans()),
    },
)


@settings(max_examples=150, deadline=None)
@given(
    events=st.lists(_event, max_size=25),
    max_tokens=st.integers(min_value=0, max_value=400),
    kind=st.sampled_from(["history", "turn_prefix"]),
    focus=st.one_of(st.none(), st.text(max_size=40)),
)
def test_bounded_never_raises_deterministic(
    events: list[Event], max_tokens: int, kind: SummaryKind, focus: str | None
) -> None:
    first = EX.summarize(events, kind=kind, focus=focus, max_tokens=max_tokens)
    assert estimate_tokens(first) <= max_tokens
    assert first == EX.summarize(events, kind=kind, focus=focus, max_tokens=max_tokens)
    first.encode("utf-8")  # no lone surrogates survive


def test_split_turn_summary_format() -> None:
    assert SPLIT_TURN_MARKER == "Turn Context (split turn):"
    assert split_turn_summary("H", "P") == "H\n\n---\n\nTurn Context (split turn):\nP"
    assert split_turn_summary("", "P") == "Turn Context (split turn):\nP"
    assert split_turn_summary(" \n", "P") == "Turn Context (split turn):\nP"


class _Broken:
    name = "broken"

    def summarize(self, events: Sequence[Event], **kw: object) -> str:
        raise SummarizerError("openai summarizer: HTTP 500 from http://127.0.0.1:1/x")


class _Fine:
    name = "fine"

    def summarize(self, events: Sequence[Event], **kw: object) -> str:
        return f"{len(events)} events, focus={kw.get('focus')}"


def test_summarize_with_fallback() -> None:
    seen: list[Exception] = []
    text, backend = summarize_with_fallback(
        _Broken(), EVENTS, on_error=seen.append, max_tokens=300, focus="tests"
    )
    assert backend == "extractive-fallback"
    assert text == EX.summarize(EVENTS, max_tokens=300, focus="tests")
    assert isinstance(seen[0], SummarizerError)
    assert summarize_with_fallback(_Fine(), EVENTS, focus="f") == ("9 events, focus=f", "fine")


def test_make_summarizer() -> None:
    assert isinstance(make_summarizer(SummarizerConfig()), ExtractiveSummarizer)
    openai = make_summarizer(
        SummarizerConfig(
            backend="openai",
            base_url="http://127.0.0.1:8080/v1/",
            model="m",
            api_key_env="K",
            timeout_seconds=3,
        )
    )
    assert isinstance(openai, OpenAISummarizer)
    assert openai.url == "http://127.0.0.1:8080/v1/chat/completions"
    assert openai.timeout_seconds == 3.0 and openai.name == "openai"


def test_make_summarizer_refuses_incomplete_openai_config() -> None:
    class Cfg:
        backend = "openai"
        base_url = None
        model = "m"
        api_key_env = None
        timeout_seconds = 1.0
        max_summary_tokens = 100

    with pytest.raises(ConfigError):
        make_summarizer(Cfg())
