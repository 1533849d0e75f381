"""The command line when the person (or the pipe) makes a mistake (issue 22 items 4, 8, 9):
piped tables are neither padded nor wrapped, a healthy root has nothing to repair, an empty
session does not rotate into a junk archive, typos get a "did you mean", `append` warns about
what `import` would refuse, a closed pipe is not a failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.cli import REPO, cli_env, cli_ok, json_out, last_error_line, run_cli


def _demo(tmp_path: Path) -> Path:
    root = tmp_path / "demo" / "memory"
    proc = run_cli(["--memory-dir", root, "demo", "--no-tui"], cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return root


def _assert_not_padded(text: str, width: int) -> None:
    lines = text.splitlines()
    assert lines
    assert not [line for line in lines if line != line.rstrip()], "trailing blanks"
    # Padded to the width, every table row would be exactly as wide as the console.
    assert sum(len(line) == width for line in lines) < 2, text


def test_piped_status_plan_and_demo_are_not_padded_or_wrapped(tmp_path: Path) -> None:
    root = tmp_path / "demo" / "memory"
    env = {"COLUMNS": "80"}
    demo = run_cli(["--memory-dir", root, "demo", "--no-tui"], cwd=REPO, env=env)
    assert demo.returncode == 0, demo.stderr
    _assert_not_padded(demo.stdout, 80)
    status = run_cli(["--memory-dir", root, "status"], cwd=REPO, env=env)
    _assert_not_padded(status.stdout, 80)
    # The trigger's reason is one cell: on one line, never folded into the next row.
    reason = next(line for line in status.stdout.splitlines() if "should compress" in line)
    assert "no compaction needed" in reason, status.stdout
    plan = run_cli(["--memory-dir", root, "plan"], cwd=REPO, env=env)
    _assert_not_padded(plan.stdout, 80)
    assert "\n ─" in plan.stdout or "─" in plan.stdout


def test_repair_on_a_healthy_root_has_nothing_to_repair(tmp_path: Path) -> None:
    root = _demo(tmp_path)
    text = cli_ok(root, "repair").stdout
    assert text.startswith("nothing to repair"), text
    assert "rebuilt 1" not in text


def test_rotating_an_empty_session_is_a_no_op(tmp_path: Path) -> None:
    root = tmp_path / "m"
    cli_ok(root, "append", "--type", "user_input", "--text", "hello")
    first = json_out(cli_ok(root, "--json", "rotate"))
    assert first["closed_session_id"]
    again = cli_ok(root, "rotate").stdout
    assert "nothing to rotate" in again and "empty" in again, again
    data = json_out(cli_ok(root, "--json", "rotate"))
    assert data["closed_session_id"] is None and data["reason"] == "empty"
    assert len(list((root / "session_archive").iterdir())) == 1


def test_typos_get_did_you_mean(tmp_path: Path) -> None:
    proc = run_cli(["--memroy-dir", tmp_path, "status"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "did you mean --memory-dir?" in last_error_line(proc)
    proc = run_cli(["stauts"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "did you mean 'status'?" in last_error_line(proc)


def test_version(tmp_path: Path) -> None:
    proc = run_cli(["--version"], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("session-inspector "), proc


def append_result(root: Path, call_id: str) -> subprocess.CompletedProcess[str]:
    """`append --type tool_result --text ok --tool-call-id CALL_ID` into root."""
    args: list[str | Path] = ["--memory-dir", root, "append", "--type", "tool_result"]
    return run_cli([*args, "--text", "ok", "--tool-call-id", call_id], cwd=REPO)


def test_append_warns_on_unknown_type_and_an_unpaired_result(tmp_path: Path) -> None:
    root = tmp_path / "m"
    proc = run_cli(["--memory-dir", root, "append", "--type", "usr_input", "--text", "x"], cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "note: created a new memory root at" in proc.stderr
    assert "warning: unknown event type 'usr_input'" in proc.stderr
    proc = append_result(root, "c9")
    assert proc.returncode == 0
    assert "created a new memory root" not in proc.stderr
    assert "no earlier tool_call" in proc.stderr and "'c9'" in proc.stderr
    cli_ok(root, "append", "--type", "tool_call", "--text", "{}", "--tool-call-id", "c10")
    proc = append_result(root, "c10")
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr


def test_prompt_has_the_tuis_defaults(tmp_path: Path) -> None:
    root = tmp_path / "m"
    cli_ok(root, "append", "--type", "user_input", "--text", "hello")
    messages = json_out(cli_ok(root, "--json", "prompt"))["messages"]
    assert messages[0]["content"].startswith("You are a helpful agent.")
    assert messages[-1] == {"role": "user", "content": "Continue the task."}


def test_a_closed_pipe_is_not_a_failure(tmp_path: Path) -> None:
    """`plan | head`: the reader went away before the plan was written."""
    root = _demo(tmp_path)
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "inspector", "--memory-dir", str(root), "plan"],
            cwd=REPO,
            env=cli_env(),
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
