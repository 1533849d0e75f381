"""The command-line samples in README.md and docs/CLI.md, produced from the deterministic demo
so they cannot drift from what the program prints.

    python -m inspector.cli.docs_samples --write     # run the commands, rewrite the samples
    python -m inspector.cli.docs_samples --check     # exit 1 (and a diff) when a sample differs

A sample is a ```console block right after a marker line `<!-- sample: NAME -->`; its text is
`$ session-inspector …` lines, each followed by what the command printed (stdout, then what it
wrote on stderr; `[exit N]` when it failed). Each doc's samples run in order on one fresh demo
root (`demo --no-tui` in a temporary folder, shown as /tmp/session-inspector-demo-x/memory),
so a later sample sees what an earlier one did. Ids, session ids, times and timings differ on
every run: `normalized()` masks them, and `tests/test_docs_samples.py` compares the docs with
a fresh run through it. Blocks without a marker are written by hand.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
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


@dataclass(frozen=True)
class Sample:
    name: str
    commands: tuple[Command, ...]


def c(
    *args: str, stdin: str | None = None, head: int | None = None, shown: str | None = None
) -> Command:
    return Command(tuple(args), stdin, head, shown)


DEMO = ("demo", "--no-tui")
"""The command every doc's samples start from; a sample that shows it shows that run."""

BATCH = (
    '{"type":"user_input","content":"Check the battery drain and turn off background location"}\n'
    '{"type":"tool_call","name":"shell","arguments":{"cmd":"dumpsys battery"},'
    '"tool_call_id":"call_b1"}\n'
    '{"type":"tool_result","name":"shell","tool_call_id":"call_b1","content":"level: 41"}\n'
)

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
        Sample("cli-rotate", (c("rotate"), c("rotate"))),
        Sample("cli-repair-healthy", (c("repair"),)),
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
    args: Sequence[str], env: dict[str, str], stdin: str | None = None
) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "inspector", *args],
        cwd=REPO,
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


def _block(sample: Sample, root: Path, env: dict[str, str], demo: str) -> str:
    env = {**env, "SESSION_MEMORY_DIR": str(root)}
    lines: list[str] = []
    for command in sample.commands:
        shown = command.shown or shlex.join(command.args)
        lines.append(f"$ {PROG} {shown}")
        if command.args == DEMO:
            code, out, err = 0, demo, ""
        else:
            code, out, err = _run(command.args, env, command.stdin)
        text = (out + err).replace(str(root), SHOWN_ROOT).rstrip("\n")
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
        return {sample.name: _block(sample, root, env, demo) for sample in DOCS[doc]}


def rewrite(text: str, blocks: dict[str, str]) -> str:
    """`text` with each marked block's body replaced by its sample (unknown names kept)."""

    def replace(match: re.Match[str]) -> str:
        body = blocks.get(match.group(1), match.group(2))
        return f"<!-- sample: {match.group(1)} -->\n```console\n{body}```"

    return _MARKER.sub(replace, text)


def marked(text: str) -> dict[str, str]:
    """The bodies of the marked blocks in a doc, by name."""
    return {m.group(1): m.group(2) for m in _MARKER.finditer(text)}


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
