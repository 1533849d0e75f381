"""The command-line samples in README.md and docs/CLI.md, produced from the deterministic demo
so they cannot drift from what the program prints.

    python -m inspector.cli.docs_samples --write     # run the commands, rewrite the samples
    python -m inspector.cli.docs_samples --check     # exit 1 (and a diff) when a sample differs

A sample is a ```console block right after a marker line `<!-- sample: NAME -->`; its text is
`$ session-inspector …` lines, each followed by what the command printed (stdout, then what it
wrote on stderr; `[exit N]` when it failed). Each doc's samples run in order on one fresh demo
root (`demo --no-tui` in a temporary folder, shown as /tmp/session-inspector-demo-x/memory),
so a later sample sees what an earlier one did. Samples made with `w()` run in a working
folder beside it (shown as /home/me/agent) that holds the transcripts of
tests/data/transcripts/, the small files of `WORKDIR_FILES` and `memory` (the demo root): the
crash/repair walkthrough (the demo's crash scenario, whose pass dies at the
`after_events_replace` fault point), `import`, `follow`, `serve` and the error samples run
there, every command for real. Ids, session ids, times and timings differ on every run:
`normalized()` masks them, and `tests/cli/test_docs_samples.py` compares the docs with a fresh
run through it. docs/CLI.md has no ```console block without a marker (the test checks it);
README.md's other blocks are written by hand.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHOWN_ROOT = "/tmp/session-inspector-demo-x/memory"
PROG = "session-inspector"


@dataclass(frozen=True)
class Command:
    """One command of a sample: its arguments after the program name, optional stdin, and
    how many lines of its output the doc keeps (the rest becomes `…`)."""

    args: tuple[str, ...]
    stdin: str | None = None
    head: int | None = None
    shown: str | None = None
    """How the command line reads in the doc when it differs from `args` (a redirect)."""
    serve: bool = False
    """A server: run on a free port (shown as the default 8000), stopped after a moment; only
    its own stderr line is kept (textual-serve's banner on stdout names this machine's Python)."""
    stderr_first: bool = False
    """Show what it wrote on stderr before its stdout (what it says at the start, as a
    terminal shows it: the demo's root, import's detected format)."""
    follow: bool = False
    """`follow`: interrupted (SIGINT, shown as `^C`) once the memory root holds as many events
    as `import --replay` makes of the same log."""


@dataclass(frozen=True)
class Sample:
    name: str
    commands: tuple[Command, ...]
    workdir: bool = False
    """Run in the doc's working folder (shown as /home/me/agent) instead of the repository:
    its commands name their roots (`--memory-dir ./crash`) and files (the transcripts of
    tests/data/transcripts/ and the files of `WORKDIR_FILES`) relative to it."""


def c(
    *args: str,
    stdin: str | None = None,
    head: int | None = None,
    shown: str | None = None,
    serve: bool = False,
    stderr_first: bool = False,
    follow: bool = False,
) -> Command:
    return Command(tuple(args), stdin, head, shown, serve, stderr_first, follow)


def w(name: str, *commands: Command) -> Sample:
    """A sample run in the working folder."""
    return Sample(name, commands, workdir=True)


DEMO = ("demo", "--no-tui")
"""The command every doc's samples start from; a sample that shows it shows that run."""

BATCH = (
    '{"type":"user_input","content":"Check the battery drain and turn off background location"}\n'
    '{"type":"tool_call","name":"shell","arguments":{"cmd":"dumpsys battery"},'
    '"tool_call_id":"call_b1"}\n'
    '{"type":"tool_result","name":"shell","tool_call_id":"call_b1","content":"level: 41"}\n'
)

SHOWN_WORKDIR = "/home/me/agent"
TRANSCRIPTS = REPO / "tests" / "data" / "transcripts"

WORKDIR_FILES = {
    # A pi session whose second line was cut off mid-string.
    "broken.jsonl": (
        '{"type": "session", "version": 3, "id": "0f3c9a52", '
        '"timestamp": "2026-11-28T09:14:02.118Z", "cwd": "/home/me/agent"}\n'
        '{"type": "message", "id": "a1", "parentId": null, "timestamp": "2026-11-28T09:14:09Z", '
        '"message": {"role": "user", "content": "Add a --dry-run flag to the import comm\n'
    ),
    "bad.jsonl": (
        '{"type":"user_input","content":"Mute the phone until 8"}\n'
        '{"type":"user_input" "content":"and turn on do not disturb"}\n'
    ),
    "bad.yaml": "session_compaction:\n  context_window: big\n",
    "small.yaml": (
        "session_compaction:\n"
        "  context_window: 3700\n"
        "  reserve_tokens: 370\n"
        "  keep_recent_tokens: 462\n"
    ),
}
"""Files the working-folder samples read, written by the script."""

DOCS: dict[str, tuple[Sample, ...]] = {
    "README.md": (
        Sample(
            "readme-tour",
            (
                c("status", head=16),
                c("append", "--type", "user_input", "--text", "Set an alarm for 6:30 tomorrow"),
                c("plan", head=14),
                c("compact", "--force"),
                c("recall", "夜跑", "--limit", "1", head=4),
                c("rotate"),
            ),
        ),
    ),
    "docs/CLI.md": (
        Sample("cli-demo", (c(*DEMO),)),
        w("cli-serve", c("--memory-dir", "./memory", "serve", "--read-only", serve=True)),
        Sample("cli-status", (c("status"),)),
        Sample("cli-status-json", (c("status", "--json", head=12),)),
        Sample("cli-plan", (c("plan", "--prompt-tokens", "4500", head=24),)),
        Sample("cli-plan-json", (c("plan", "--json", head=10),)),
        Sample(
            "cli-append",
            (
                c("append", "--type", "user_input", "--text", "Turn off Bluetooth"),
                c(
                    "append",
                    "-",
                    "--prompt-tokens",
                    "4600",
                    "--maintain",
                    stdin=BATCH,
                    shown="append - --prompt-tokens 4600 --maintain < batch.jsonl",
                ),
            ),
        ),
        Sample("cli-compact", (c("compact"),)),
        Sample("cli-compact-json", (c("compact", "--force", "--json"),)),
        Sample("cli-recall-none", (c("recall", "Bluetooth"),)),
        Sample(
            "cli-recall-all-sessions",
            (c("recall", "crash log", "--all-sessions", "--limit", "1", head=8),),
        ),
        Sample("cli-recall-cjk", (c("recall", "夜跑 入门计划", "--limit", "1", head=14),)),
        Sample(
            "cli-prompt-json",
            (
                c(
                    "prompt",
                    "--system",
                    "You are a device agent.",
                    "--task",
                    "What next?",
                    "--json",
                    head=12,
                ),
            ),
        ),
        Sample("cli-timeline", (c("timeline"),)),
        Sample("cli-prompt-at", (c("prompt", "--at", "4", head=16),)),
        Sample("cli-dropped", (c("dropped", "chunk_0001"),)),
        Sample("cli-rotate", (c("rotate"), c("rotate"))),
        w(
            "cli-crash-demo",
            c(
                "demo",
                "--no-tui",
                "--scenario",
                "crash",
                "--memory-dir",
                "./crash",
                stderr_first=True,
            ),
        ),
        w("cli-crash-status", c("--memory-dir", "./crash", "status", "--json")),
        w(
            "cli-crash-recall",
            c(
                "--memory-dir",
                "./crash",
                "recall",
                "background location",
                "--limit",
                "1",
                "--json",
                head=12,
            ),
        ),
        w("cli-crash-repair", c("--memory-dir", "./crash", "repair")),
        Sample("cli-repair-healthy", (c("repair"),)),
        w(
            "cli-import-plain",
            c(
                "--memory-dir",
                "./plain",
                "import",
                "--format",
                "mini-swe-agent",
                "mini_swe_agent.traj.json",
            ),
        ),
        w(
            "cli-import-replay",
            c(
                "--memory-dir",
                "./replayed",
                "--config",
                "small.yaml",
                "import",
                "--format",
                "pi",
                "pi_session.jsonl",
                "--replay",
            ),
        ),
        w(
            "cli-import-broken",
            c("--memory-dir", "./nothing", "import", "--format", "pi", "broken.jsonl"),
        ),
        w(
            "cli-import-detect",
            c(
                "--memory-dir",
                "./cc",
                "import",
                "claude_code_session.jsonl",
                "--replay",
                stderr_first=True,
            ),
            c("--memory-dir", "./x", "import", "--format", "pi", "codex_rollout.jsonl"),
        ),
        w("cli-follow", c("--memory-dir", "./watch", "follow", "codex_rollout.jsonl", follow=True)),
        w("cli-error-no-root", c("--memory-dir", "./nowhere", "status")),
        w(
            "cli-error-bad-line",
            c(
                "--memory-dir",
                "./crash",
                "append",
                "-",
                stdin=WORKDIR_FILES["bad.jsonl"],
                shown="--memory-dir ./crash append - < bad.jsonl",
            ),
        ),
        w(
            "cli-error-bad-config",
            c("--memory-dir", "./crash", "--config", "bad.yaml", "status"),
        ),
        w("cli-error-no-query", c("recall")),
    ),
}

_MARKER = re.compile(r"^<!-- sample: ([A-Za-z0-9_-]+) -->\n```console\n(.*?)^```$", re.M | re.S)

_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ev_[0-9a-f]{32}"), "ev_…"),
    (re.compile(r"s-\d{8}T\d{6}Z-[0-9a-f]{6}"), "s-…"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"), "…Z"),
    (re.compile(r"\d+ ms\b"), "N ms"),
    # JSON fractions: timings (`timings_ms`) differ on every run; scores are masked with them.
    (re.compile(r'("[a-z_]+": )\d+\.\d+'), r"\1N"),
    (re.compile(r"session-inspector-demo-[A-Za-z0-9_]+"), "session-inspector-demo-x"),
    (re.compile(r"pending-\d{8}T\d+Z-[0-9a-f]{6}"), "pending-…"),
    (re.compile(r"\b\d\d:\d\d:\d\d\.\d{3}\b"), "HH:MM:SS.mmm"),
    (re.compile(r"\bc[0-9a-f]{12}\b"), "c…"),  # a model call's id in the prompt ledger
    # A timing's width moves a table's columns: compare the words, not the padding.
    (re.compile(r"─+"), "─"),
    (re.compile(r" +$", re.M), ""),
    (re.compile(r" {2,}"), " "),
)


def normalized(text: str) -> str:
    """`text` with what differs between runs masked (ids, session ids, times, timings)."""
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return text


def _env(tmp: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SESSION_MEMORY_DIR", "SESSION_INSPECTOR_CONFIG", "NO_COLOR", "COLUMNS")
    }
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env["PYTHONIOENCODING"] = "utf-8"
    env["TMPDIR"] = str(tmp)
    return env


def _run(
    args: Sequence[str], env: dict[str, str], stdin: str | None = None, cwd: Path = REPO
) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "inspector", *args],
        cwd=cwd,
        env=env,
        input=stdin or "",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def _demo_root(env: dict[str, str]) -> tuple[Path, str]:
    """The fresh demo root, and what the demo printed (its stderr lines first, as a terminal
    shows them: they come before the play)."""
    code, out, err = _run(DEMO, env)
    if code != 0:
        raise RuntimeError(f"the demo failed: {err}")
    first = err.splitlines()[0]
    return Path(first.split("demo memory root: ", 1)[1].strip()), err + out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(args: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    """A server on a free port for a moment; its stderr with the port shown as the default."""
    port = _free_port()
    _code, _out, err = _run([*args, "--port", str(port), "--stop-after", "1"], env, cwd=cwd)
    if "serving the inspector on " not in err:
        raise RuntimeError(f"serve did not start: {err}")
    # How it ended is ours (the stop), not the sample's: a busy machine may stop it mid-start.
    return 0, "", err.split("\n", 1)[0].replace(f":{port} ", ":8000 ") + "\n"


def _events(root: Path) -> int:
    path = root / "session" / "events.jsonl"
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def _follow(args: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    """`follow` until the root holds what `import --replay` makes of the log, then SIGINT."""
    root, log = cwd / args[args.index("--memory-dir") + 1], args[-1]
    with tempfile.TemporaryDirectory(prefix="follow-expected-", dir=cwd) as scratch:
        _run(["--memory-dir", scratch, "import", log, "--replay"], env, cwd=cwd)
        expected = _events(Path(scratch))
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    deadline = time.monotonic() + 120
    while _events(root) < expected and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    if _events(root) < expected:
        raise RuntimeError(f"follow stored {_events(root)} of {expected} events: {err}")
    return proc.returncode, "", err + "^C\n" + out


def _block(sample: Sample, root: Path, env: dict[str, str], demo: str, workdir: Path) -> str:
    env = {**env, "SESSION_MEMORY_DIR": str(root)}
    cwd = workdir if sample.workdir else REPO
    lines: list[str] = []
    for command in sample.commands:
        shown = command.shown or shlex.join(command.args)
        lines.append(f"$ {PROG} {shown}")
        if command.args == DEMO:
            code, out, err = 0, demo, ""
        elif command.serve:
            code, out, err = _serve(command.args, env, cwd)
        elif command.follow:
            code, out, err = _follow(command.args, env, cwd)
        else:
            code, out, err = _run(command.args, env, command.stdin, cwd)
        text = (err + out if command.stderr_first else out + err).replace(str(root), SHOWN_ROOT)
        text = text.replace(str(workdir), SHOWN_WORKDIR).rstrip("\n")
        output = text.split("\n") if text else []
        if command.head is not None and len(output) > command.head:
            output = [*output[: command.head], "…"]
        lines.extend(output)
        if code:
            lines.append(f"[exit {code}]")
    return "\n".join(lines) + "\n"


def generate(doc: str) -> dict[str, str]:
    """Every sample of `doc` (a path relative to the repository), run on a fresh demo root."""
    with tempfile.TemporaryDirectory(prefix="docs-samples-") as tmp:
        env = _env(Path(tmp))
        root, demo = _demo_root(env)
        workdir = Path(tmp) / "agent"
        workdir.mkdir()
        (workdir / "memory").symlink_to(root, target_is_directory=True)
        for transcript in TRANSCRIPTS.iterdir():
            (workdir / transcript.name).write_bytes(transcript.read_bytes())
        for name, content in WORKDIR_FILES.items():
            (workdir / name).write_text(content, encoding="utf-8")
        return {sample.name: _block(sample, root, env, demo, workdir) for sample in DOCS[doc]}


def rewrite(text: str, blocks: dict[str, str]) -> str:
    """`text` with each marked block's body replaced by its sample (unknown names kept)."""

    def replace(match: re.Match[str]) -> str:
        body = blocks.get(match.group(1), match.group(2))
        return f"<!-- sample: {match.group(1)} -->\n```console\n{body}```"

    return _MARKER.sub(replace, text)


def marked(text: str) -> dict[str, str]:
    """The bodies of the marked blocks in a doc, by name."""
    return {m.group(1): m.group(2) for m in _MARKER.finditer(text)}


_CONSOLE = re.compile(r"^```console$", re.M)


def unmarked(text: str) -> list[int]:
    """The line numbers of ```console blocks in `text` without a sample marker above them."""
    lines = text.split("\n")
    return [
        text.count("\n", 0, m.start()) + 1
        for m in _CONSOLE.finditer(text)
        if not lines[text.count("\n", 0, m.start()) - 1].startswith("<!-- sample: ")
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inspector.cli.docs_samples")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the samples in the docs")
    mode.add_argument("--check", action="store_true", help="exit 1 when a sample differs")
    args = parser.parse_args(argv)
    status = 0
    for doc in DOCS:
        path = REPO / doc
        text = path.read_text(encoding="utf-8")
        blocks = generate(doc)
        missing = set(blocks) - set(marked(text))
        if missing:
            sys.stderr.write(f"{doc}: no marker for {', '.join(sorted(missing))}\n")
            status = 1
        new = rewrite(text, blocks)
        if args.write:
            if new != text:
                path.write_text(new, encoding="utf-8")
                sys.stdout.write(f"rewrote the samples of {doc}\n")
        elif normalized(new) != normalized(text):
            sys.stdout.writelines(
                difflib.unified_diff(
                    normalized(text).splitlines(True), normalized(new).splitlines(True), doc, doc
                )
            )
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
