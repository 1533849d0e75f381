"""Claude Code and Codex logs, format detection, reused OpenAI tool call ids and the source
agent's own compactions (issue 23). The fixtures in tests/data/transcripts/ were written by
the team to follow each agent's public format closely (no copied logs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.errors import BadInputError
from core.events import validate_event
from core.transcripts import stream as import_stream
from core.transcripts.detect import detect_format, load_any, parse_any
from core.transcripts.importers import load_transcript, parse_transcript
from core.transcripts.replay import replay
from core.transcripts.transcript import Transcript
from tests.helpers.cli import (
    REPO,
    SMALL_CONFIG,
    config_from_yaml,
    json_out,
    last_error_line,
    run_cli,
)
from tests.helpers.paths import TRANSCRIPTS

DATA = TRANSCRIPTS
CLAUDE = DATA / "claude_code_session.jsonl"
CODEX = DATA / "codex_rollout.jsonl"
ALL = [
    (DATA / "pi_session.jsonl", "pi"),
    (DATA / "openai_chat.json", "openai"),
    (DATA / "mini_swe_agent.traj.json", "mini-swe-agent"),
    (CLAUDE, "claude-code"),
    (CODEX, "codex"),
]


def brief(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], str(e["content"] or e.get("tool_call_id"))[:24]) for e in events]


def markers(t: Transcript) -> list[dict[str, Any]]:
    return [e["meta"]["source_compaction"] for e in t.events() if "source_compaction" in e["meta"]]


def lines_of(text: str) -> str:
    return "\n".join(json.dumps(json.loads(x)) for x in text.strip().splitlines()) + "\n"


# --- Claude Code ------------------------------------------------------------------------------


def test_claude_code_one_call_per_message_id_with_the_whole_prompt_as_its_size() -> None:
    t = load_transcript(CLAUDE, "claude-code")
    # input + cache creation + cache read of each message (every line of it repeats usage)
    assert [c.prompt_tokens for c in t.calls] == [16354, 16666, 17086, 6308, 6368]
    first = t.calls[0]
    # thinking is metadata on the call's first output; both tool_use blocks are this call's
    assert [e["type"] for e in first.outputs] == ["assistant_output", "tool_call", "tool_call"]
    assert first.outputs[0]["meta"]["thinking"].startswith("The user wants")
    assert all(e["content"] != "" for e in t.events() if e["type"] == "assistant_output")


def test_claude_code_results_written_between_blocks_come_after_the_whole_message() -> None:
    t = load_transcript(CLAUDE, "claude-code")
    order = [(e["type"], e.get("tool_call_id")) for e in t.events() if "tool" in e["type"]]
    assert order[:4] == [
        ("tool_call", "toolu_01"),
        ("tool_call", "toolu_02"),
        ("tool_result", "toolu_01"),
        ("tool_result", "toolu_02"),
    ]
    assert t.calls[1].inputs[0]["tool_call_id"] == "toolu_01"
    errors = [e for e in t.events() if e["meta"].get("is_error")]
    assert [e["tool_call_id"] for e in errors] == ["toolu_03"]


def test_claude_code_typed_lines_are_user_input_and_its_own_lines_system_events() -> None:
    t = load_transcript(CLAUDE, "claude-code")
    users = [e for e in t.events() if e["type"] == "user_input"]
    assert [e["content"][:20] for e in users] == [
        "<command-message>ini",  # the slash command the person typed
        "The date parser test",
        "also check 1900-02-2",  # typed while the agent worked, delivered mid-turn
        "<command-name>/compa",
        "Run the tests again",
    ]
    assert users[0]["meta"]["kind"] == "slash_command"
    assert users[2]["meta"]["queued"] == "mid_turn"
    # delivered with the tool results of the call before, as Claude Code sends it
    assert [e["type"] for e in t.calls[2].inputs] == ["tool_result", "user_input"]
    systems = [e["content"][:22] for e in t.events() if e["type"] == "system_event"]
    assert systems[0].startswith("Please analyze")  # isMeta: the expanded /init prompt
    assert "[Request interrupted b" in systems
    assert any(s.startswith("<local-command-stdout>") for s in systems)
    assert t.trailing[-1]["content"] == "API Error: 529 overloaded"  # synthetic: no call
    assert all("subagent" not in str(e["content"]) for e in t.events())  # isSidechain


def test_claude_code_compaction_is_a_marker_with_its_summary_and_sizes() -> None:
    t = load_transcript(CLAUDE, "claude-code")
    (info,) = markers(t)
    assert info["agent"] == "claude-code"
    assert info["trigger"] == "manual" and info["tokens_before"] == 17200
    assert info["summary"].startswith("This session is being continued")
    assert info["summary_tokens"] > 10
    marker = next(e for e in t.events() if "source_compaction" in e["meta"])
    assert marker["type"] == "system_event"
    assert len(marker["content"]) < 200, "the summary is metadata, not prompt text"
    assert "This session is being continued" not in json.dumps([e["content"] for e in t.events()])


# --- Codex ------------------------------------------------------------------------------------


def test_codex_token_counts_give_each_call_its_prompt_and_copies_are_skipped() -> None:
    t = load_transcript(CODEX, "codex")
    assert [c.prompt_tokens for c in t.calls] == [9000, 9250, 9500, 9700, 3100, 3300]
    assert [e["type"] for e in t.calls[0].inputs] == ["system_event"] * 3 + ["user_input"]
    assert [e["meta"]["kind"] for e in t.calls[0].inputs[:3]] == [
        "codex_developer",
        "codex_user",
        "codex_user",
    ]
    # the event_msg copies (user_message, agent_message, agent_reasoning) are not doubled
    texts = [e["content"] for e in t.events() if e["type"] in ("user_input", "assistant_output")]
    assert len(texts) == len(set(texts)) == 4
    assert t.calls[0].outputs[0]["meta"]["reasoning_summary"] == "**Finding the CLI entry point**"


def test_codex_tool_calls_and_apply_patch_pair_with_their_outputs() -> None:
    t = load_transcript(CODEX, "codex")
    calls = {e["tool_call_id"]: e for e in t.events() if e["type"] == "tool_call"}
    results = {e["tool_call_id"]: e for e in t.events() if e["type"] == "tool_result"}
    assert calls.keys() == results.keys() == {"call_A1", "call_A2", "call_A3", "call_B1"}
    assert calls["call_A1"]["arguments"]["command"] == ["bash", "-lc", "rg -n argparse src"]
    assert calls["call_A2"]["name"] == "apply_patch"
    assert calls["call_A2"]["arguments"]["input"].startswith("*** Begin Patch")
    assert results["call_A3"]["meta"]["exit_code"] == 1 and results["call_A3"]["meta"]["is_error"]
    assert results["call_A2"]["name"] == "apply_patch"
    (info,) = markers(t)
    assert info["agent"] == "codex" and info["summary"].startswith("Summary: added --version")


def test_source_compaction_makes_the_replay_stop_trusting_the_raw_figure(tmp_path: Path) -> None:
    """After the agent compacted, its figures measure its own smaller context: the replay
    records ours (fixed + ratio x our estimate) from then on, not the provider's number."""
    from core.manager import MemoryManager

    config = config_from_yaml(tmp_path, **SMALL_CONFIG)
    mm = MemoryManager(tmp_path / "m", config)
    try:
        stats = replay(load_transcript(CODEX, "codex"), mm)
    finally:
        mm.close()
    assert stats.calls == 6 and stats.prompt_sizes_recorded == 6
    assert stats.events_appended == len(load_transcript(CODEX, "codex").events())


# --- pi compactions -----------------------------------------------------------------------------


def test_pi_compaction_entries_become_markers() -> None:
    text = lines_of(
        """
        {"type":"session","version":3,"id":"s1","timestamp":"2026-11-30T08:00:00.000Z","cwd":"/x"}
        {"type":"message","id":"e1","parentId":null,"timestamp":"2026-11-30T08:00:01.000Z","message":{"role":"user","content":"go"}}
        {"type":"compaction","id":"e2","parentId":"e1","summary":"Goal: go","tokensBefore":15000}
        {"type":"message","id":"e3","parentId":"e2","timestamp":"2026-11-30T08:00:03.000Z","message":{"role":"user","content":"again"}}
        """
    )
    t = parse_transcript(text, "pi", "p.jsonl")
    (info,) = markers(t)
    assert info == {
        "agent": "pi",
        "summary": "Goal: go",
        "summary_tokens": 2,
        "tokens_before": 15000,
    }


# --- OpenAI: a reused tool call id ---------------------------------------------------------------


def _openai(*messages: dict[str, Any]) -> str:
    return json.dumps(list(messages))


def _call(cid: str, name: str = "search") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}
        ],
    }


def test_openai_reused_id_after_its_result_pairs_in_order() -> None:
    text = _openai(
        {"role": "user", "content": "find it"},
        _call("call_0"),
        {"role": "tool", "tool_call_id": "call_0", "content": "first"},
        _call("call_0", "lookup"),
        {"role": "tool", "tool_call_id": "call_0", "content": "second"},
    )
    t = parse_transcript(text, "openai", "o.json")
    pairs = [
        (e["type"], e["tool_call_id"], e.get("name")) for e in t.events() if "tool" in e["type"]
    ]
    assert pairs == [
        ("tool_call", "call_0", "search"),
        ("tool_result", "call_0", "search"),
        ("tool_call", "call_0#2", "lookup"),
        ("tool_result", "call_0#2", "lookup"),
    ]
    assert t.calls[1].outputs[0]["meta"]["source_tool_call_id"] == "call_0"
    for event in t.events():
        validate_event(event)


def test_openai_id_reused_before_its_result_is_still_refused() -> None:
    text = _openai({"role": "user", "content": "x"}, _call("c"), _call("c"))
    with pytest.raises(BadInputError, match=r"o.json:1: tool call id 'c' is used again before"):
        parse_transcript(text, "openai", "o.json")


# --- detection and a wrong --format ---------------------------------------------------------------


@pytest.mark.parametrize(("path", "fmt"), ALL, ids=[f for _, f in ALL])
def test_every_sample_is_detected(path: Path, fmt: str) -> None:
    assert detect_format(path.read_text(encoding="utf-8")) == fmt
    transcript, detected = load_any(path, None)
    assert detected and transcript.format == fmt


@pytest.mark.parametrize(
    ("path", "wrong"),
    [(DATA / "openai_chat.json", "pi"), (CODEX, "claude-code"), (CLAUDE, "codex")],
)
def test_a_wrong_format_names_the_format_the_file_looks_like(path: Path, wrong: str) -> None:
    right = detect_format(path.read_text(encoding="utf-8"))
    with pytest.raises(BadInputError, match=f"looks like {right}, not {wrong}"):
        load_any(path, wrong)


def test_text_in_no_known_format_asks_for_format() -> None:
    with pytest.raises(BadInputError, match="cannot tell the transcript's format"):
        parse_any("hello\n", None, "x.txt")


# --- bad input ------------------------------------------------------------------------------------


def test_a_torn_line_names_file_and_line() -> None:
    text = CLAUDE.read_text(encoding="utf-8")
    torn = "\n".join(text.splitlines()[:5]) + '\n{"type":"user","message":{"role":"us\n'
    with pytest.raises(BadInputError, match=r"^c.jsonl:6: not valid JSON .*torn"):
        parse_transcript(torn, "claude-code", "c.jsonl")


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_a_line_that_is_not_an_object_names_file_and_line(fmt: str) -> None:
    with pytest.raises(BadInputError, match=r"^f:2: a .* line must be a JSON object"):
        parse_transcript('{"type":"x","payload":{}}\n[1, 2]\n', fmt, "f")


def test_a_huge_line_is_refused_with_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(import_stream, "MAX_LINE_BYTES", 1000)
    big = json.dumps(
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": "x" * 2000},
        }
    )
    text = CODEX.read_text(encoding="utf-8") + big + "\n"
    with pytest.raises(
        BadInputError, match=rf"^r:{text.count(chr(10))}: a line of 2,\d+ characters"
    ):
        parse_transcript(text, "codex", "r")


def test_unknown_line_kinds_are_skipped_with_a_warning_naming_the_first_line() -> None:
    text = CODEX.read_text(encoding="utf-8").splitlines()
    text.insert(3, json.dumps({"type": "world_of_tomorrow", "payload": {}}))
    text.insert(5, json.dumps({"type": "world_of_tomorrow", "payload": {}}))
    text.insert(7, json.dumps({"type": "response_item", "payload": {"type": "hologram"}}))
    t = parse_transcript("\n".join(text) + "\n", "codex", "r.jsonl")
    assert t.warnings == [
        "r.jsonl:4: 2 lines of unknown kind 'world_of_tomorrow' skipped",
        "r.jsonl:8: 1 line of unknown kind 'response_item hologram' skipped",
    ]


def test_cli_writes_nothing_for_a_file_that_cannot_be_read(tmp_path: Path) -> None:
    bad = tmp_path / "torn.jsonl"
    bad.write_text(CLAUDE.read_text(encoding="utf-8") + '{"type":"assistant","mess', "utf-8")
    root = tmp_path / "memory"
    proc = run_cli(["--memory-dir", root, "import", bad], cwd=REPO)
    assert proc.returncode == 2
    assert last_error_line(proc).startswith(f"error: {bad}:")
    assert "not valid JSON" in proc.stderr
    assert not root.exists()


def test_cli_import_detects_the_format_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    proc = run_cli(["--memory-dir", root, "import", CODEX, "--replay", "--json"], cwd=REPO)
    out = json_out(proc)
    assert out["format"] == "codex" and out["calls"] == 6
    assert "note: format codex (detected" in proc.stderr
    wrong = run_cli(["--memory-dir", root, "import", "--format", "pi", CLAUDE], cwd=REPO)
    assert wrong.returncode == 2
    assert "looks like claude-code, not pi" in last_error_line(wrong)


# --- reasoning the provider is sent again ------------------------------------------------


def _reasoning_trajectory(calls: int, words: int) -> dict[str, Any]:
    """A mini-swe-agent run of a reasoning model: no text beside the action, the reasoning in
    `reasoning_content`, and provider figures that count the reasoning sent back each call
    (900 fixed + 1.2 x the estimate of everything so far, like a real tokenizer)."""
    from core.tokens import estimate_event_tokens

    task = {"role": "user", "content": "Fix the bug in parse_date."}
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful."}, task]
    context = estimate_event_tokens({"content": task["content"]})
    for i in range(calls):
        reasoning = " ".join(f"step{i}-thought{j}" for j in range(words))
        action = f"```bash\ngrep -n parse_date src/file{i}.py\n```"
        usage = {"prompt_tokens": 900 + round(1.2 * context)}
        messages.append(
            {
                "role": "assistant",
                "content": action,
                "reasoning_content": reasoning,
                "extra": {"response": {"usage": usage}},
            }
        )
        observation = f"<returncode>0</returncode>\n<output>\nsrc/file{i}.py:{i}: def x\n</output>"
        messages.append({"role": "user", "content": observation})
        for text, name in ((reasoning, None), ("", "bash"), (observation, None)):
            context += estimate_event_tokens(
                {
                    "content": text,
                    **({"name": name, "arguments": {"command": action}} if name else {}),
                }
            )
    return {"info": {"exit_status": "Submitted"}, "messages": messages}


def _replay_stats(doc: dict[str, Any], tmp: Path) -> Any:
    from core.manager import MemoryManager

    section = {
        "context_window": 16000,
        "reserve_tokens": 2000,
        "keep_recent_tokens": 3000,
        "count_compress_after_events": 100000,
    }
    config = config_from_yaml(tmp, **section)
    mm = MemoryManager(tmp / "m", config)
    try:
        return replay(parse_transcript(json.dumps(doc), "mini-swe-agent", "t.json"), mm)
    finally:
        mm.close()


def test_reasoning_content_is_kept_so_a_replay_does_not_pass_storm(tmp_path: Path) -> None:
    doc = _reasoning_trajectory(calls=48, words=200)
    t = parse_transcript(json.dumps(doc), "mini-swe-agent", "t.json")
    first = t.calls[0].outputs
    assert [e["type"] for e in first] == ["assistant_output", "tool_call"]
    assert first[0]["meta"]["reasoning"] is True
    assert first[0]["content"].startswith("step0-thought0 ")
    stats = _replay_stats(doc, tmp_path / "a")
    # 48 calls of ~1,030 estimated tokens (~49k): a pass fires at ~10.9k estimated (14k
    # provider tokens) and keeps ~3k plus the summary, so 6 or 7 passes are what the log
    # needs; a storm is a pass at (nearly) every call.
    assert 5 <= stats.compactions <= 8, stats
    assert stats.provider_ratio == pytest.approx(1.2, abs=0.05)
    # Without the reasoning the log's figures look 4x (clamped) our estimate: the cause.
    for message in doc["messages"]:
        message.pop("reasoning_content", None)
    assert _replay_stats(doc, tmp_path / "b").provider_ratio == 4.0


def test_openai_reasoning_content_is_an_output_of_its_call() -> None:
    text = _openai(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "reasoning_content": "greet back"},
    )
    (call,) = parse_transcript(text, "openai", "o.json").calls
    assert [(e["content"], e["meta"].get("reasoning")) for e in call.outputs] == [
        ("greet back", True),
        ("hello", None),
    ]


def test_codex_first_rollout_format_without_the_envelope() -> None:
    """Codex wrote bare items (no `type`/`payload` envelope) in its first months."""
    lines = [
        {"id": "5973b6c0-94b8", "timestamp": "2025-04-20T10:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["ls"]}',
            "call_id": "c",
        },
        {"record_type": "state"},
        {"type": "function_call_output", "call_id": "c", "output": "a.py\n"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    assert detect_format(text) == "codex"
    t = parse_transcript(text, "codex", "old.jsonl")
    assert [e["type"] for e in t.events()] == [
        "user_input",
        "tool_call",
        "tool_result",
        "assistant_output",
    ]
    assert len(t.calls) == 2 and t.warnings == []


def test_a_result_whose_call_is_not_in_the_log_is_skipped_with_a_warning() -> None:
    """A resumed or forked session's file can open with results of calls it does not hold."""
    payload: dict[str, Any] = {"type": "function_call_output", "call_id": "call_old"}
    orphan = {"type": "response_item", "payload": {**payload, "output": "x"}}
    text = json.dumps(orphan) + "\n" + CODEX.read_text(encoding="utf-8")
    t = parse_transcript(text, "codex", "r.jsonl")
    assert t.event_count == load_transcript(CODEX, "codex").event_count
    assert t.warnings == [
        "r.jsonl:1: 1 line of unknown kind 'tool result with no call before it' skipped"
    ]
    second = CODEX.read_text(encoding="utf-8") + json.dumps(
        {"type": "response_item", "payload": {**payload, "output": "x", "call_id": "call_B1"}}
    )
    with pytest.raises(BadInputError, match="a second tool result for tool call 'call_B1'"):
        parse_transcript(second, "codex", "r.jsonl")


def test_a_prompt_size_the_store_cannot_record_names_its_line() -> None:
    lines = CODEX.read_text(encoding="utf-8").splitlines()
    big = json.loads(lines[11])  # the first token_count with info
    assert big["payload"]["type"] == "token_count"
    big["payload"]["info"]["last_token_usage"]["input_tokens"] = 10**13
    lines[11] = json.dumps(big)
    with pytest.raises(BadInputError, match=r"^r:12: a provider prompt size of 10+ is over"):
        parse_transcript("\n".join(lines) + "\n", "codex", "r")
