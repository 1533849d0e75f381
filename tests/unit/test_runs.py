"""core.compaction.runs: runs, what the agent did in each, identifiers, earlier summaries read
back."""

from __future__ import annotations

import pytest

from core.compaction.runs import (
    classify_tool,
    extract_identifiers,
    flatten_summary,
    is_summary_event,
    ranked_identifiers,
    said_and_used_identifiers,
    split_runs,
)
from core.events import Event
from core.summarizer import ExtractiveSummarizer


def call(cid: str, name: str, args: object) -> Event:
    return {"type": "tool_call", "role": "assistant", "name": name, "tool_call_id": cid,
            "arguments": args}  # fmt: skip


def result(cid: str, content: object, **extra: object) -> Event:
    return {"type": "tool_result", "role": "tool", "tool_call_id": cid, "content": content,
            **extra}  # fmt: skip


SESSION: list[Event] = [
    call("c0", "bash", {"command": "git status"}),
    result("c0", "clean"),
    {"type": "user_input", "role": "user", "content": "Fix the\nlogin bug in auth/session.py."},
    call("c1", "read_file", {"path": "auth/session.py"}),
    result("c1", "def login(): ..."),
    call("c2", "edit", '{"file_path": "auth/session.py", "old": "a", "new": "b"}'),
    result("c2", "ok"),
    call("c3", "bash", {"command": "pytest -q tests/test_auth.py"}),
    result("c3", "FAILED tests/test_auth.py::test_login - AssertionError: 401 != 200"),
    {"type": "assistant_output", "role": "assistant", "content": "The test still fails."},
    {"type": "chat", "role": "user", "content": "Then write notes/todo.md and stop."},
    call("c4", "write", {"path": "notes/todo.md", "content": "x"}),
    result("c4", "written"),
    call("c5", "bash", {"command": "ls notes"}),
]


def test_runs_split_at_each_request_and_say_what_was_done() -> None:
    runs = split_runs(SESSION)
    assert [r.request for r in runs] == [
        "",
        "Fix the login bug in auth/session.py.",
        "Then write notes/todo.md and stop.",
    ]
    first, second, third = runs
    assert first.continued and first.commands == ["git status"]
    assert not second.continued and second.request_event_id is None
    assert second.edits == ["auth/session.py"]
    assert second.commands == ["pytest -q tests/test_auth.py"]
    assert second.reads == ["auth/session.py"]
    assert second.outcome == "The test still fails."
    assert second.error == "FAILED tests/test_auth.py::test_login - AssertionError: 401 != 200"
    assert (second.start, second.end) == (2, 10)
    assert third.edits == ["notes/todo.md"] and third.error is None
    assert third.pending == ["bash(command=ls notes)"]
    assert [a.kind for a in third.actions] == ["edit", "command"]
    assert third.actions[1].pending


def test_a_later_success_clears_the_runs_error() -> None:
    events: list[Event] = [
        {"type": "user_input", "content": "build it"},
        call("a", "bash", {"command": "make"}),
        result("a", {"error": "make: *** [all] Error 2"}),
        call("b", "bash", {"command": "make"}),
        result("b", "built"),
    ]
    (run,) = split_runs(events)
    assert run.error is None
    assert run.actions[0].error == "make: *** [all] Error 2"
    assert run.commands == ["make"], "a command run twice is listed once"


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("edit", {"path": "packages/coding-agent/src/core/agent-session.ts"},
         ("edit", ("packages/coding-agent/src/core/agent-session.ts",))),
        ("write_file", {"filename": "a.txt"}, ("edit", ("a.txt",))),
        ("create_file", {"target_file": "src/new.py"}, ("edit", ("src/new.py",))),
        ("multi_edit", {"edits": [{"file_path": "x.py"}, {"file_path": "y.py"}]},
         ("edit", ("x.py", "y.py"))),
        ("apply_patch", {"input": "*** Begin Patch\n*** Update File: src/a.ts\n@@\n"
                                  "*** Add File: src/b.ts\n+x\n*** End Patch"},
         ("edit", ("src/a.ts", "src/b.ts"))),
        ("apply_diff", "--- a/lib/x.py\n+++ b/lib/x.py\n@@ -1 +1 @@", ("edit", ("lib/x.py",))),
        ("str_replace_based_edit_tool", {"command": "view", "path": "q.py"}, ("read", ("q.py",))),
        ("str_replace_based_edit_tool", {"command": "str_replace", "path": "q.py"},
         ("edit", ("q.py",))),
        ("bash", '{"command": "npm test"}', ("command", ("npm test",))),
        ("exec", {"cmd": ["ls", "-la"]}, ("command", ("ls -la",))),
        ("run_tests", {"cmd": "pytest -x"}, ("command", ("pytest -x",))),
        ("grep", {"pattern": "TODO", "path": "src"}, ("read", ("src",))),
        ("search", {"query": "rounding mode"}, ("read", ("rounding mode",))),
        ("tap", {"x": 120, "y": 340}, ("other", ())),
    ],
)  # fmt: skip
def test_classify_tool(name: str, args: object, expected: tuple[str, tuple[str, ...]]) -> None:
    assert classify_tool(name, args) == expected


def test_identifiers_keep_names_and_leave_noise_out() -> None:
    text = (
        "Edit packages/coding-agent/src/core/agent-session.ts and setup.py: foo.bar.baz(), "
        "my_func, SessionManager, getValue raise ValueError; see https://x.example/a?b=1, "
        "issue #42 and JIRA-12. Tap at 120,340 (1080x1920), commit 3fa2b9c1d, v1.2.3, 42 items."
    )
    found = extract_identifiers(text)
    for ident in ("packages/coding-agent/src/core/agent-session.ts", "setup.py", "foo.bar.baz",
                  "my_func", "SessionManager", "getValue", "ValueError",
                  "https://x.example/a?b=1", "#42", "JIRA-12"):  # fmt: skip
        assert ident in found
    for noise in ("120", "340", "1080x1920", "3fa2b9c1d", "1.2.3", "42"):
        assert noise not in found


def test_ranked_identifiers_put_words_and_arguments_before_tool_output() -> None:
    events: list[Event] = [
        call("c", "read_file", {"path": "src/loader_main.py"}),
        result("c", "from vendor_pkg.helpers import parse_all\nclass LoaderCache: ..."),
        {"type": "user_input", "content": "Why is `load_config` slow?"},
        {"type": "assistant_output", "content": "Because of RetryPolicy."},
    ]
    ranked = ranked_identifiers(events)
    assert ranked[:3] == ["load_config", "RetryPolicy", "src/loader_main.py"]
    assert "LoaderCache" in ranked[3:]
    assert "vendor_pkg.helpers" not in ranked, "import lines read out of files are noise"
    assert said_and_used_identifiers(events) == ["load_config", "RetryPolicy", "src/loader_main.py"]
    assert "path" not in said_and_used_identifiers(events), "argument keys are not identifiers"


def test_a_synthetic_split_turn_event_is_read_back_without_its_labels() -> None:
    turn: list[Event] = [
        {"type": "user_input", "content": "B: add the parser module"},
        call("e", "edit", {"path": "src/parser.py"}),
        result("e", "ok"),
        call("t", "bash", {"command": "pytest -q"}),
        result("t", "1 passed"),
    ]
    prefix = ExtractiveSummarizer().summarize(turn, kind="turn_prefix")
    meta = {"synthetic": "split_turn_prefix", "chunk_id": "chunk_0001"}
    synthetic: Event = {"type": "system_event", "role": "system", "content": prefix, "meta": meta}
    assert is_summary_event(synthetic)
    carried = flatten_summary(prefix)
    assert carried.request == "B: add the parser module"
    assert carried.edits == ("src/parser.py",) and carried.commands == ("pytest -q",)
    runs = split_runs([synthetic, call("f", "edit", {"path": "src/lexer.py"}), result("f", "ok")])
    (run,) = runs
    assert run.continued and run.carried
    assert run.request == "B: add the parser module"
    assert run.edits == ["src/parser.py", "src/lexer.py"]
    assert run.said == [], "the summary's text is not the user's or agent's words"


def test_an_earlier_summary_in_a_system_event_is_carried_once() -> None:
    history = ExtractiveSummarizer().summarize(
        [
            {"type": "user_input", "content": "Migrate the DB"},
            call("m", "write", {"path": "m.sql"}),
            result("m", "ok"),
        ]
    )
    event: Event = {"type": "system_event", "role": "system", "content": history}
    assert is_summary_event(event)
    assert not is_summary_event({"type": "system_event", "content": "Goal: be nice"})
    (run,) = split_runs([event, {"type": "assistant_output", "content": "Done."}])
    assert run.request == "Migrate the DB" and run.edits == ["m.sql"]
    assert run.outcome == "Done."
