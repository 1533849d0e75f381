"""`recall --all-sessions` on the command line (issue 11): archived sessions searched too, each
result naming its session; the default output and JSON shape are unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import SMALL_CONFIG, cli_ok, json_out, run_cli, write_config


def jsonl(*events: dict[str, object]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def turn(n: int, word: str) -> list[dict[str, object]]:
    return [
        {"type": "user_input", "content": f"task {n}: {word} in scripts/apply_fix.py"},
        {"type": "tool_call", "name": "sh", "tool_call_id": f"c{n}", "arguments": {"n": n}},
        {"type": "tool_result", "name": "sh", "tool_call_id": f"c{n}", "content": "ok"},
        {"type": "assistant_output", "content": f"done {n}"},
    ]


def append(root: Path, text: str) -> None:
    config = write_config(root.parent / "small.yaml", **SMALL_CONFIG)
    proc = run_cli(
        ["--memory-dir", root, "--config", config, "append", "-"], cwd=root.parent, stdin=text
    )
    assert proc.returncode == 0, proc.stderr


def compact(root: Path) -> bool:
    config = root.parent / "small.yaml"
    done = json_out(cli_ok(root, "--config", config, "compact", "--force", "--json"))
    return bool(done["compacted"])


@pytest.mark.extended  # 3-5 s: keeps the README's pytest -q near 3 minutes
def test_all_sessions_names_each_session(tmp_path: Path) -> None:
    root = tmp_path / "m"
    append(root, jsonl(*[e for n in range(4) for e in turn(n, "quokka")]))
    assert compact(root)
    old_id = json_out(cli_ok(root, "rotate", "--json"))["closed_session_id"]
    append(root, jsonl(*[e for n in range(4, 8) for e in turn(n, "wombat")]))
    assert compact(root)
    new_id = json_out(cli_ok(root, "status", "--json"))["session_id"]

    default = json_out(cli_ok(root, "recall", "quokka", "--json"))
    assert default["results"] == []
    assert all(
        set(h) == {"chunk_id", "source", "score", "summary", "events"} for h in default["results"]
    )

    every = json_out(cli_ok(root, "recall", "apply_fix.py", "--all-sessions", "--json"))
    sessions = {(h["session_id"], h["archived"]) for h in every["results"]}
    assert sessions == {(old_id, True), (new_id, False)}
    top = json_out(cli_ok(root, "recall", "quokka", "--all-sessions", "--json"))["results"][0]
    assert top["session_id"] == old_id and "quokka" in json.dumps(top["events"])

    text = cli_ok(root, "recall", "wombat quokka", "--all-sessions").stdout
    assert f"session {old_id} (archived)" in text and f"session {new_id} (active)" in text


def test_archived_results_and_empty_results_say_what_was_searched(tmp_path: Path) -> None:
    """Issue 22 item 10: `source: archived` on a closed session's result, and an empty result
    says the hot window is not searched."""
    root = tmp_path / "m"
    append(root, jsonl(*[e for n in range(4) for e in turn(n, "quokka")]))
    assert compact(root)
    cli_ok(root, "rotate")
    text = cli_ok(root, "recall", "quokka", "--all-sessions").stdout
    assert "source: archived" in text and "source: active" not in text, text
    empty = cli_ok(root, "recall", "quokka").stdout
    assert "0 results" in empty and "hot window is not searched" in empty, empty
    assert "--all-sessions" in run_cli(["--help"], cwd=tmp_path).stdout
