"""The CLI's human output as a newcomer meets it (issue 13 item 7): no hard wrapping when
piped, the same role defaults for `append -` as for `--type`, `recall ''` is a usage error,
and counts read "1 event", not "1 events"."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.text import Text

from core.compaction.calibration import PLAIN
from inspector.cli.output import elide_path, make_console, plural
from tests.helpers.cli import REPO, cli_ok, json_out, run_cli


def test_piped_output_is_never_hard_wrapped() -> None:
    out = io.StringIO()
    console = make_console(out)
    command = "session-inspector --memory-dir /tmp/" + "very-long-folder-name/" * 8 + " status"
    console.print(Text("look around: " + command))
    assert out.getvalue() == "look around: " + command + "\n"


def test_plurals() -> None:
    assert plural(1, "event") == "1 event"
    assert plural(0, "event") == "0 events"
    assert plural(1_000, "rotation") == "1,000 rotations"


def test_append_from_stdin_gets_the_same_default_roles_as_flags(tmp_path: Path) -> None:
    root = tmp_path / "m"
    lines = [
        {"type": "user_input", "content": "hi"},
        {"type": "assistant_output", "content": "hello"},
        {"type": "tool_result", "content": "ok", "tool_call_id": "c1", "role": "tool"},
        {"type": "system_event", "content": "note", "role": "narrator"},
    ]
    proc = run_cli(
        ["--memory-dir", root, "--json", "append", "-"],
        cwd=REPO,
        stdin="\n".join(json.dumps(line) for line in lines) + "\n",
    )
    assert proc.returncode == 0, proc.stderr
    stored = json_out(proc)["events"]
    assert [e["role"] for e in stored] == ["user", "assistant", "tool", "narrator"]
    flags = json_out(cli_ok(root, "--json", "append", "--type", "assistant_output", "--text", "x"))[
        "events"
    ]
    assert flags[0]["role"] == stored[1]["role"] == "assistant"
    text = cli_ok(root, "append", "--type", "user_input", "--text", "one more").stdout
    assert "appended 1 event" in text and "1 events" not in text


def test_recall_of_nothing_is_a_usage_error(tmp_path: Path) -> None:
    root = tmp_path / "m"
    cli_ok(root, "append", "--type", "user_input", "--text", "hello")
    for query in ("", "   "):
        proc = run_cli(["--memory-dir", root, "recall", query], cwd=REPO)
        assert proc.returncode == 2
        assert "recall: give words to search for" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_status_never_cuts_off_a_long_memory_root(tmp_path: Path) -> None:
    """Piped, a table is as wide as its cells (never padded or folded to a terminal's width),
    so the root is in its row whole, to copy (it used to end in "…/past/eigh…")."""
    root = tmp_path / "a-rather-long-folder" / "to-make-the-path" / "longer-than-the-column" / "m"
    cli_ok(root, "append", "--type", "user_input", "--text", "hello")
    text = cli_ok(root, "status").stdout
    row = next(line for line in text.splitlines() if line.startswith(" memory root"))
    assert row.endswith(str(root)) and "…" not in row, row


def test_status_in_a_narrow_terminal_elides_the_root_and_prints_it_whole() -> None:
    """In a terminal the table elides the root's middle, and the whole path follows on one
    line of its own."""
    from rich.console import Console

    from inspector.cli.output import render_status

    class _Status:
        memory_dir = "/tmp/" + "a-rather-long-folder/" * 4 + "m"
        session_id = "s-1"
        event_count = hot_tokens = last_prompt_tokens = prompt_tokens = 1
        prompt_tokens_source = "estimated"
        prompt_tokens_appended = 0
        context_window = 1000
        model = None
        should_compress = False
        trigger = trigger_reason = index_error = None
        chunk_count = pending_count = corrupt_lines = 0
        has_compressed_history = False
        warnings: tuple[str, ...] = ()
        archives: tuple[object, ...] = ()
        calibration = PLAIN

    out = io.StringIO()
    render_status(Console(file=out, width=60, soft_wrap=False), _Status())  # type: ignore[arg-type]
    text = out.getvalue()
    assert f"memory root: {_Status.memory_dir}\n" in text, text
    row = next(line for line in text.splitlines() if line.startswith(" memory root"))
    assert "…" in row and row.rstrip().endswith("folder/m"), row


def test_elide_path_keeps_head_and_tail() -> None:
    path = "/home/someone/projects/device-agent/runs/2026-11-30/memory"
    for width in (12, 20, 40):
        cut = elide_path(path, width)
        assert len(cut) == width and cut.startswith("/") and cut.endswith("memory"), cut
    assert elide_path(path, 200) == path


def test_import_counts_read_in_the_singular(tmp_path: Path) -> None:
    root = tmp_path / "m"
    cli_ok(root, "append", "--type", "user_input", "--text", "one already there")
    sample = REPO / "tests" / "data" / "transcripts" / "openai_chat.json"
    proc = cli_ok(root, "import", "--format", "openai", sample)
    assert "already holds 1 event;" in proc.stderr, proc.stderr
    assert "1 events" not in proc.stderr + proc.stdout
