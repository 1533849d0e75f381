"""The command line of contract §12, as scripts use it.

Contract-level behaviour (exit codes, the `error:` line, escape sequences, import time, locks
held by other processes) runs `python -m inspector` in real subprocesses; the rest calls
`main(argv)` in-process to keep the suite fast.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.commands import main
from tests.helpers.cli import (
    SMALL_CONFIG,
    json_out,
    last_error_line,
    run_cli,
    run_python,
    start_python,
    write_config,
)

COMMANDS = (
    "tui",
    "demo",
    "status",
    "append",
    "plan",
    "compact",
    "rotate",
    "recall",
    "prompt",
    "repair",
)

STATUS_KEYS = {
    "session_id",
    "event_count",
    "hot_tokens",
    "last_prompt_tokens",
    "context_window",
    "should_compress",
    "chunk_count",
    "pending_count",
    "corrupt_lines",
    "has_compressed_history",
    "archives",
}
PLAN_KEYS = {
    "should_compress",
    "trigger",
    "path",
    "cut_index",
    "first_kept_event_id",
    "pinned_root_event_id",
    "is_split_turn",
    "turn_start_event_id",
    "compacted_event_ids",
    "kept_event_ids",
}
PASS_KEYS = {"compacted", "chunk_id", "reason", "kept_event_count"}

HOSTILE = "\x1b[31mRED\x1b]0;pwned\x07 [@click=app.quit] [bold]not markup[/bold] needle"


# --- helpers ---------------------------------------------------------------------------------


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean shell: no memory/config environment defaults, cwd an empty folder."""
    for name in ("SESSION_MEMORY_DIR", "SESSION_INSPECTOR_CONFIG", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def config(cwd: Path) -> Path:
    return write_config(cwd / "small.yaml", **SMALL_CONFIG)


def run(
    capsys: pytest.CaptureFixture[str], *argv: str | Path, stdin: str | None = None
) -> tuple[int, str, str]:
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        code = main([str(a) for a in argv])
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return code, out, err


def run_json(
    capsys: pytest.CaptureFixture[str], *argv: str | Path, stdin: str | None = None
) -> Any:
    code, out, err = run(capsys, *argv, "--json", stdin=stdin)
    assert code == 0, err
    return json.loads(out)


def jsonl(*events: dict[str, Any]) -> str:
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)


def conversation(turns: int, word: str = "alpha") -> str:
    """`turns` user/tool/assistant turns as JSON lines for `append -`."""
    events: list[dict[str, Any]] = []
    for n in range(turns):
        events += [
            {"type": "user_input", "content": f"{word} task {n}: open settings and check Wi-Fi"},
            {"type": "tool_call", "name": "tap", "tool_call_id": f"c{n}", "arguments": {"x": n}},
            {"type": "tool_result", "name": "tap", "tool_call_id": f"c{n}", "content": "ok"},
            {"type": "assistant_output", "content": f"{word} done {n}: Wi-Fi is on"},
        ]
    return jsonl(*events)


def events_file(root: Path) -> list[dict[str, Any]]:
    path = root / "session" / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture
def compacted(cwd: Path, config: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A memory root with a few turns, one of them compacted into a chunk."""
    root = cwd / "m"
    run_json(capsys, "--memory-dir", root, "--config", config, "append", "-", stdin=conversation(4))
    result = run_json(capsys, "--memory-dir", root, "--config", config, "compact", "--force")
    assert result["compacted"] is True
    return root


# --- subprocess: the contract's exit codes and error line -------------------------------------


@pytest.mark.parametrize(
    "argv", [["status"], ["plan"], ["recall", "x"], ["prompt", "--system", "s", "--task", "t"]]
)
def test_reading_a_missing_memory_dir_is_bad_input(tmp_path: Path, argv: list[str]) -> None:
    proc = run_cli(["--memory-dir", tmp_path / "nope", *argv, "--json"], cwd=tmp_path)
    assert proc.returncode == 2
    line = last_error_line(proc)
    assert line.startswith("error: no memory at ") and str(tmp_path / "nope") in line
    assert proc.stdout == ""
    assert not (tmp_path / "nope").exists()


def test_default_memory_dir_is_env_then_dot_memory(tmp_path: Path) -> None:
    proc = run_cli(["status"], cwd=tmp_path)
    assert proc.returncode == 2
    assert str(tmp_path / "memory") in last_error_line(proc)
    env_root = tmp_path / "from-env"
    proc = run_cli(
        ["append", "--type", "user_input", "--text", "hi"],
        cwd=tmp_path,
        env={"SESSION_MEMORY_DIR": str(env_root)},
    )
    assert proc.returncode == 0, proc.stderr
    assert [e["content"] for e in events_file(env_root)] == ["hi"]
    assert not (tmp_path / "memory").exists()


def test_bad_config_wrong_type_names_key_and_file(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "bad.yaml", context_window="big")
    proc = run_cli(["append", "--config", cfg, "--type", "user_input", "--text", "x"], cwd=tmp_path)
    assert proc.returncode == 2
    line = last_error_line(proc)
    assert line.startswith("error: ") and "context_window" in line and str(cfg) in line
    assert not (tmp_path / "memory").exists(), "nothing is written with a bad config"


def test_bad_config_not_yaml(tmp_path: Path) -> None:
    cfg = tmp_path / "broken.yaml"
    cfg.write_text("session_compaction: [unclosed\n  : :\n", encoding="utf-8")
    (tmp_path / "memory").mkdir()
    proc = run_cli(["status", "--config", cfg], cwd=tmp_path)
    assert proc.returncode == 2
    line = last_error_line(proc)
    assert line.startswith("error: ") and "YAML" in line and str(cfg) in line


def test_config_env_var_and_unknown_key_warning(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "c.yaml", context_window=4321, keep_recent_tokenz=5)
    (tmp_path / "memory").mkdir()
    proc = run_cli(["status", "--json"], cwd=tmp_path, env={"SESSION_INSPECTOR_CONFIG": str(cfg)})
    assert json_out(proc)["context_window"] == 4321
    assert "warning: " in proc.stderr and "keep_recent_tokenz" in proc.stderr


def test_malformed_stdin_line_rejects_the_whole_batch(tmp_path: Path) -> None:
    root = tmp_path / "m"
    good = jsonl({"type": "user_input", "content": "first"})
    proc = run_cli(["--memory-dir", root, "append", "-"], cwd=tmp_path, stdin=good)
    assert proc.returncode == 0, proc.stderr
    batch = good + "\n" + '{"type": "assistant_output", "content": "x"\n' + good
    proc = run_cli(["--memory-dir", root, "append", "-"], cwd=tmp_path, stdin=batch)
    assert proc.returncode == 2
    line = last_error_line(proc)
    assert line.startswith("error: stdin line 3:"), line
    assert [e["content"] for e in events_file(root)] == ["first"], "nothing of the batch written"


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ({"type": 5, "content": "x"}, "'type'"),
        ({"type": "user_input", "meta": "not an object"}, "'meta'"),
        ({"content": "no type nor role"}, "'type' or a 'role'"),
        (["not", "an", "object"], "JSON object"),
    ],
)
def test_events_with_wrong_field_types_are_bad_input(tmp_path: Path, bad: Any, needle: str) -> None:
    batch = jsonl({"type": "user_input", "content": "ok"}) + json.dumps(bad) + "\n"
    proc = run_cli(["--memory-dir", tmp_path / "m", "append", "-"], cwd=tmp_path, stdin=batch)
    assert proc.returncode == 2
    line = last_error_line(proc)
    assert line.startswith("error: stdin line 2") and needle in line, line
    assert events_file(tmp_path / "m") == []


@contextlib.contextmanager
def _holder(tmp_path: Path, code: str) -> Iterator[subprocess.Popen[str]]:
    """A real other process holding a lock until its stdin closes."""
    proc = start_python(["-c", code], cwd=tmp_path)
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline().strip() == "held"
    try:
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


HOLD_SESSION_LOCK = """
import sys
from core.store.session_store import SessionStore
store = SessionStore(sys.argv[1] if len(sys.argv) > 1 else "m")
with store.lock():
    print("held", flush=True)
    sys.stdin.read()
"""

HOLD_MAINTENANCE_LOCK = """
import sys
from core.store.session_store import SessionStore
with SessionStore("m").maintenance_lock() as got:
    assert got
    print("held", flush=True)
    sys.stdin.read()
"""


def test_lock_timeout_is_an_operation_failure(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "c.yaml", lock_timeout_seconds=0.3)
    root = tmp_path / "m"
    proc = run_cli(
        ["--memory-dir", root, "append", "--type", "user_input", "--text", "a"], cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    with _holder(tmp_path, HOLD_SESSION_LOCK):
        proc = run_cli(
            [
                "append",
                "--memory-dir",
                root,
                "--config",
                cfg,
                "--type",
                "user_input",
                "--text",
                "b",
            ],
            cwd=tmp_path,
        )
        assert proc.returncode == 1
        line = last_error_line(proc)
        assert line.startswith("error: ") and ".session.lock" in line, line
    assert [e["content"] for e in events_file(root)] == ["a"]


def test_compact_while_another_process_compacts_is_busy_exit_0(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "c.yaml", **SMALL_CONFIG)
    root = tmp_path / "m"
    proc = run_cli(["--memory-dir", root, "append", "-"], cwd=tmp_path, stdin=conversation(4))
    assert proc.returncode == 0, proc.stderr
    with _holder(tmp_path, HOLD_MAINTENANCE_LOCK):
        proc = run_cli(
            ["--memory-dir", root, "--config", cfg, "compact", "--force", "--json"], cwd=tmp_path
        )
        data = json_out(proc)
        assert data["compacted"] is False and data["reason"] == "busy"
    data = json_out(
        run_cli(
            ["--memory-dir", root, "--config", cfg, "compact", "--force", "--json"], cwd=tmp_path
        )
    )
    assert data["compacted"] is True


def test_usage_errors_exit_2_with_error_last_line(tmp_path: Path) -> None:
    for argv in (
        ["frobnicate"],
        ["recall"],
        ["recall", "q", "--limit", "0"],
        ["status", "--nope"],
        ["demo", "--speed", "-1"],
        ["demo", "--scenario", "nope"],
        ["append", "-", "--type", "user_input"],
        ["append"],
    ):
        proc = run_cli(argv, cwd=tmp_path)
        assert proc.returncode == 2, argv
        assert last_error_line(proc).startswith("error: "), (argv, proc.stderr)


def test_no_color_means_no_escape_sequences(tmp_path: Path) -> None:
    root = tmp_path / "m"
    run_cli(["--memory-dir", root, "append", "-"], cwd=tmp_path, stdin=conversation(2))
    coloured = run_cli(["--memory-dir", root, "status"], cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert coloured.returncode == 0 and "\x1b[" in coloured.stdout, "a terminal gets colour"
    plain = run_cli(
        ["--memory-dir", root, "status"], cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}
    )
    assert plain.returncode == 0
    assert "\x1b" not in plain.stdout and "hot tokens" in plain.stdout
    dumb = run_cli(["--memory-dir", root, "plan"], cwd=tmp_path, env={"TERM": "dumb"})
    assert dumb.returncode == 0 and "\x1b" not in dumb.stdout


def test_hostile_event_text_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "c.yaml", **SMALL_CONFIG)
    root = tmp_path / "m"
    base = ["--memory-dir", root, "--config", cfg]
    batch = jsonl(
        {"type": "user_input", "content": "root task"},
        {"type": "user_input", "content": HOSTILE},
        {"type": "assistant_output", "content": HOSTILE},
        *({"type": "user_input", "content": f"later {n}"} for n in range(6)),
        {"type": "assistant_output", "content": HOSTILE},
    )
    assert run_cli([*base, "append", "-"], cwd=tmp_path, stdin=batch).returncode == 0
    assert json_out(run_cli([*base, "compact", "--force", "--json"], cwd=tmp_path))["compacted"]
    env = {"FORCE_COLOR": "1", "NO_COLOR": "1"}
    for argv in (
        ["status"],
        ["plan"],
        ["recall", "needle"],
        ["prompt", "--system", "s", "--task", "t"],
    ):
        proc = run_cli([*base, *argv], cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout, argv
        if argv[0] != "status" or "needle" in proc.stdout:
            assert "\u241b" in proc.stdout, f"{argv}: ESC shown as a visible stand-in"
        if argv[0] in ("plan", "recall"):
            assert "[@click=app.quit]" in proc.stdout, f"{argv}: markup shown literally"


def test_commands_other_than_tui_do_not_import_textual(tmp_path: Path) -> None:
    root = tmp_path / "m"
    code = f"""
import sys, io, contextlib
from inspector.cli.commands import main
runs = [
    ["--memory-dir", {str(root)!r}, "append", "--type", "user_input", "--text", "hi"],
    ["--memory-dir", {str(root)!r}, "status", "--json"],
    ["--memory-dir", {str(root)!r}, "plan"],
    ["--memory-dir", {str(root)!r}, "compact", "--force"],
    ["--memory-dir", {str(root)!r}, "recall", "hi"],
    ["--memory-dir", {str(root)!r}, "prompt", "--system", "s", "--task", "t"],
    ["--memory-dir", {str(root)!r}, "repair"],
    ["--memory-dir", {str(root)!r}, "rotate"],
    ["status", "--help"],
]
with contextlib.redirect_stdout(io.StringIO()):
    codes = [main(argv) for argv in runs]
print(codes, "textual" in sys.modules, "inspector.tui.app" in sys.modules)
"""
    proc = run_python(["-c", code], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [
        "[0,",
        "0,",
        "0,",
        "0,",
        "0,",
        "0,",
        "0,",
        "0,",
        "0]",
        "False",
        "False",
    ]


# --- in-process: shapes, options, outputs ------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(
    cwd: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert "example" in out and "--memory-dir" in out and "--json" in out


def test_main_help_lists_every_command(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in COMMANDS:
        assert command in out


def test_global_options_before_or_after_the_command(
    compacted: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forms = [
        ["--memory-dir", compacted, "--config", config, "status"],
        ["status", "--memory-dir", compacted, "--config", config],
        ["--memory-dir", compacted, "status", "--config", config],
        ["--json", "--memory-dir", compacted, "status", "--config", config],
    ]
    seen = []
    for form in forms:
        data = run_json(capsys, *form)
        seen.append((data["memory_dir"], data["context_window"], data["chunk_count"]))
    assert seen == [(str(compacted), SMALL_CONFIG["context_window"], 1)] * len(forms)


def test_status_json_shape(
    compacted: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(capsys, "status", "--memory-dir", compacted, "--config", config)
    assert data.keys() >= STATUS_KEYS
    assert data["chunk_count"] == 1 and data["has_compressed_history"] is True
    assert isinstance(data["event_count"], int) and isinstance(data["corrupt_lines"], int)
    assert data["archives"] == []


def test_status_human_output(
    compacted: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "status", "--memory-dir", compacted, "--config", config)
    assert code == 0
    for label in ("session", "hot tokens", "should compress", "chunks", "pending evidence"):
        assert label in out
    assert "alpha done 3" in out, "the latest events are shown"


def test_append_from_flags_defaults_the_role(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys,
        "append",
        "--type",
        "tool_result",
        "--text",
        "ok",
        "--name",
        "tap",
        "--tool-call-id",
        "c1",
    )
    (event,) = data["events"]
    assert event["role"] == "tool" and event["name"] == "tap" and event["tool_call_id"] == "c1"
    assert event["id"] and event["ts"]
    assert events_file(cwd / "memory") == [event]
    code, out, _ = run(capsys, "append", "--type", "user_input", "--text", "hi", "--role", "boss")
    assert code == 0 and out.startswith("appended 1 event")
    assert events_file(cwd / "memory")[-1]["role"] == "boss"


def test_append_stdin_records_prompt_tokens_and_model_after_the_batch(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = "\n" + conversation(1) + "\n\n"
    data = run_json(capsys, "append", "-", "--prompt-tokens", "777", "--model", "m-1", stdin=batch)
    assert [e["type"] for e in data["events"]] == [
        "user_input",
        "tool_call",
        "tool_result",
        "assistant_output",
    ]
    assert data["events"] == events_file(cwd / "memory")
    status = run_json(capsys, "status")
    assert status["last_prompt_tokens"] == 777 and status["model"] == "m-1"
    run_json(capsys, "append", "--model", "m-2")
    assert run_json(capsys, "status")["model"] == "m-2"


def test_append_scrubs_screenshots(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shot = {
        "type": "tool_result",
        "name": "screenshot",
        "tool_call_id": "s",
        "content": {"data": "iVBORw0KGgoAAAA", "width": 1, "height": 1, "format": "png"},
    }
    (event,) = run_json(capsys, "append", "-", stdin=jsonl(shot))["events"]
    assert "data" not in event["content"] and event["meta"]["scrubbed"] is True
    assert "iVBORw0KGgo" not in (cwd / "memory" / "session" / "events.jsonl").read_text()


def test_append_maintain_runs_a_pass(
    cwd: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(capsys, "--config", config, "append", "-", "--maintain", stdin=conversation(3))
    assert len(data["events"]) == 12
    assert data["maintenance"].keys() >= PASS_KEYS
    assert data["maintenance"]["compacted"] is True, "12 events > count_compress_after_events 6"


def test_plan_json_shape_and_agreement_with_the_pass(
    cwd: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = cwd / "m"
    base = ("--memory-dir", root, "--config", config)
    run_json(capsys, *base, "append", "-", stdin=conversation(4))
    plan = run_json(capsys, *base, "plan")
    assert plan.keys() >= PLAN_KEYS
    assert plan["should_compress"] is True and plan["trigger"] == "count"
    assert plan["path"] == "token" and isinstance(plan["cut_index"], int)
    events = events_file(root)
    assert plan["pinned_root_event_id"] == events[0]["id"]
    assert plan["kept_event_ids"][0] == events[0]["id"], "the pinned root first"
    assert plan["first_kept_event_id"] == events[plan["cut_index"]]["id"]
    assert len(plan["compacted_event_ids"]) + len(plan["kept_event_ids"]) == len(events)
    assert run_json(capsys, *base, "plan", "--prompt-tokens", "950")["trigger"] == "tokens"
    result = run_json(capsys, *base, "compact")
    assert result["compacted"] is True
    assert [e["id"] for e in events_file(root)] == plan["kept_event_ids"]


def test_plan_human_output_explains_the_cut(
    cwd: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = cwd / "m"
    batch = jsonl(
        {"type": "user_input", "content": "root"},
        *(
            e
            for n in range(5)
            for e in (
                {"type": "tool_call", "name": "tap", "tool_call_id": f"c{n}"},
                {
                    "type": "tool_result",
                    "name": "tap",
                    "tool_call_id": f"c{n}",
                    "content": "ok " * 20,
                },
            )
        ),
    )
    run_json(capsys, "--memory-dir", root, "--config", config, "append", "-", stdin=batch)
    code, out, _ = run(capsys, "--memory-dir", root, "--config", config, "plan")
    assert code == 0
    for needle in (
        "should compress",
        "Plan",
        "cut index",
        "pinned root",
        "split turn",
        "Explanation",
        "candidate index",
        "first kept",
        "compact (prefix)",
    ):
        assert needle in out, needle


def test_compact_rotate_and_archives(
    compacted: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ("--memory-dir", compacted, "--config", config)
    code, out, _ = run(capsys, *base, "compact")
    assert code == 0 and out.startswith("not compacted: ")
    session_id = run_json(capsys, *base, "status")["session_id"]
    rotated = run_json(capsys, *base, "rotate")
    assert rotated["closed_session_id"] == session_id
    assert Path(rotated["archive_path"]) == compacted / "session_archive" / session_id
    status = run_json(capsys, *base, "status")
    assert status["event_count"] == 0 and status["chunk_count"] == 0
    (archive,) = status["archives"]
    assert archive["session_id"] == session_id and archive["chunk_count"] == 1
    code, out, _ = run(capsys, *base, "rotate")
    assert code == 0 and "nothing to rotate" in out  # the new session is empty: no junk archive
    assert len(run_json(capsys, *base, "status")["archives"]) == 1


def test_recall_json_shape_and_default_limit(
    cwd: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = cwd / "m"
    base = ("--memory-dir", root, "--config", config)
    for n in range(7):
        run_json(capsys, *base, "append", "-", stdin=conversation(2, word=f"alpha{n} alpha"))
        assert run_json(capsys, *base, "compact", "--force")["compacted"] is True
    data = run_json(capsys, *base, "recall", "alpha")
    assert set(data) >= {"results", "pending_chunks_recalled"}
    assert len(data["results"]) == 5
    for hit in data["results"]:
        assert {"chunk_id", "source", "score", "summary", "events"} <= hit.keys()
        assert hit["source"] == "active"
    assert data["pending_chunks_recalled"] == 0
    assert len(run_json(capsys, *base, "recall", "alpha", "--limit", "2")["results"]) == 2
    code, out, _ = run(capsys, *base, "recall", "alpha3")
    assert code == 0 and "source: active" in out and "alpha3" in out


def test_prompt_messages(compacted: Path, config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompt = ("prompt", "--system", "SYS", "--task", "TASK", "--memory-dir", compacted)
    data = run_json(capsys, *prompt, "--config", config)
    messages = data["messages"]
    assert messages[0]["role"] == "system" and messages[0]["content"].startswith("SYS")
    assert "# Session History (compressed chunks)" in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": "TASK"}
    assert (
        any(m.get("tool_calls") for m in messages)
        or any(m["role"] == "tool" for m in messages)
        or len(messages) > 2
    )
    code, out, _ = run(capsys, *prompt, "--config", config)
    assert code == 0 and "system" in out and "TASK" in out


def test_repair_quarantines_corrupt_lines(
    compacted: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (compacted / "session" / "events.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    base = ("--memory-dir", compacted, "--config", config)
    assert run_json(capsys, *base, "status")["corrupt_lines"] == 1
    data = run_json(capsys, *base, "repair")
    assert isinstance(data["repaired"], dict)
    assert data["repaired"].get("corrupt_lines_quarantined") == 1
    assert all(isinstance(v, int) for v in data["repaired"].values())
    code, out, _ = run(capsys, *base, "repair")
    assert code == 0 and out.strip()


def test_demo_refuses_a_non_empty_memory_dir(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "m").mkdir()
    (cwd / "m" / "keep.txt").write_text("precious")
    code, _out, err = run(capsys, "demo", "--no-tui", "--memory-dir", cwd / "m")
    assert code == 2
    assert err.splitlines()[-1].startswith("error: refusing to play the demo into")
    assert sorted(p.name for p in (cwd / "m").iterdir()) == ["keep.txt"]


def test_internal_errors_are_one_line_and_debug_shows_the_traceback(
    cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import inspector.cli.commands as cli

    def boom(ctx: Any) -> int:
        raise RuntimeError("boom")

    monkeypatch.setitem(cli.COMMANDS, "status", boom)
    code, _, err = run(capsys, "status")
    assert code == 1
    assert err.strip().splitlines() == [
        "error: internal error: RuntimeError: boom (run with --debug for a traceback)"
    ]
    code, _, err = run(capsys, "status", "--debug")
    assert code == 1 and "Traceback" in err and err.splitlines()[-1].startswith("error: ")

    def interrupted(ctx: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "status", interrupted)
    assert run(capsys, "status")[0] == 130


def test_error_messages_from_data_are_made_visible(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "--memory-dir", cwd / "evil\x1b[2Jdir", "status")
    assert code == 2
    assert "\x1b" not in err and "\u241b" in err


def test_unparsable_number_on_stdin_is_bad_input(tmp_path: Path) -> None:
    """json.loads raises ValueError (not JSONDecodeError) past 4300 digits."""
    root = tmp_path / "m"
    batch = '{"type": "user_input", "content": ' + "9" * 5000 + "}\n"
    proc = run_cli(["--memory-dir", root, "append", "-"], cwd=tmp_path, stdin=batch)
    assert proc.returncode == 2, proc.stderr
    assert last_error_line(proc).startswith("error: stdin line 1: not valid JSON")
    assert "Traceback" not in proc.stderr


def test_json_output_escapes_c1_and_bidi_controls(tmp_path: Path) -> None:
    root = tmp_path / "m"
    hostile = "a\u009b31mb\u202ec\u2066d"
    event = jsonl({"type": "user_input", "content": hostile})
    assert run_cli(["--memory-dir", root, "append", "-"], cwd=tmp_path, stdin=event).returncode == 0
    proc = run_cli(
        ["--memory-dir", root, "--json", "prompt", "--system", "s", "--task", "t"], cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    for ch in ("\u009b", "\u202e", "\u2066"):
        assert ch not in proc.stdout
    messages = json_out(proc)["messages"]
    assert messages[1]["content"] == hostile, "the JSON value itself is unchanged"


def test_human_status_shows_index_warnings(tmp_path: Path) -> None:
    root = tmp_path / "m"
    assert (
        run_cli(
            ["--memory-dir", root, "append", "--type", "user_input", "--text", "x"], cwd=tmp_path
        ).returncode
        == 0
    )
    index = root / "session" / "chunks" / "index.yaml"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text("version: 1\nchunks:\n  - chunk_id: ../../etc/passwd\n    summary: x\n")
    proc = run_cli(["--memory-dir", root, "status"], cwd=tmp_path, env={"NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "warning" in proc.stdout and "chunk id" in proc.stdout
