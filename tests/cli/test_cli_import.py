"""`session-inspector import` end to end, as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import REPO, cli_ok, json_out, last_error_line, run_cli, write_config
from tests.helpers.invariants import indexed_chunk_ids, read_jsonl, stored_id_counts
from tests.helpers.paths import TRANSCRIPTS

DATA = TRANSCRIPTS
SAMPLES = [
    ("pi", "pi_session.jsonl"),
    ("openai", "openai_chat.json"),
    ("mini-swe-agent", "mini_swe_agent.traj.json"),
]


def tree(root: Path) -> dict[str, bytes]:
    """Every file under a folder with its bytes (to prove nothing was written)."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("fmt", "name"), SAMPLES, ids=[f for f, _ in SAMPLES])
def test_import_appends_every_event_without_passes(tmp_path: Path, fmt: str, name: str) -> None:
    root = tmp_path / "memory"
    out = json_out(cli_ok(root, "import", "--format", fmt, DATA / name, "--json"))
    events = read_jsonl(root / "session" / "events.jsonl")
    assert out["format"] == fmt
    assert out["source"] == str(DATA / name)
    assert out["events_appended"] == len(events) > 0
    assert out["calls"] > 0
    assert (out["passes"], out["compactions"], out["replay"]) == (0, 0, False)
    assert out["memory_dir"] == str(root)
    status = json_out(cli_ok(root, "status", "--json"))
    assert status["event_count"] == len(events)
    assert status["chunk_count"] == 0
    assert status["last_prompt_tokens"] is not None  # every sample has provider figures


def test_replay_compacts_and_the_memory_root_is_consistent(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    config = write_config(
        tmp_path / "extraction.yaml",
        context_window=3700,
        reserve_tokens=370,
        keep_recent_tokens=462,
        hot_window_events=6,
        summary_max_chunks=3,
    )
    pi_log = DATA / "pi_session.jsonl"
    replay_pi = ("--config", config, "import", "--format", "pi", pi_log, "--replay")
    proc = cli_ok(root, *replay_pi, "--json")
    out = json_out(proc)
    assert out["replay"] is True
    assert out["compactions"] >= 2
    assert out["count_triggered"] == 0
    assert out["passes"] == out["token_triggered"]
    session = root / "session"
    chunks = indexed_chunk_ids(session)
    assert len(chunks) == out["compactions"]
    counts = stored_id_counts(root)
    assert sum(counts.values()) == out["events_appended"] == len(counts)
    assert (session / "summary.md").exists()
    # human output says what happened
    again = cli_ok(tmp_path / "other", *replay_pi)
    # 37 messages and pi's own compaction entry, kept as a marked system_event (issue 23)
    assert "replayed 38 events of 16 model calls" in again.stdout
    assert f"compactions: {out['compactions']}" in again.stdout


def test_bad_line_is_exit_2_naming_file_and_line_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    cli_ok(root, "append", "--type", "user_input", "--text", "before")
    before = tree(root)
    lines = (DATA / "pi_session.jsonl").read_text(encoding="utf-8").splitlines()
    lines[20] = lines[20][:-5]  # a line cut short, well after many good ones
    bad = tmp_path / "cut.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for extra in ([], ["--replay"]):
        proc = run_cli(["--memory-dir", root, "import", "--format", "pi", bad, *extra], cwd=REPO)
        assert proc.returncode == 2
        assert last_error_line(proc).startswith(f"error: {bad}:21: not valid JSON")
        assert tree(root) == before


def test_bad_input_creates_no_memory_root(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    bad = tmp_path / "chat.json"
    bad.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "oracle"}]))
    proc = run_cli(["--memory-dir", root, "import", "--format", "openai", bad], cwd=REPO)
    assert proc.returncode == 2
    assert last_error_line(proc) == (
        f"error: {bad}:1: unknown message role 'oracle' (expected system, developer, user, "
        "assistant or tool; legacy `function` messages are not read)"
    )
    assert not root.exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--format", "claude", "x.jsonl"], "choose from 'pi', 'openai', 'mini-swe-agent'"),
        (["x.jsonl"], "x.jsonl: cannot read the transcript"),  # --format is optional
        (["--format", "pi", "does-not-exist.jsonl"], "cannot read the transcript"),
    ],
)
def test_usage_errors_are_exit_2(tmp_path: Path, args: list[str], needle: str) -> None:
    root = tmp_path / "memory"
    proc = run_cli(["--memory-dir", root, "import", *args], cwd=tmp_path)
    assert proc.returncode == 2
    line = last_error_line(proc)
    assert line.startswith("error: ") and needle in line
    assert not root.exists()
