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


def test_sections_present_in_order() -> None:
    text = EX.summarize(EVENTS)
    labels = [line for line in text.split("\n") if line and not line.startswith((" ", "-"))]
    assert labels == [
        "Goal:",
        "Constraints & Preferences:",
        "Progress:",
        "Key Decisions:",
        "Next Steps:",
        "Critical Context:",
    ]
    assert "  Done:" in text and "  In progress:" in text


def test_grounded_in_the_events() -> None:
    text = EX.summarize(EVENTS)
    goal = section(text, "Goal:")
    assert goal == [
        "- Please fix the failing test in src/app/main.py. Don't touch the config file."
    ]
    assert "- Don't touch the config file." in section(text, "Constraints & Preferences:")
    assert "- 不要修改网络设置。" in section(text, "Constraints & Preferences:")
    progress = section(text, "Progress:")
    assert "  - read_file(path=src/app/main.py) → def main(): (+1 lines)" in progress
    assert (
        "  - run_tests(cmd=pytest -q tests/test_main.py) → error: FileNotFoundError: "
        "[Errno 2] No such file or directory: 'data/input.csv'"
    ) in progress
    assert "  - write_file(path=data/input.csv) → no result yet" in progress
    assert "  - User asked: 好的，请继续。不要修改网络设置。" in progress
    assert any(line.startswith("  - (screen) Terminal") for line in progress)
    decisions = section(text, "Key Decisions:")
    assert decisions[0].startswith("- The test fails because data/input.csv is missing.")
    critical = section(text, "Critical Context:")
    for item in (
        "- error: FileNotFoundError: [Errno 2] No such file or directory: 'data/input.csv'",
        "- path: src/app/main.py",
        "- path: data/input.csv",
        "- url: https://example.com/csv?x=1",
    ):
        assert item in critical
    numbers = next(line for line in critical if line.startswith("- numbers: "))
    assert "41" in numbers and "0.52s" in numbers
    steps = section(text, "Next Steps:")
    assert "- Check the result of write_file(path=data/input.csv)" in steps
    assert "- Answer the latest request: 好的，请继续。不要修改网络设置。" in steps


def test_cjk_only_session_is_summarised() -> None:
    events: list[Event] = [
        {"type": "user_input", "role": "user",
         "content": "帮我检查路由器的网络设置。密码是多少？"},
        {"type": "assistant_output", "role": "assistant",
         "content": "路由器的网络设置正常。下一步需要重启设备！"},
    ]  # fmt: skip
    text = EX.summarize(events)
    assert section(text, "Goal:") == ["- 帮我检查路由器的网络设置。密码是多少？"]
    assert "- 路由器的网络设置正常。下一步需要重启设备！" in section(text, "Key Decisions:")


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
    assert "cat() → ok (+1 lines)" in text


def test_unpaired_tool_result_and_error_object() -> None:
    events: list[Event] = [
        {"type": "tool_result", "name": "fetch", "tool_call_id": "old",
         "content": {"error": "HTTP 503 from https://api.example.com/v2"}},
    ]  # fmt: skip
    text = EX.summarize(events)
    assert "- fetch → error: HTTP 503 from https://api.example.com/v2" in text
    assert section(text, "Goal:") == ["- (no user request in this range)"]
    assert "- Resolve the fetch failure: HTTP 503 from https://api.example.com/v2" in text


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
    assert "sh → error: Error: bad thing" in text


def test_focus_is_visible_and_kept_under_pressure() -> None:
    events: list[Event] = [{"type": "user_input", "role": "user", "content": "Clean up the repo."}]
    for i in range(40):
        events.append({"type": "tool_call", "name": "shell", "tool_call_id": f"t{i}",
                       "arguments": {"cmd": f"ls dir{i}"}})  # fmt: skip
        events.append({"type": "tool_result", "name": "shell", "tool_call_id": f"t{i}",
                       "content": f"listing {i}"})  # fmt: skip
    events[41]["arguments"] = {"cmd": "rm database.sqlite"}
    plain = EX.summarize(events, max_tokens=150)
    focused = EX.summarize(events, max_tokens=150, focus="what happened to the database")
    assert "database.sqlite" not in plain
    assert focused.startswith("Focus: what happened to the database\n")
    assert "shell(cmd=rm database.sqlite) → listing 20" in focused
    assert estimate_tokens(focused) <= 150


def test_turn_prefix_kind() -> None:
    prefix = EVENTS[:6]
    text = EX.summarize(prefix, kind="turn_prefix")
    labels = [line for line in text.split("\n") if line and not line.startswith((" ", "-"))]
    assert labels == ["Original request:", "Early progress:", "Context for the retained suffix:"]
    assert section(text, "Original request:") == [
        "- Please fix the failing test in src/app/main.py. Don't touch the config file."
    ]
    assert "- read_file(path=src/app/main.py) → def main(): (+1 lines)" in text
    suffix = section(text, "Context for the retained suffix:")
    assert suffix[0].startswith("- Last assistant message: The test fails because")
    assert "- path: data/input.csv" in suffix
    pending = EX.summarize([*EVENTS[:2]], kind="turn_prefix")
    assert "- Awaiting the result of read_file(path=src/app/main.py)" in pending


def test_bounded_and_truncated_with_ellipsis() -> None:
    text = EX.summarize(EVENTS, max_tokens=40)
    assert estimate_tokens(text) <= 40
    assert text.startswith("Goal:\n- Please fix")
    assert EX.summarize(EVENTS, max_tokens=5).endswith("…")
    assert estimate_tokens(EX.summarize(EVENTS, max_tokens=5)) <= 5
    assert EX.summarize(EVENTS, max_tokens=0) == ""


def test_never_cuts_inside_a_grapheme() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    events: list[Event] = [{"type": "user_input", "content": ("e\u0301" + family) * 200}]
    for budget in range(3, 60):
        text = EX.summarize(events, max_tokens=budget)
        assert estimate_tokens(text) <= budget
        body = text.removesuffix("…")
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
