"""The command line of contract §12: `session-inspector` / `python -m inspector`.

Other tools script against this interface, so it is deliberately boring: argparse, one
subcommand per operation, global options before or after the command name, one JSON document
on stdout with `--json`, exit 0 / 1 / 2, and errors as a single `error: …` line on stderr.

Textual is imported only by the two commands that open the TUI (`tui`, `demo`), so every
other command starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from core.errors import BadInputError, SessionMemoryError
from inspector.safe_text import visible

if TYPE_CHECKING:
    from rich.console import Console

    from core.config import CompactionConfig
    from core.manager import MemoryManager
    from inspector.cli import output as _output
    from inspector.cli import timeline_output as _timeline_output

PROG = "session-inspector"
ENV_MEMORY_DIR = "SESSION_MEMORY_DIR"
DEFAULT_MEMORY_DIR = "memory"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class UsageError(BadInputError):
    """The command line itself is wrong (argparse): exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with errors raised (not printed) so they leave as one `error:` line."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")

    def format_help(self) -> str:
        """The demo's scenario list is filled in only when help is shown: building it imports
        the scenarios, which every other command would pay for at start-up."""
        if self.description and _SCENARIOS_PLACEHOLDER in self.description:
            self.description = self.description.replace(_SCENARIOS_PLACEHOLDER, _scenario_help())
        return super().format_help()


_R = TypeVar("_R")

_SCENARIOS_PLACEHOLDER = "\x00scenarios\x00"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PROG)
    except PackageNotFoundError:
        return "(not installed)"


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


def _did_you_mean(parser: argparse.ArgumentParser, argv: Sequence[str], message: str) -> str:
    """`message` with a "did you mean" for a misspelt option (`--memroy-dir`) or command
    (`stauts`), found with difflib among the parser's own names."""
    import difflib

    options: set[str] = set()
    commands: list[str] = []
    stack = [parser]
    while stack:
        current = stack.pop()
        for action in current._actions:
            options.update(o for o in action.option_strings if o.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                commands = list(action.choices)
                stack.extend(action.choices.values())
    for token in argv:
        if token == "--":
            break
        name = token.split("=", 1)[0]
        if name.startswith("--") and name not in options:
            close = difflib.get_close_matches(name, sorted(options), n=1, cutoff=0.7)
            if close:
                return f"unknown option {name}: did you mean {close[0]}? (see `{PROG} --help`)"
    match = _INVALID_CHOICE.search(message)
    if match:
        choices = [c.strip().strip("'") for c in match.group(2).split(",")]
        close = difflib.get_close_matches(match.group(1), choices or commands, n=1, cutoff=0.6)
        if close:
            head = message.split(" (see `", 1)[0]
            return f"{head}: did you mean {close[0]!r}? (see `{PROG} --help`)"
    return message


class _LazyNames(Sequence[str]):
    """argparse `choices` read from a module only when a command or its help needs them, so
    `status` does not import the demo scenarios or the transcript importers to start."""

    def __init__(self, module: str, attribute: str) -> None:
        self._where = (module, attribute)
        self._names: list[str] | None = None

    def _load(self) -> list[str]:
        if self._names is None:
            module = importlib.import_module(self._where[0])
            self._names = list(getattr(module, self._where[1]))
        return self._names

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        return self._load()[index]

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, value: object) -> bool:
        return value in self._load()


class _LazyModule:
    """A module imported when one of its names is first read: the renderers import Rich, which
    a `--json` answer never needs. Typed as the module itself (see TYPE_CHECKING above)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)


if not TYPE_CHECKING:
    _output = _LazyModule("inspector.cli.output")
    _timeline_output = _LazyModule("inspector.cli.timeline_output")


def _add_format(p: argparse.ArgumentParser, what: str, formats: _LazyNames) -> None:
    """The `--format` option of a command that reads an agent's transcript."""
    p.add_argument(
        "--format",
        default=None,
        choices=formats,
        metavar="FORMAT",
        help=f"the {what}'s format: %(choices)s (default: detected)",
    )


def _scenario_help() -> str:
    """One line per demo scenario: its name and what it shows."""
    import textwrap

    from inspector.demo.scenarios import DEFAULT_SCENARIO, SCENARIOS

    lines = []
    for name, scenario in SCENARIOS.items():
        default = " (default)" if name == DEFAULT_SCENARIO else ""
        lines.append(
            textwrap.fill(
                f"{name}{default}: {scenario.description}",
                width=84,
                initial_indent="  ",
                subsequent_indent="      ",
            )
        )
    return "\n".join(lines)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


def _global_options(suppress: bool) -> _Parser:
    """--memory-dir/--config/--json/--debug for the main parser and (suppressed) each command.

    On the subcommand copies the defaults are SUPPRESS, so a value given before the command
    name is not overwritten by the subparser's default.
    """
    parent = _Parser(add_help=False)

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    group = parent.add_argument_group("global options")
    group.add_argument(
        "--memory-dir",
        metavar="M",
        default=default(None),
        help=f"memory root (default: ${ENV_MEMORY_DIR}, else ./{DEFAULT_MEMORY_DIR})",
    )
    group.add_argument(
        "--config",
        metavar="PATH",
        default=default(None),
        help="extraction.yaml (default: $SESSION_INSPECTOR_CONFIG, else "
        "M/../config/memory/extraction.yaml when it exists, else built-in defaults)",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="print one JSON document on stdout instead of the human view",
    )
    group.add_argument(
        "--debug",
        action="store_true",
        default=default(False),
        help="show a traceback on an internal error",
    )
    return parent


_MAX_FIGURE = 10**12
"""Largest count or token figure an option takes (as core.config's _MAX_COUNT)."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer ≥ 0, got {value}")
    if value > _MAX_FIGURE:
        # A figure that large is a typo, and stored it would overflow every later estimate.
        raise argparse.ArgumentTypeError(
            f"expected an integer ≤ {_MAX_FIGURE:,}, got one of {len(str(value))} digits"
        )
    return value


def _port(text: str) -> int:
    value = _positive_int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {value}")
    return value


def _limit(text: str) -> int:
    with contextlib.suppress(ValueError):
        if int(text) < 1:  # checked first: "≥ 0" for -1 would promise what 0 then refuses
            raise argparse.ArgumentTypeError(f"expected an integer ≥ 1, got {int(text)}")
    return _positive_int(text)


def _speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number ≥ 0, got {text}")
    return value


EXIT_CODES = """\
exit status: 0 done; 1 the operation failed (lock timeout, I/O, unreadable index);
2 bad input (usage, configuration, event, no memory at the memory root)."""

MAIN_DESCRIPTION = f"""\
Inspect and operate an LLM agent's session memory (hot window, chunks, summaries).

Without a command, opens the TUI on the memory root.

examples:
  {PROG} demo                          # watch compaction happen on a fresh demo session
  {PROG} --memory-dir ./memory status  # the session at a glance
  {PROG} plan --json                   # what a pass would do now, changing nothing

{EXIT_CODES}"""

_READ_NOTE = "A memory root that does not exist is bad input (exit 2)."


def _commands() -> list[tuple[str, str, str]]:
    """(name, one-line help, description with an example) of every command."""
    return [
        (
            "tui",
            "open the TUI (the default command)",
            f"Open the Textual inspector on the memory root.\n\nexample:\n"
            f"  {PROG} tui --memory-dir ./memory --read-only\n\n{_READ_NOTE}",
        ),
        (
            "demo",
            "play a scripted agent into a fresh memory root, then open the TUI",
            "Create a demo memory root (a fresh folder it names, unless --memory-dir gives a\n"
            "new or empty one), play a scripted device agent into it with the real runtime API,\n"
            "and open the TUI on it. Small thresholds make compactions happen within a minute.\n"
            "The fresh folder is session-inspector-demo-*/memory in the system's temporary\n"
            "folder ($TMPDIR, else /tmp); it is removed when the TUI quits unless --keep\n"
            "(with --no-tui it is kept, to look around; a --memory-dir is never removed).\n"
            f"\nscenarios (--scenario):\n{_SCENARIOS_PLACEHOLDER}\n\n"
            "examples:\n"
            f"  {PROG} demo\n"
            f"  {PROG} demo --scenario cjk --no-tui --json\n",
        ),
        (
            "serve",
            "serve the TUI to a web browser (textual-serve), on 127.0.0.1 by default",
            "Serve the inspector on the memory root to a web browser, for a room without a\n"
            "terminal: each browser tab runs its own `tui` on the root. Bound to 127.0.0.1\n"
            "unless --host says otherwise (anyone who can reach the port can drive it).\n\n"
            "example:\n"
            f"  {PROG} serve --memory-dir ./memory --port 8000 --read-only\n\n{_READ_NOTE}",
        ),
        (
            "status",
            "the session at a glance",
            f"Show the active session: events, tokens, trigger, chunks, pending evidence,\n"
            f"corrupt lines and archived sessions.\n\nexample:\n"
            f"  {PROG} status --memory-dir ./memory --json\n\n{_READ_NOTE}",
        ),
        (
            "append",
            "append events (flags, or JSON lines on stdin with -)",
            "Append one event given by flags, or many given as JSON objects one a line on\n"
            "stdin (`-`; blank lines skipped). A malformed line rejects the whole batch and\n"
            "nothing is written. Creates the memory root and session when missing.\n\n"
            "examples:\n"
            f"  {PROG} append --type user_input --text 'turn on Wi-Fi'\n"
            f'  printf \'%s\\n\' \'{{"type":"assistant_output","content":"done"}}\' '
            f"| {PROG} append - --prompt-tokens 5200 --maintain\n",
        ),
        (
            "plan",
            "what a pass would do now, changing nothing",
            f"Show the trigger decision and where a pass would cut, with the explanation:\n"
            f"candidate indexes, snaps, leading context, the pinned root and a split turn.\n\n"
            f"example:\n  {PROG} plan --prompt-tokens 110000 --model gpt-4o\n\n{_READ_NOTE}",
        ),
        (
            "compact",
            "run one maintenance pass now",
            "Run one maintenance pass synchronously. Another pass running (in any process)\n"
            "gives compacted false with reason busy and exit 0.\n\n"
            "example:\n"
            f"  {PROG} compact --force --focus 'keep file paths'\n",
        ),
        (
            "rotate",
            "close the active session into session_archive/",
            f"Move the active session to session_archive/<session_id> and start an empty one.\n\n"
            f"example:\n  {PROG} rotate --json\n",
        ),
        (
            "recall",
            "search compacted history (the active session; archives too with --all-sessions)",
            f"Search indexed chunks (source active) and pending evidence (source pending) of\n"
            f"the active session; archived sessions too with --all-sessions (each result then\n"
            f"names its session_id and says `source: archived`). The hot window is not\n"
            f"searched: it is already in the prompt.\n\nexample:\n"
            f"  {PROG} recall 'crash log' --limit 3\n"
            f"  {PROG} recall apply_fix.py --all-sessions --json\n\n{_READ_NOTE}",
        ),
        (
            "prompt",
            "the messages a model would get now, or got at a past call (--at)",
            f"Assemble the prompt: one system message (system prompt + summary.md), the hot\n"
            f"window as native chat messages, then the task. With --at CALL: the prompt the\n"
            f"model got at that call of the prompt ledger (1 the first, -1 the latest, or a\n"
            f"call id), rebuilt byte for byte, with each part's tokens and the provider's\n"
            f"figure.\n\nexamples:\n"
            f"  {PROG} prompt --system 'You are a device agent.' --task 'continue' --json\n"
            f"  {PROG} prompt --at 57\n\n"
            f"{_READ_NOTE}",
        ),
        (
            "timeline",
            "every model call and pass of the session, from the prompt ledger",
            f"One row per model call (its prompt's parts, the provider's figure) and per pass\n"
            f"(the prompt before it, predicted and measured after it, trigger, path, cut, split\n"
            f"turn, headroom moves, summarizer, duration); a pass that did not make the prompt\n"
            f"smaller is flagged.\n\nexample:\n  {PROG} timeline --json\n\n{_READ_NOTE}",
        ),
        (
            "dropped",
            "what a pass dropped: the facts of its chunk nothing after it carries",
            f"The file paths, identifiers, numbers with units, error lines and the user's\n"
            f"constraints in CHUNK that neither summary.md nor the hot window held after its\n"
            f"pass, grouped and ranked.\n\nexample:\n  {PROG} dropped chunk_0003 --json\n\n"
            f"{_READ_NOTE}",
        ),
        (
            "repair",
            "rebuild the index, consume pending evidence, quarantine corrupt lines",
            f"Finish or undo what a crashed pass left, rebuild chunks/index.yaml from the chunk\n"
            f"files when it cannot be read, and move unparsable lines to corrupt.jsonl.\n\n"
            f"example:\n  {PROG} repair --json\n",
        ),
        (
            "import",
            "write a real agent's transcript into the memory root (optionally replayed)",
            "Read a transcript (pi session JSONL, an OpenAI chat-completions message list, a\n"
            "mini-swe-agent trajectory, a Claude Code session or a Codex rollout) and append its\n"
            "events to the active session; without --format the format is detected (and named\n"
            "on stderr). With\n"
            "--replay, play it call by call as the agent ran: the trigger runs a pass before\n"
            "each model call and the log's prompt sizes are recorded (see docs/REPLAY.md).\n"
            "The whole file is checked first: a bad line is exit 2 and nothing is written.\n"
            "Creates the memory root and session when missing.\n\n"
            "examples:\n"
            f"  {PROG} import --format pi ~/.pi/agent/sessions/--src-app--/2026-11-28_x.jsonl\n"
            f"  {PROG} --memory-dir ./replayed import --format mini-swe-agent run.traj.json "
            "--replay --json\n",
        ),
        (
            "follow",
            "tail a live agent log (Claude Code, Codex, pi) and replay it into the memory root",
            "Watch an agent's session log as it is written and replay each new line into the\n"
            "memory root as `import --replay` would (passes before model calls, prompt sizes\n"
            "recorded), so `tui` on the root shows what compaction would do to the session\n"
            "running now. Partial last lines wait for their end; a truncated or replaced log\n"
            "closes the session and is read again from its start; the agent's own compactions\n"
            "are kept as marked system events. Never writes to the log. Stops on Ctrl-C,\n"
            "SIGTERM or q + Enter, after the line in hand (see docs/REPLAY.md).\n\n"
            "examples:\n"
            f"  {PROG} --memory-dir ./watch follow ~/.claude/projects/-src-app/<session>.jsonl\n"
            f"  {PROG} tui --follow ~/.codex/sessions/2026/12/01/rollout-x.jsonl "
            "--memory-dir ./watch\n",
        ),
    ]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=MAIN_DESCRIPTION,
        formatter_class=_Formatter,
        parents=[_global_options(suppress=False)],
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    parser.add_argument(
        "--read-only", action="store_true", default=False, help="TUI: never change the files"
    )
    parser.add_argument(
        "--poll", action="store_true", default=False, help="TUI: poll files instead of watching"
    )
    parser.add_argument(
        "--reveal-secrets",
        action="store_true",
        default=False,
        help="TUI: show API keys, tokens and passwords in events unmasked",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = _global_options(suppress=True)
    parsers: dict[str, argparse.ArgumentParser] = {}
    for name, short, description in _commands():
        parsers[name] = sub.add_parser(
            name,
            help=short,
            description=description + "\n" + EXIT_CODES,
            formatter_class=_Formatter,
            parents=[common],
        )

    p = parsers["tui"]
    p.add_argument("--read-only", action="store_true", default=argparse.SUPPRESS)
    p.add_argument(
        "--follow", metavar="FILE", help="follow this agent log into the root (see `follow`)"
    )
    p.add_argument("--format", metavar="FORMAT", help="--follow: the log's format")
    p.add_argument("--poll", action="store_true", default=argparse.SUPPRESS)
    p.add_argument("--reveal-secrets", action="store_true", default=argparse.SUPPRESS)

    from inspector.cli.serve import DEFAULT_HOST, DEFAULT_PORT

    p = parsers["serve"]
    p.add_argument(
        "--host", default=DEFAULT_HOST, help="address to bind (default %(default)s: this machine)"
    )
    p.add_argument("--port", type=_port, default=DEFAULT_PORT, help="(default %(default)s)")
    # SUPPRESS: given before the command name (as for `tui`), the global flag stays.
    p.add_argument(
        "--read-only",
        action="store_true",
        default=argparse.SUPPRESS,
        help="the served TUI never writes",
    )
    p.add_argument(
        "--poll",
        action="store_true",
        default=argparse.SUPPRESS,
        help="poll files instead of watching",
    )
    p.add_argument("--stop-after", type=_speed, default=None, help=argparse.SUPPRESS)

    p = parsers["demo"]
    p.add_argument(
        "--scenario",
        choices=_LazyNames("inspector.demo.scenarios", "SCENARIOS"),
        default=None,
        metavar="NAME",
        help="one of: %(choices)s (default tour; listed above)",
    )
    p.add_argument(
        "--no-tui", action="store_true", help="play to the end and exit (the root is kept)"
    )
    p.add_argument(
        "--keep",
        action="store_true",
        help="keep the fresh temporary root after the TUI quits (default: removed)",
    )
    p.add_argument(
        "--speed",
        type=_speed,
        default=None,
        metavar="X",
        help="steps per second (0: as fast as possible; default 0 with --no-tui, "
        "a watchable pace in the TUI)",
    )
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--events", type=_limit, default=None, help=argparse.SUPPRESS)

    p = parsers["append"]
    p.add_argument("stdin", nargs="?", choices=["-"], help="read JSON events from stdin")
    p.add_argument("--type", dest="etype", metavar="T", help="event type, e.g. user_input")
    p.add_argument("--text", metavar="S", help="event content")
    p.add_argument("--role", metavar="R", help="event role (default: by type)")
    p.add_argument("--name", metavar="N", help="tool name")
    p.add_argument("--tool-call-id", metavar="ID", help="tool_call_id")
    p.add_argument("--prompt-tokens", type=_positive_int, metavar="N", help="record a prompt size")
    p.add_argument("--model", metavar="NAME", help="record the active model")
    p.add_argument("--maintain", action="store_true", help="run a pass after appending")

    p = parsers["plan"]
    p.add_argument(
        "--prompt-tokens", type=_positive_int, metavar="N", help="what if the prompt were N"
    )
    p.add_argument("--model", metavar="NAME", help="what if this model were active")

    p = parsers["compact"]
    p.add_argument("--force", action="store_true", help="skip the trigger (still needs a cut)")
    p.add_argument("--prompt-tokens", type=_positive_int, metavar="N", help="prompt size")
    p.add_argument("--focus", metavar="TEXT", help="instructions for every summary call")

    p = parsers["recall"]
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--limit", type=_limit, default=5, metavar="N", help="(default 5)")
    p.add_argument(
        "--all-sessions",
        action="store_true",
        help="search archived sessions too; each result names its session",
    )

    from inspector.defaults import DEFAULT_SYSTEM_PROMPT, DEFAULT_TASK

    p = parsers["prompt"]
    p.add_argument(
        "--system",
        metavar="S",
        help=f"the system prompt (default, as the TUI's Prompt tab: {DEFAULT_SYSTEM_PROMPT!r})",
    )
    p.add_argument(
        "--task",
        metavar="T",
        help=f"the current task (default, as the TUI's Prompt tab: {DEFAULT_TASK!r})",
    )
    p.add_argument("--at", metavar="CALL", help="a past call: its number (-1: the latest) or id")

    p = parsers["dropped"]
    p.add_argument("chunk", metavar="CHUNK", help="a chunk id of the active session")

    p = parsers["import"]
    p.add_argument("file", metavar="FILE", help="the transcript to read (- for stdin)")
    _add_format(p, "transcript", _LazyNames("core.transcripts.importers", "FORMATS"))
    p.add_argument(
        "--replay",
        action="store_true",
        help="append call by call with passes and prompt sizes, as the agent ran",
    )
    p.add_argument(
        "--follow",
        action="store_true",
        help="keep reading the log as the agent writes it (the same as the follow command)",
    )

    p = parsers["follow"]
    p.add_argument("file", metavar="FILE", help="the agent's log")
    _add_format(p, "log", _LazyNames("core.transcripts.follow", "FOLLOW_FORMATS"))
    return parser


# --- context shared by the commands --------------------------------------------------------


class Context:
    """Resolved global options plus the output streams (so tests can call main() in-process)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.json: bool = bool(getattr(args, "json", False))
        self.debug: bool = bool(getattr(args, "debug", False))
        self._console: Console | None = None

    @property
    def memory_dir_given(self) -> bool:
        return bool(getattr(self.args, "memory_dir", None))

    @property
    def memory_dir(self) -> Path:
        given = getattr(self.args, "memory_dir", None) or os.environ.get(ENV_MEMORY_DIR)
        return Path(given or DEFAULT_MEMORY_DIR).expanduser().absolute()

    def config(self) -> CompactionConfig:
        from core.config import load_config

        loaded = load_config(getattr(self.args, "config", None), self.memory_dir)
        for warning in loaded.warnings:
            warn(warning)
        return loaded.config

    def require_memory(self) -> Path:
        """Reading commands need an existing memory root (a typo should not look empty)."""
        root = self.memory_dir
        if not root.is_dir():
            source = "--memory-dir" if self.memory_dir_given else None
            if source is None:
                source = f"${ENV_MEMORY_DIR}" if os.environ.get(ENV_MEMORY_DIR) else "the default"
            raise BadInputError(
                f"no memory at {root} (from {source}): give the memory root with --memory-dir "
                f"or ${ENV_MEMORY_DIR}, or make one with `{PROG} demo` or `{PROG} append`"
            )
        return root

    def manager(self, *, read_only: bool, create: bool = False) -> MemoryManager:
        from core.manager import MemoryManager

        root = self.memory_dir if create else self.require_memory()
        config = self.config()
        return MemoryManager(root, config, read_only=read_only)

    @property
    def console(self) -> Console:
        if self._console is None:
            from inspector.cli.output import make_console

            self._console = make_console()
        return self._console

    def reply(
        self, data: Callable[[], dict[str, Any]], root: Path, render: Callable[[], None]
    ) -> int:
        """A command's answer, then EXIT_OK: `data()` as JSON (with `memory_dir`: `root`) under
        --json, else `render()` for a person."""
        if self.json:
            self.emit_json(_with_memory_dir(data(), root))
        else:
            render()
        return EXIT_OK

    def emit_json(self, data: dict[str, Any]) -> None:
        encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
        text = json.dumps(data, ensure_ascii=encoding != "utf8", indent=2, default=_json_default)
        sys.stdout.write(_escape_terminal_controls(text) + "\n")
        sys.stdout.flush()


_TERMINAL_CONTROLS = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\u200b\u180e\u2060-\u2064\ufeff\U000e0000-\U000e007f\ud800-\udfff]"
)


def _escape_terminal_controls(text: str) -> str:
    """C1 controls and bidi overrides as \\uXXXX escapes: still the same JSON value, but
    nothing that a terminal would act on when the document is printed (json.dumps already
    escapes C0 controls)."""
    return _TERMINAL_CONTROLS.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    """`\\uXXXX`, as a UTF-16 surrogate pair beyond the BMP (tag characters)."""
    code = ord(match.group(0))
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _json_default(value: object) -> Any:
    if isinstance(value, Path):
        return str(value)
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def warn(message: str) -> None:
    sys.stderr.write(f"warning: {visible(message, keep_newlines=False)}\n")
    sys.stderr.flush()


def _error_line(message: str) -> str:
    return "error: " + visible(message, keep_newlines=False)


def _with_memory_dir(data: dict[str, Any], root: Path) -> dict[str, Any]:
    data.setdefault("memory_dir", str(root))
    return data


# --- commands -------------------------------------------------------------------------------


def cmd_status(ctx: Context) -> int:
    manager = ctx.manager(read_only=True)
    status = manager.status()
    return ctx.reply(
        status.to_json,
        manager.memory_dir,
        lambda: _output.render_status(ctx.console, status, manager),
    )


def _read_stdin_events(stream: Any) -> list[dict[str, Any]]:
    """Every line parsed and validated before anything is written (all or nothing)."""
    from core.events import validate_event

    events: list[dict[str, Any]] = []
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        where = f"stdin line {number}"
        try:
            obj = json.loads(line.rstrip("\r\n"))
        except json.JSONDecodeError as exc:
            raise BadInputError(
                f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); nothing was written"
            ) from None
        except (ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise BadInputError(
                f"{where}: not valid JSON ({reason}); nothing was written"
            ) from None
        try:
            events.append(validate_event(obj, where))
        except BadInputError as exc:
            raise type(exc)(f"{exc}; nothing was written") from None
    return events


def cmd_append(ctx: Context) -> int:
    args = ctx.args
    from_stdin = args.stdin == "-"
    flag_event = args.etype is not None or args.text is not None
    if from_stdin and (flag_event or args.role or args.name or args.tool_call_id):
        raise UsageError("append: give either - (JSON lines on stdin) or --type/--text, not both")
    records = args.prompt_tokens is not None or args.model is not None
    events: list[dict[str, Any]] = []
    if from_stdin:
        from core.events import default_role

        events = _read_stdin_events(sys.stdin)
        for event in events:  # the same role defaults as --type (make_event)
            if event.get("role") in (None, "") and isinstance(event.get("type"), str):
                event["role"] = default_role(event["type"])
    elif flag_event:
        if args.etype is None:
            raise UsageError("append: --text needs --type (e.g. --type user_input)")
        if args.text is None:
            raise UsageError("append: --type needs --text")
        from core.events import make_event, validate_event

        event = make_event(
            args.etype, args.text, role=args.role, name=args.name, tool_call_id=args.tool_call_id
        )
        events = [validate_event(event, "the event given by flags")]
    elif not records:
        raise UsageError(
            "append: nothing to append: give --type T --text S, or - to read JSON lines on stdin"
        )

    manager = _creating_manager(ctx)
    try:
        for warning in append_warnings(events, manager):
            warn(warning)
        stored = manager.append_many(events, where="stdin" if from_stdin else "flags")
        try:
            if records:
                _record(manager, args.prompt_tokens, args.model)
            maintenance = manager.save() if args.maintain else None
        except SessionMemoryError as exc:
            if not stored:
                raise
            # The events are stored: say so, or a retry would append them twice.
            raise SessionMemoryError(
                f"appended {len(stored)} event(s) (stored: do not append them again), "
                f"but then: {exc}"
            ) from exc
    finally:
        manager.close()
    for warning in manager.store.warnings:
        warn(warning)
    if ctx.json:
        data: dict[str, Any] = {"events": stored}
        if maintenance is not None:
            data["maintenance"] = maintenance.to_json()
        ctx.emit_json(_with_memory_dir(data, manager.memory_dir))
        return EXIT_OK
    from inspector.cli.output import render_append, render_pass

    render_append(ctx.console, stored, manager.memory_dir, args.prompt_tokens, args.model)
    if maintenance is not None:
        render_pass(ctx.console, maintenance)
    return EXIT_OK


def _creating_manager(ctx: Context) -> MemoryManager:
    """A manager for a command that creates the memory root when missing, saying so on stderr
    when it does (a typo'd --memory-dir would otherwise silently start a second root)."""
    existed = ctx.memory_dir.exists()
    manager = ctx.manager(read_only=False, create=True)
    if not existed:
        where = visible(str(ctx.memory_dir), keep_newlines=False)
        sys.stderr.write(f"note: created a new memory root at {where}\n")
        sys.stderr.flush()
    return manager


def append_warnings(events: Sequence[dict[str, Any]], manager: MemoryManager) -> list[str]:
    """What `import` would refuse but `append` stores as given (contract §2: any type is an
    event): an unknown type, and a tool_result with no earlier tool_call of its id (in the hot
    window or earlier in the batch)."""
    from core.events import KNOWN_TYPES, cut_class

    out: list[str] = []
    for event in events:
        etype = event.get("type")
        if isinstance(etype, str) and etype not in KNOWN_TYPES:
            out.append(
                f"unknown event type {etype!r} (known: {', '.join(KNOWN_TYPES)}); stored as "
                f"given, its cut class taken from its role ({cut_class(event).value})"
            )
    if not any(e.get("type") == "tool_result" for e in events):
        return out
    calls: set[str] = set()
    try:
        hot = list(manager.store.read_events().events)
    except SessionMemoryError:
        hot = []
    for number, event in enumerate([*hot, *events]):
        call_id = event.get("tool_call_id")
        if event.get("type") == "tool_call" and isinstance(call_id, str):
            calls.add(call_id)
        if number >= len(hot) and event.get("type") == "tool_result":
            if not isinstance(call_id, str) or not call_id:
                out.append("a tool_result without a tool_call_id: no call can be paired with it")
            elif call_id not in calls:
                out.append(
                    f"a tool_result for {call_id!r}, but no earlier tool_call in the hot window "
                    "has that id (`import` refuses such a result)"
                )
    return out


def _record(manager: MemoryManager, prompt_tokens: int | None, model: str | None) -> None:
    if prompt_tokens is not None:
        manager.record_prompt_tokens(prompt_tokens, model)
    elif model is not None:
        manager.store.set_state(model=model)


def cmd_plan(ctx: Context) -> int:
    manager = ctx.manager(read_only=True)
    report = manager.plan(prompt_tokens=ctx.args.prompt_tokens, model=ctx.args.model)
    return ctx.reply(
        report.to_json, manager.memory_dir, lambda: _output.render_plan(ctx.console, report)
    )


def cmd_compact(ctx: Context) -> int:
    args = ctx.args
    manager = ctx.manager(read_only=False)
    try:
        result = manager.save(force=args.force, focus=args.focus, prompt_tokens=args.prompt_tokens)
    finally:
        manager.close()
    return ctx.reply(
        result.to_json, manager.memory_dir, lambda: _output.render_pass(ctx.console, result)
    )


def _with_writer(ctx: Context, action: Callable[[MemoryManager], _R]) -> tuple[_R, Path]:
    """(what `action` returned, the memory folder): `action` run on a writing manager, closed
    after it whatever happens, then the store's warnings printed."""
    manager = ctx.manager(read_only=False)
    try:
        result = action(manager)
    finally:
        manager.close()
    for warning in manager.store.warnings:
        warn(warning)
    return result, manager.memory_dir


def cmd_rotate(ctx: Context) -> int:
    result, memory_dir = _with_writer(ctx, lambda manager: manager.rotate())
    return ctx.reply(
        result.to_json, memory_dir, lambda: _output.render_rotation(ctx.console, result)
    )


def cmd_recall(ctx: Context) -> int:
    if not str(ctx.args.query).strip():
        raise UsageError("recall: give words to search for, e.g. recall 'crash log'")
    manager = ctx.manager(read_only=True)
    result = manager.recall(
        ctx.args.query, limit=ctx.args.limit, all_sessions=ctx.args.all_sessions
    )
    for warning in manager.recall_warnings:
        warn(warning)
    return ctx.reply(
        result.to_json,
        manager.memory_dir,
        lambda: _output.render_recall(ctx.console, ctx.args.query, result),
    )


def cmd_prompt(ctx: Context) -> int:
    if ctx.args.at is not None:
        return cmd_prompt_at(ctx)
    from inspector.defaults import DEFAULT_SYSTEM_PROMPT, DEFAULT_TASK

    system = DEFAULT_SYSTEM_PROMPT if ctx.args.system is None else ctx.args.system
    task = DEFAULT_TASK if ctx.args.task is None else ctx.args.task
    manager = ctx.manager(read_only=True)
    messages = manager.build_prompt(system, task)
    return ctx.reply(
        lambda: {"messages": messages},
        manager.memory_dir,
        lambda: _output.render_prompt(ctx.console, messages),
    )


def cmd_prompt_at(ctx: Context) -> int:
    from core.timeline import rebuild_call

    if ctx.args.system is not None or ctx.args.task is not None:
        raise UsageError("prompt --at CALL rebuilds a past prompt: leave out --system and --task")
    from core.store.paths import MemoryPaths

    root = ctx.require_memory()  # no manager: a cold rebuild reads the ledger and a few files
    rebuilt = rebuild_call(MemoryPaths(root), str(ctx.args.at))
    return ctx.reply(
        rebuilt.to_json, root, lambda: _timeline_output.render_rebuilt(ctx.console, rebuilt)
    )


def cmd_timeline(ctx: Context) -> int:
    from core.timeline import build_timeline

    manager = ctx.manager(read_only=True)
    timeline = build_timeline(manager.paths, manager.config, manager.session_model())
    return ctx.reply(
        timeline.to_json,
        manager.memory_dir,
        lambda: _timeline_output.render_timeline(ctx.console, timeline),
    )


def cmd_dropped(ctx: Context) -> int:
    from core.timeline import dropped_for_chunk

    manager = ctx.manager(read_only=True)
    report = dropped_for_chunk(manager.paths, str(ctx.args.chunk))
    return ctx.reply(
        report.to_json,
        manager.memory_dir,
        lambda: _timeline_output.render_dropped(ctx.console, report),
    )


def cmd_repair(ctx: Context) -> int:
    repaired, memory_dir = _with_writer(ctx, lambda manager: manager.repair())
    return ctx.reply(
        lambda: {"repaired": repaired},
        memory_dir,
        lambda: _output.render_repair(ctx.console, repaired),
    )


def cmd_import(ctx: Context) -> int:
    """Parse the whole transcript before the memory root is touched (all or nothing)."""
    from core.transcripts.detect import decode_any, load_any
    from core.transcripts.importers import read_capped
    from core.transcripts.replay import import_transcript, replay
    from inspector.cli.output import plural

    args = ctx.args
    if args.follow:
        return cmd_follow(ctx)
    if args.file == "-":  # stdin, as `append -` reads it
        raw = read_capped(sys.stdin.buffer, "stdin")
        transcript, detected = decode_any(raw, args.format, "stdin")
    else:
        transcript, detected = load_any(Path(args.file), args.format)
    if detected:
        sys.stderr.write(f"note: format {transcript.format} (detected; give --format to choose)\n")
    for message in transcript.warnings:
        warn(message)
    manager = _creating_manager(ctx)
    try:
        existing = manager.store.read_events().event_count
        if existing:
            warn(
                f"the active session of {manager.memory_dir} already holds "
                f"{plural(existing, 'event')}; "
                "the transcript's events go after them"
            )
        stats = (
            replay(transcript, manager) if args.replay else import_transcript(transcript, manager)
        )
    finally:
        manager.close()
    data: dict[str, Any] = {
        "format": transcript.format,
        "source": transcript.source,
        "replay": bool(args.replay),
        **stats.to_json(),
    }
    if ctx.json:
        ctx.emit_json(_with_memory_dir(data, manager.memory_dir))
        return EXIT_OK
    how = "replayed" if args.replay else "imported"
    lines = [
        f"{how} {plural(stats.events_appended, 'event')} of "
        f"{plural(stats.calls, 'model call')} from "
        f"{visible(transcript.source, keep_newlines=False)} ({transcript.format}) into "
        f"{visible(str(manager.memory_dir), keep_newlines=False)}",
        f"prompt sizes recorded: {stats.prompt_sizes_recorded}",
    ]
    if args.replay:
        lines.append(
            f"passes: {stats.passes} ({stats.token_triggered} by tokens, "
            f"{stats.count_triggered} by count), compactions: {stats.compactions}"
        )
        if stats.provider_ratio is not None:
            lines.append(
                f"the log's prompt sizes ≈ {stats.provider_fixed} + {stats.provider_ratio} × "
                "our estimate (sizes recorded after a compaction use this)"
            )
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _run_app_or_fail() -> Callable[..., Any]:
    """inspector.tui.launch.run_app, imported only now (Textual is slow to import)."""
    import importlib.util

    if importlib.util.find_spec("inspector.tui.launch") is None:
        raise SessionMemoryError("the TUI is not available yet")
    from inspector.tui.launch import run_app

    return run_app


def cmd_tui(ctx: Context) -> int:
    follow = getattr(ctx.args, "follow", None)
    if follow:
        from inspector.cli.follow import FollowThread, make_follower

        manager = ctx.manager(read_only=False, create=True)
        follower = make_follower(Path(follow), manager, ctx.args.format)  # readable?
        manager.store.ensure_session()  # the TUI opens the root before the first line
        worker = FollowThread(follower)
        worker.start()
    root = ctx.require_memory()
    config = ctx.config()
    run_app = _run_app_or_fail()
    try:
        result = run_app(
            root,
            read_only=bool(getattr(ctx.args, "read_only", False)),
            poll=bool(getattr(ctx.args, "poll", False)),
            config=config,
            demo=None,
            reveal_secrets=bool(getattr(ctx.args, "reveal_secrets", False)),
        )
    finally:
        if follow:
            worker.stop()
            manager.close()
    if follow and worker.error:
        raise BadInputError(worker.error)
    return result if isinstance(result, int) else EXIT_OK


def cmd_serve(ctx: Context) -> int:
    import importlib.util

    root = ctx.require_memory()
    ctx.config()  # a bad config is exit 2 here, not in every browser tab
    if importlib.util.find_spec("textual_serve") is None:
        raise SessionMemoryError(
            "serving needs textual-serve (pip install textual-serve), a dependency of the package"
        )
    from inspector.cli.serve import serve

    args = ctx.args
    serve(
        root,
        host=args.host,
        port=args.port,
        config=getattr(args, "config", None),
        read_only=bool(args.read_only),
        poll=bool(args.poll),
        stop_after=args.stop_after,
    )
    return EXIT_OK


def cmd_follow(ctx: Context) -> int:
    from inspector.cli.follow import run_follow

    manager = ctx.manager(read_only=False, create=True)
    try:
        data = run_follow(Path(ctx.args.file), manager, ctx.args.format)
    finally:
        manager.close()
    if ctx.json:
        ctx.emit_json(_with_memory_dir(data, manager.memory_dir))
    else:
        sys.stdout.write(
            f"followed {data['lines']} lines into {manager.memory_dir}: "
            f"{data['events_appended']} events, {data['calls']} model calls, "
            f"{data['compactions']} compactions, {data['source_compactions']} by the agent "
            f"itself, {data['restarts']} restarts\n"
        )
    return EXIT_OK


def _demo_root(ctx: Context) -> tuple[Path, bool]:
    """(memory root, fresh): an explicit --memory-dir must be new or empty."""
    if ctx.memory_dir_given:
        root = ctx.memory_dir
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise BadInputError(
                f"refusing to play the demo into {root}: it is not an empty folder "
                "(give a new or empty --memory-dir, or none for a fresh folder)"
            )
        root.mkdir(parents=True, exist_ok=True)
        return root, False
    import tempfile

    parent = Path(tempfile.mkdtemp(prefix="session-inspector-demo-"))
    root = parent / "memory"
    root.mkdir()
    return root, True


def cmd_demo(ctx: Context) -> int:
    from core.manager import MemoryManager
    from inspector.demo import DemoPlayer, demo_config, write_demo_config
    from inspector.demo.scenarios import DEFAULT_SCENARIO

    args = ctx.args
    if args.scenario is None:
        args.scenario = DEFAULT_SCENARIO
    if not args.no_tui:
        run_app = _run_app_or_fail()
    config = ctx.config() if getattr(args, "config", None) else demo_config()
    root, fresh = _demo_root(ctx)
    if fresh and not getattr(args, "config", None):
        write_demo_config(root.parent / "config" / "memory" / "extraction.yaml", config)
    sys.stderr.write(f"demo memory root: {visible(str(root), keep_newlines=False)}\n")
    if not fresh and not getattr(args, "config", None):
        # Not written beside a folder the user named: M/../config is every sibling root's too.
        sys.stderr.write(
            "note: the demo's small thresholds are not saved for a --memory-dir you give; "
            "later commands on it use the defaults unless given --config\n"
        )
    sys.stderr.flush()
    manager = MemoryManager(root, config)
    player = DemoPlayer(
        manager, args.scenario, seed=args.seed, events=args.events, speed=args.speed
    )
    if not args.no_tui:
        if ctx.json:
            ctx.emit_json({"memory_dir": str(root), "scenario": args.scenario})
        result = run_app(root, read_only=False, poll=False, config=config, demo=player)
        manager.close()
        if fresh and not args.keep:
            import shutil

            shutil.rmtree(root.parent, ignore_errors=True)
            sys.stderr.write(
                f"removed the demo root {visible(str(root), keep_newlines=False)} "
                "(give --keep to keep it)\n"
            )
        elif fresh:
            sys.stderr.write(f"kept the demo root: {visible(str(root), keep_newlines=False)}\n")
        return result if isinstance(result, int) else EXIT_OK

    from inspector.cli.output import demo_progress, render_demo

    show = None if ctx.json else demo_progress(ctx.console)
    try:
        stats = player.play(speed=args.speed or 0.0, on_step=show)
    finally:
        manager.close()
    if ctx.json:
        data = {"memory_dir": str(root), "scenario": args.scenario, **stats.to_json()}
        ctx.emit_json(data)
    else:
        render_demo(ctx.console, root, args.scenario, stats)
    return EXIT_OK


COMMANDS: dict[str, Callable[[Context], int]] = {
    "tui": cmd_tui,
    "demo": cmd_demo,
    "serve": cmd_serve,
    "status": cmd_status,
    "append": cmd_append,
    "plan": cmd_plan,
    "compact": cmd_compact,
    "rotate": cmd_rotate,
    "recall": cmd_recall,
    "prompt": cmd_prompt,
    "timeline": cmd_timeline,
    "dropped": cmd_dropped,
    "repair": cmd_repair,
    "import": cmd_import,
    "follow": cmd_follow,
}


def _print_traceback() -> None:
    import traceback

    traceback.print_exc()


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status (never raises, never prints a traceback)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(args_list)
        except SystemExit as exc:  # --help, --version
            return exc.code if isinstance(exc.code, int) else EXIT_OK
        except UsageError as exc:
            raise UsageError(_did_you_mean(parser, args_list, str(exc))) from None
        ctx = Context(args)
        command = args.command or "tui"
        return COMMANDS[command](ctx)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `plan | head`: the reader has what it wanted; that is not a failure.
        _silence_stdout()
        return EXIT_OK
    except SessionMemoryError as exc:
        if debug:
            _print_traceback()
        _print_error(str(exc))
        return int(getattr(exc, "exit_code", EXIT_FAILED))
    except OSError as exc:
        if debug:
            _print_traceback()
        where = f": {exc.filename}" if exc.filename else ""
        _print_error(f"{exc.strerror or exc}{where}")
        return EXIT_FAILED
    except Exception as exc:
        if debug:
            _print_traceback()
        _print_error(
            f"internal error: {type(exc).__name__}: {exc} (run with --debug for a traceback)"
        )
        return EXIT_FAILED


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _print_error(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    sys.stderr.write(_error_line(message) + "\n")
    sys.stderr.flush()
