"""Untrusted text through the command line (issue 6, "Untrusted text in the TUI and the
terminal", the CLI part): hostile event text — ANSI CSI and OSC sequences, C1 controls, bidi
overrides, Rich markup such as `[@click=…]` and `[link=…]`, very long lines — in events,
tool names, types, summaries, summary.md and the memory root's own name reaches the terminal
only as visible text. Human output is checked twice: piped (no control character at all
besides newline and tab) and on a real pseudo-terminal, where Rich adds its own SGR colour
codes but nothing from the data gets through raw. (The TUI has its own hostile-input tests.)"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from core.manager import MemoryManager
from tests.helpers.reliability import REPO, cli_env, run_cli, small_config, write_small_config

HOSTILE = [
    "\x1b[31mRED\x1b[0m \x1b[2J\x1b[H cleared? \x1b[?1049h alt screen",
    "\x1b]8;;https://evil.example/\x07click me\x1b]8;;\x07 and \x1b]0;pwned title\x07",
    "\x1b]52;c;ZXZpbCBjbGlwYm9hcmQ=\x07 clipboard write",
    "C1: \x9b31m csi \x9d0;osc\x9c \x85 nel \x90dcs\x9c",
    "bidi: \u202egnp.exe\u202c \u2066isolate\u2069 \u200fmark \u061c",
    "markup: [@click=app.quit]quit[/] [link=https://evil.example]link[/link] [bold red]x",
    "unbalanced [/] ]][[ [on red] \\[escaped]",
    "bell \x07 backspace \x08 del \x7f nul \x00 cr \r overwrite vt \x0b ff \x0c",
    "long " + "\x1b[31m" + "A" * 20_000,
]
# Every control character except newline and tab, C1 included, DEL, and the bidi controls.
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def hostile_root(base: Path) -> Path:
    root = base / "mem\x1b[31m\u202eroot"  # the folder name itself is hostile
    write_small_config(root)
    mm = MemoryManager(root, small_config())
    for n, text in enumerate(HOSTILE):
        mm.begin_run(f"camera {text}")
        call = f"k{n}"
        mm.append({"type": "tool_call", "name": f"shell\x1b[1m{n}", "tool_call_id": call})
        mm.append({"type": "tool_result", "name": "shell", "tool_call_id": call, "content": text})
        mm.append({"type": f"odd\x1b]0;t\x07type{n}", "role": "\u202eassistant", "content": text})
        mm.append({"type": "assistant_output", "content": f"camera done: {text}"})
    assert mm.save(force=True).compacted  # hostile text in a chunk and its summary too
    mm.begin_run("camera " + HOSTILE[0])
    summary = root / "session" / "summary.md"
    summary.write_text(summary.read_text() + "\n" + "\n".join(HOSTILE) + "\n")
    return root


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_root(tmp_path_factory.mktemp("untrusted"))


HUMAN = [
    ["status"],
    ["plan"],
    ["plan", "--prompt-tokens", "999999"],
    ["recall", "camera", "--limit", "20"],
    ["recall", "\x1b[31mcamera\u202e"],
    ["prompt", "--system", "sys", "--task", "go"],
]


@pytest.mark.parametrize("args", HUMAN, ids=lambda a: "-".join(a)[:30])
def test_piped_human_output_has_no_control_characters(root: Path, args: list[str]) -> None:
    run = run_cli(root, *args)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    for name, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        bad = FORBIDDEN.search(text)
        assert bad is None, f"{name} holds {bad.group()!r} at {bad.start()}"
    if args[0] in ("status", "prompt") or args[1:2] == ["camera"]:
        assert "\u241b[31m" in run.stdout, "the escape is shown as a visible ␛"


@pytest.mark.extended  # 3-5 s: keeps the README's pytest -q near 3 minutes
def test_compact_and_repair_output_and_errors_are_visible_text(tmp_path: Path) -> None:
    root = hostile_root(tmp_path)
    for args in (["compact", "--force"], ["repair"], ["rotate"]):
        run = run_cli(root, *args)
        assert run.returncode == 0, run.stderr
        assert FORBIDDEN.search(run.stdout + run.stderr) is None
    # An error message that carries data: an unreadable index with escapes in it.
    index = root / "session" / "chunks" / "index.yaml"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text("chunks: [\x1b]0;pwned\x07\n")
    run = run_cli(root, "recall", "camera")
    assert run.returncode == 1 and run.error_line.startswith("error: ")
    assert FORBIDDEN.search(run.stdout + run.stderr) is None


def test_json_output_escapes_the_c0_controls(root: Path) -> None:
    """--json is for programs: valid JSON holding the text exactly; C0 controls (ESC among
    them) are always \\u-escaped by JSON itself, so no raw ESC reaches the terminal."""
    for args in (
        ["status"],
        ["plan"],
        ["recall", "camera"],
        ["prompt", "--system", "s", "--task", "t"],
    ):
        run = run_cli(root, *args, "--json")
        assert run.returncode == 0, run.stderr
        assert re.search("[\x00-\x08\x0b-\x1f]", run.stdout) is None
        json.loads(run.stdout)
    messages = json.loads(run.stdout)["messages"]
    assert any(HOSTILE[0] in str(m.get("content")) for m in messages), "the text is exact"


def run_on_pty(root: Path, *args: str) -> str:
    """The CLI with a pseudo-terminal as stdout and stderr: Rich styles its output."""
    master, slave = pty.openpty()
    env = {**cli_env(), "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "50"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "--memory-dir", str(root), *args],
        stdout=slave,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        cwd=REPO,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(60) == 0
    return b"".join(chunks).decode("utf-8", "replace")


SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("args", HUMAN[:4] + HUMAN[5:], ids=lambda a: "-".join(a)[:30])
def test_on_a_terminal_only_richs_own_colour_codes_are_raw(root: Path, args: list[str]) -> None:
    text = run_on_pty(root, *args)
    assert "Traceback" not in text
    assert SGR.search(text), "Rich saw a terminal and styled its output"
    without_styles = SGR.sub("", text).replace("\r\n", "\n")
    bad = FORBIDDEN.search(without_styles)
    assert bad is None, (
        f"raw {bad.group()!r} near {without_styles[max(0, bad.start() - 30) : bad.start() + 10]!r}"
    )
    assert "\x1b]" not in text and "\x07" not in text, "no OSC (links, titles, clipboard)"
