"""Runs: what the user asked and what the agent did about it (pure; no I/O).

A *run* is a turn boundary (a `user_input`, or an event of unknown type with role `user`) and
every event after it until the next one. The summarizer writes one entry per run, the Rolling
Summary folds one line per run, and the TUI and the quality benchmark read the same analysis,
so all three agree on what a run "did".

Public API (kept small on purpose):

- `split_runs(events) -> list[Run]`: the runs of a span, oldest first. A span that opens in the
  middle of a run gives a first `Run` with `continued=True`; its request comes from a synthetic
  split-turn event or an earlier summary inside the span when there is one (carried once,
  flattened: their labels are never copied), else it is "".
- `Run`: `request`, `continued`, `edits`, `commands`, `reads`, `others`, `outcome`, `error`,
  `actions` (`Action(kind, tool, targets, error, pending)`), `said` (the user's and agent's own
  words), `used` (tool-call arguments as text).
- `classify_tool(name, arguments) -> (kind, targets)`: "edit" (writes, edits, creates, with their
  paths), "command" (shell commands), "read" (reads, listings, searches) or "other".
- `extract_identifiers(text) -> list[str]`: paths, file names, URLs, error names, dotted /
  snake_case / CamelCase names, issue ids; noise (coordinates, hashes, bare numbers) is left out.
- `said_and_used_identifiers(events)`: only the user's and agent's words and tool-call
  argument values (the "said/used" identifiers the quality figures count).
- `ranked_identifiers(events) -> list[str]`: identifiers the user and agent said or used first
  (their words, then tool-call arguments), then those read out of tool results (import lines of
  file contents skipped).
- `is_summary_event(event)`, `flatten_summary(text) -> Carried`: recognise a synthetic
  split-turn event or an earlier summary, and read its request and actions back.

Event text is untrusted: it is only copied (control characters removed), never evaluated.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from core.events import KNOWN_TYPES, Event, is_synthetic
from core.text import clean_text, collapse_whitespace, compact_json, event_text

ActionKind = Literal["edit", "command", "read", "other"]

TEXT_READ_CHARS = 8000
"""Event text is read up to this many characters (a pasted log stays cheap)."""
RESULT_READ_CHARS = 2000
"""Tool results are read up to this many characters."""

# Labels of the summary layout (core.summarizer writes them, core.compaction.summaries reads them
# back).
REQUEST_LABEL = "Request:"
CONTINUED_LABEL = "Continued:"
EDITED_LABEL = "edited:"
RAN_LABEL = "ran:"
READ_LABEL = "read:"
TOOLS_LABEL = "tools:"
OUTCOME_LABEL = "outcome:"
ERROR_LABEL = "error:"
NAMES_LABEL = "names:"
"""A run's key identifiers (what its request names, what the agent said and used)."""
ORIGINAL_REQUEST_LABEL = "Original request:"
SPLIT_TURN_MARKER = "Turn Context (split turn):"
ROOT_REQUEST_PLACEHOLDER = "(the first request, kept verbatim at the top of the hot window)"
"""A split turn's request when the turn's user_input is the pinned root (never in a chunk)."""
EARLIER_REQUEST_PLACEHOLDER = "(begun before this range)"
"""A history run whose request is neither in its span nor carried by a synthetic event."""

HISTORY_SECTIONS = (
    "Goal",
    "Constraints & Preferences",
    "Progress",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
)
"""A chunk summary's sections, in order (design: chunk summary layout); each is a `Name:` line."""
TURN_PREFIX_SECTIONS = ("Original request", "Early progress", "Context for the retained suffix")
"""A split turn's prefix summary's sections (contract §5); the first is ORIGINAL_REQUEST_LABEL."""
SUMMARY_LABELS = (
    *(f"{name}:" for name in HISTORY_SECTIONS),
    *(f"{name}:" for name in TURN_PREFIX_SECTIONS),
    SPLIT_TURN_MARKER,
)
"""Every label line a summary of ours may hold: the one list is_summary_text and the quality
benchmark's noise check read."""
_SUMMARY_LABELS = (
    *SUMMARY_LABELS,
    "# Session History",
    "## Rolling Summary",
    "## Recent Chunks",
)


def etype(event: Event) -> str | None:
    value = event.get("type")
    return value if isinstance(value, str) else None


_KNOWN = frozenset(KNOWN_TYPES)


def is_request(event: Event) -> bool:
    """A turn boundary: `user_input`, or an unknown type with role `user`."""
    kind = etype(event)
    return kind == "user_input" or (kind not in _KNOWN and event.get("role") == "user")


def is_assistant_text(event: Event) -> bool:
    kind = etype(event)
    return kind in ("assistant_output", "role_output") or (
        kind not in _KNOWN and event.get("role") == "assistant"
    )


# --------------------------------------------------------------------------- tool calls

_EDIT_RE = re.compile(
    r"write|edit|creat|patch|replace|insert|append|modif|update|save|renam|move|delet|remov|"
    r"mkdir|touch|apply|multi_?edit|str_replace",
    re.IGNORECASE,
)
_COMMAND_RE = re.compile(
    r"^(?:bash|shell|sh|zsh|exec|execute|run|run_?command|run_?shell|terminal|cmd|command|"
    r"powershell|local_shell|container\.exec|run_?terminal_?cmd|execute_?command)$",
    re.IGNORECASE,
)
_COMMAND_HINT_RE = re.compile(r"bash|shell|exec|run|terminal|command|script", re.IGNORECASE)
_READ_RE = re.compile(
    r"read|view|cat|open|^ls$|list|grep|find|glob|search|lookup|show|get_?file|head|tail|"
    r"inspect|fetch|browse",
    re.IGNORECASE,
)
_PATH_KEYS = (
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "target",
    "target_file",
    "target_path",
    "dest",
    "destination",
    "new_path",
    "old_path",
    "source",
    "src",
    "dir",
    "directory",
    "notebook_path",
)
_PATHS_KEYS = ("paths", "files", "file_paths", "targets")
_COMMAND_KEYS = ("command", "cmd", "script", "commands", "code", "input")
_PATCH_KEYS = ("patch", "diff", "input", "content")
_PATCH_HEADER_RE = re.compile(
    r"^(?:\*\*\* (?:Update|Add|Delete) File: (.+)|\+\+\+ (?:b/)?(\S+)|--- (?:a/)?(\S+)"
    r"|\*\*\* Move to: (.+))\s*$",
    re.MULTILINE,
)
_READ_COMMANDS = frozenset({"view", "read", "cat", "open", "show", "list", "ls"})


def parse_arguments(args: Any) -> Any:
    """Tool-call arguments as an object when they are a JSON object string."""
    if isinstance(args, str):
        stripped = args.strip()
        if stripped.startswith("{"):
            try:
                return json.loads(stripped)
            except ValueError:
                return args
    return args


def call_arguments(event: Event) -> Any:
    """A tool call's arguments (`arguments`, else an object `content`), parsed."""
    args = event.get("arguments")
    if args is None and isinstance(event.get("content"), dict):
        args = event["content"]
    return parse_arguments(args)


def tool_name(event: Event) -> str:
    name = event.get("name")
    return collapse_whitespace(name)[:60] if isinstance(name, str) and name.strip() else "tool"


def _add(items: list[str], item: str, cap: int = 1_000) -> None:
    if item and item not in items and len(items) < cap:
        items.append(item)


def _clean_path(value: str) -> str:
    path = collapse_whitespace(value).strip("\"'`")
    if not path or len(path) > 300 or path in ("/dev/null", "."):
        return ""
    return path


def _paths_from(args: Any) -> list[str]:
    out: list[str] = []
    if not isinstance(args, dict):
        return out
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            _add(out, _clean_path(value))
    for key in _PATHS_KEYS:
        value = args.get(key)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    _add(out, _clean_path(item))
                elif isinstance(item, dict):
                    for sub in _paths_from(item):
                        _add(out, sub)
    for key in _PATCH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and ("*** " in value or "+++ " in value):
            for path in patch_paths(value):
                _add(out, path)
    edits = args.get("edits")
    if isinstance(edits, list):
        for item in edits:
            for sub in _paths_from(item):
                _add(out, sub)
    return out


def patch_paths(text: str) -> list[str]:
    """File paths named in unified-diff or apply_patch headers."""
    out: list[str] = []
    for match in _PATCH_HEADER_RE.finditer(text[: TEXT_READ_CHARS * 4]):
        path = next((g for g in match.groups() if g), "")
        _add(out, _clean_path(path))
    return out


def raw_command(args: Any) -> str:
    """A shell tool call's command as written (lines kept), "" when it has none."""
    if isinstance(args, str):
        return args
    if isinstance(args, dict):
        for key in _COMMAND_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return value
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                return " ".join(value)
    return ""


def _command_of(args: Any) -> str:
    """A command on one line; a heredoc's body is left out (`cat <<'EOF' > f.py …(12 lines)`):
    it is a file's content, not the command."""
    raw = raw_command(args)
    if "<<" in raw and "\n" in raw:
        kept, _bodies = _strip_heredocs(raw)
        total = raw.count("\n")
        if kept.count("\n") < total:
            shown = " ; ".join(ln.strip() for ln in kept.split("\n") if ln.strip())
            return collapse_whitespace(f"{shown} …({total} lines)")
    return collapse_whitespace(raw)


_HEREDOC_RE = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")
_REDIRECTS = frozenset({">", ">>", "&>", "&>>", ">|", "1>", "1>>"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
_PATCH_COMMAND_RE = re.compile(r"apply_patch|\*\*\* Begin Patch|\bgit apply\b|\bpatch\b")


def _strip_heredocs(command: str) -> tuple[str, str]:
    """(the command's lines without heredoc bodies, the bodies)."""
    kept: list[str] = []
    bodies: list[str] = []
    lines = command.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        kept.append(line)
        i += 1
        for match in _HEREDOC_RE.finditer(line):
            end = match.group(2)
            while i < len(lines) and lines[i].strip() != end:
                bodies.append(lines[i])
                i += 1
            i += 1  # the terminator
    return "\n".join(kept), "\n".join(bodies)


def _lex(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def _shell_words(text: str) -> list[str]:
    """Words and operators of a shell text (quotes honoured, `#` comments left out), each line
    ending with `;`. The whole text is read at once when a quote spans lines; a line that does
    not parse (an unclosed quote) gives nothing: the shell would refuse it too."""
    text = text.replace("\\\n", " ")
    words: list[str] = []
    for line in text.split("\n"):
        try:
            words.extend([*_lex(line), ";"])
        except ValueError:
            try:
                return _lex(text.replace("\n", " ; "))
            except ValueError:
                return []
    return words


_NOT_A_FILE_CHARS = frozenset("*?$`{}|\"'()<>;\n\t\\")
_SED_SCRIPT_RE = re.compile(r"^[sy]([|/#,:@!]).*\1.*\1[gipIeEmM0-9w]*$")


def _shell_target(word: str) -> str:
    """A word as a written file, or "" (devices, fds, variables, globs, options, scripts)."""
    if not word or word.startswith(("-", "&", "/dev/", "$", "`")) or word in ("/dev/null",):
        return ""
    if any(c in _NOT_A_FILE_CHARS for c in word) or _SED_SCRIPT_RE.match(word):
        return ""
    return _clean_path(word)


def _copy_targets(files: list[str]) -> list[str]:
    """What `cp`/`mv`/`install`/`ln` write: the target, or in a target directory (a trailing
    `/`, `.`, several sources, or a name without an extension given a source with one) each
    source's name; sources that are globs or directories (no extension) are not expanded."""
    *sources, target = files
    base = posixpath.basename(target.rstrip("/"))
    named = [src for src in sources if "." in posixpath.basename(src).strip(".")]
    is_dir = (
        target.endswith("/")
        or target in (".", "..")
        or len(sources) > 1
        or ("." not in base.strip(".") and bool(named) and not base[:1].isupper())
    )
    if not is_dir:
        return [target]
    out: list[str] = []
    for src in named:
        name = posixpath.basename(src)
        if not any(c in _NOT_A_FILE_CHARS for c in name):
            out.append(posixpath.normpath(posixpath.join(target, name)))
    return out


def _sed_in_place(word: str) -> bool:
    return word.startswith("--in-place") or bool(re.fullmatch(r"-[a-zA-Z]*i\S*", word))


def _sed_files(args: list[str]) -> list[str]:
    """The files of `sed -i …`: its operands after the script (the first operand, unless a
    script came with -e/-f)."""
    operands: list[str] = []
    script_given = False
    i = 0
    while i < len(args):
        word = args[i]
        if word == "-i" and i + 1 < len(args) and (args[i + 1] == "" or args[i + 1][:1] == "."):
            i += 2  # BSD sed: `-i ''` or `-i .bak`, the backup suffix as its own word
            continue
        if not word:
            i += 1
            continue
        if word in ("-e", "-f", "--expression", "--file"):
            script_given = True
            i += 2
            continue
        if word.startswith(("--expression=", "--file=")):
            script_given = True
        elif not word.startswith("-"):
            operands.append(word)
        i += 1
    return operands if script_given else operands[1:]


_STDERR_REDIRECT_RE = re.compile(r"(?<![\w>&])2>>?\s*(?:&\d|[^\s;&|]+)")


def _resolve(path: str, cwd: str | None) -> str:
    """path joined to a `cd` directory of the same command (an absolute path stays)."""
    if not cwd or path.startswith(("/", "~")):
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def shell_edit_paths(command: str, cwd: str | None = None) -> list[str]:
    """Files a shell command writes: `>`/`>>`/`&>` redirects, `tee`, `sed -i`, `touch`, the
    target of `cp`/`mv`/`install`, heredocs (`cat > f <<EOF`), and apply_patch or diff
    envelopes in its text (`*** Update File: …`). A relative path is resolved against a `cd`
    earlier in the same command (and `cwd`, the directory it runs in, when given). Devices
    (`/dev/null`), fd duplications (`2>&1`), variables and globs are not files."""
    out: list[str] = []
    text, bodies = _strip_heredocs(command[: TEXT_READ_CHARS * 4])
    if _PATCH_COMMAND_RE.search(command[:TEXT_READ_CHARS]):
        for path in patch_paths(bodies or text):
            _add(out, _resolve(path, cwd))
    words = _shell_words(_STDERR_REDIRECT_RE.sub(" ", text))
    here = cwd
    segment: list[str] = []
    for word in [*words, ";"]:
        if word in _SEPARATORS:
            here = _segment_edits(segment, here, out)
            segment = []
        else:
            segment.append(word)
    return out


def _segment_edits(words: list[str], cwd: str | None, out: list[str]) -> str | None:
    """The files one simple command writes (added to out); returns the directory after it
    (changed by `cd DIR`)."""
    if not words:
        return cwd
    args: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _REDIRECTS or (word in (">", ">>") and i + 1 < len(words)):
            if i + 1 < len(words):
                target = _shell_target(words[i + 1])
                if target:
                    _add(out, _resolve(target, cwd))
            i += 2
            continue
        if word in (">&", "<", "<<", "<<<", "<&", "<>"):
            i += 2
            continue
        args.append(word)
        i += 1
    # A digit just before a redirect (`2>`, `2>>`) is its fd, not an argument.
    while args and args[-1].isdigit():
        args.pop()
    if not args:
        return cwd
    program = posixpath.basename(args[0])
    rest = args[1:]
    if program == "sudo" and rest:
        program, rest = posixpath.basename(rest[0]), rest[1:]
    if program == "cd":
        target = rest[0] if rest else ""
        if not target or target.startswith(("-", "~", "$")):
            return None
        return _resolve(target, cwd) if cwd else target
    files = [w for w in rest if not w.startswith("-")]
    targets: list[str] = []
    if program == "tee" or program == "touch":
        targets = files
    elif program == "sed" and any(_sed_in_place(w) for w in rest):
        targets = _sed_files(rest)
    elif program in ("cp", "mv", "install", "ln") and len(files) >= 2:
        targets = _copy_targets(files)
    for target in targets:
        cleaned = _shell_target(target)
        if cleaned:
            _add(out, _resolve(cleaned, cwd))
    return cwd


def classify_tool(name: str, arguments: Any) -> tuple[ActionKind, tuple[str, ...]]:
    """What a tool call did: ("edit", paths), ("command", (command,)), ("read", paths or
    query) or ("other", argument summary). Judged by the tool's name and its arguments."""
    args = parse_arguments(arguments)
    paths = _paths_from(args)
    sub = args.get("command") if isinstance(args, dict) else None
    if isinstance(sub, str) and sub.strip().lower() in _READ_COMMANDS and paths:
        return "read", tuple(paths)
    if _COMMAND_RE.match(name.strip()):
        command = _command_of(args)
        if command:
            return "command", (command,)
    if _EDIT_RE.search(name) and paths:
        return "edit", tuple(paths)
    if isinstance(args, dict) and not paths:
        for key in _PATCH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and _EDIT_RE.search(name):
                found = patch_paths(value)
                if found:
                    return "edit", tuple(found)
    if isinstance(args, str) and _EDIT_RE.search(name):
        found = patch_paths(args)
        if found:
            return "edit", tuple(found)
    if _READ_RE.search(name):
        if paths:
            return "read", tuple(paths)
        query = ""
        if isinstance(args, dict):
            for key in ("pattern", "query", "url", "q", "regex", "glob"):
                value = args.get(key)
                if isinstance(value, str) and value.strip():
                    query = collapse_whitespace(value)
                    break
        return "read", (query,) if query else ()
    if _COMMAND_HINT_RE.search(name) or (
        isinstance(args, dict) and any(k in args for k in ("command", "cmd"))
    ):
        command = _command_of(args)
        if command:
            return "command", (command,)
    if paths:
        return "other", tuple(paths)
    return "other", ()


# --------------------------------------------------------------------------- results

_ERROR_TEXT_RE = re.compile(
    r"^\s*(?:error|traceback|exception|fatal|failed|panic)\b|Traceback \(most recent call last\)"
    r"|\b\w*(?:Error|Exception):",
    re.IGNORECASE,
)
_ERROR_NAME_RE = re.compile(r"\b\w*(?:Error|Exception)\b")


def result_error(event: Event) -> str | None:
    """The error a tool result reports (one line), or None when it did not fail."""
    text = event_text(event.get("content"))[:RESULT_READ_CHARS]
    meta = event.get("meta")
    content = event.get("content")
    failed = isinstance(meta, dict) and bool(meta.get("error") or meta.get("is_error"))
    if isinstance(content, dict):
        if content.get("error") or content.get("is_error") or content.get("ok") is False:
            failed = True
        status = content.get("status")
        if isinstance(status, str) and status.lower() in ("error", "failed", "failure"):
            failed = True
        if isinstance(content.get("error"), str | dict):
            return collapse_whitespace(event_text(content["error"]))[:160] or "error"
    if not failed and not _ERROR_TEXT_RE.search(text[:400]):
        return None
    lines = [ln.strip() for ln in clean_text(text).split("\n") if ln.strip()]
    for line in reversed(lines):
        if _ERROR_NAME_RE.search(line):
            return collapse_whitespace(line)[:160]
    return collapse_whitespace(lines[0])[:160] if lines else "error"


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class Action:
    """One tool call: its kind, the tool's name, its targets (paths, or the command)."""

    kind: ActionKind
    tool: str
    targets: tuple[str, ...]
    error: str | None = None
    pending: bool = False


@dataclass
class Run:
    """One request and what followed it inside a span."""

    request: str = ""
    """The request, one line, cleaned, whole (callers shorten it)."""
    continued: bool = False
    """The run began before the span (its user_input is in an earlier chunk or pinned)."""
    carried: bool = False
    """Request or actions were read back from a synthetic event or an earlier summary."""
    start: int = 0
    end: int = 0
    request_event_id: str | None = None
    actions: list[Action] = field(default_factory=list)
    carried_edits: list[str] = field(default_factory=list)
    carried_commands: list[str] = field(default_factory=list)
    carried_reads: list[str] = field(default_factory=list)
    outcome: str = ""
    """The last assistant text of the run (one line), "" when none."""
    error: str | None = None
    """The last error, when the run ended on one (no successful result after it)."""
    said: list[str] = field(default_factory=list)
    """The user's and the agent's own words (cleaned, not flattened)."""
    used: list[str] = field(default_factory=list)
    """Tool-call argument values as text (keys left out), one entry a call."""
    pending: list[str] = field(default_factory=list)
    """Tool calls (name(args)) whose result is not in the span."""
    context: list[str] = field(default_factory=list)
    """System and screen events of the run, one line each (`(screen) …`, `(system) …`)."""
    cwd: str | None = None
    """The working directory the run's events name (`meta.cwd`), when one is known; its
    paths are written relative to it."""

    def _targets(self, kind: ActionKind, carried: list[str]) -> list[str]:
        out: list[str] = []
        for item in carried:
            _add(out, item)
        for action in self.actions:
            if action.kind == kind:
                for target in action.targets:
                    _add(out, target)
        return out

    @property
    def edits(self) -> list[str]:
        """Paths written, edited or created, whole, as the agent wrote them, first-seen order."""
        return self._targets("edit", self.carried_edits)

    @property
    def commands(self) -> list[str]:
        return self._targets("command", self.carried_commands)

    @property
    def reads(self) -> list[str]:
        return self._targets("read", self.carried_reads)

    @property
    def others(self) -> list[str]:
        """Names of other tools used (and of tools called without a target), first-seen order."""
        out: list[str] = []
        for action in self.actions:
            if action.kind == "other" or not action.targets:
                _add(out, action.tool)
        return out


def _results(events: Sequence[Event]) -> dict[str, Event]:
    out: dict[str, Event] = {}
    for event in events:
        call_id = event.get("tool_call_id")
        if etype(event) == "tool_result" and isinstance(call_id, str):
            out.setdefault(call_id, event)
    return out


def split_runs(events: Sequence[Event]) -> list[Run]:
    """The runs of a span, oldest first (see the module docstring)."""
    runs: list[Run] = []
    results = _results(events)
    called: set[str] = set()
    current: Run | None = None
    cwd: str | None = None
    for index, event in enumerate(events):
        cwd = event_cwd(event) or cwd
        if is_request(event):
            current = _request_run(event, index)
            current.cwd = cwd
            runs.append(current)
        elif is_summary_event(event):
            current = _carry_summary(runs, current, event, index)
        else:
            if current is None:
                current = Run(continued=True, start=index, end=index + 1)
                runs.append(current)
            current.cwd = cwd or current.cwd
            current.end = index + 1
            _add_event(current, event, results, called)
    return runs


def _request_run(event: Event, index: int) -> Run:
    """A request opens a run of its own."""
    text = clean_text(event_text(event.get("content"))[:TEXT_READ_CHARS])
    run = Run(continued=False, start=index, end=index + 1)
    run.request = collapse_whitespace(text)
    eid = event.get("id")
    run.request_event_id = eid if isinstance(eid, str) else None
    if text.strip():
        run.said.append(text)
    return run


def _carry_summary(runs: list[Run], current: Run | None, event: Event, index: int) -> Run:
    """An earlier summary (or a synthetic event) is carried, never re-summarised: it joins the
    current run unless it names another request, and starts a continued run then (or when
    there is none)."""
    carried = flatten_summary(event_text(event.get("content"))[:TEXT_READ_CHARS])
    empty = current is not None and not (
        current.request or current.actions or current.outcome or current.carried
    )
    if current is None or (not empty and carried.request and carried.request != current.request):
        current = Run(continued=True, start=index, end=index + 1)
        runs.append(current)
    if carried.request:
        current.request = carried.request
    current.carried = True
    current.end = index + 1
    for path in carried.edits:
        _add(current.carried_edits, path)
    for command in carried.commands:
        _add(current.carried_commands, command)
    for path in carried.reads:
        _add(current.carried_reads, path)
    return current


def _add_event(run: Run, event: Event, results: dict[str, Event], called: set[str]) -> None:
    """What a tool call, a lone tool result, the agent's words or a context event add."""
    kind = etype(event)
    if kind == "tool_call":
        _add_call(run, event, results, called)
    elif kind == "tool_result":
        call_id = event.get("tool_call_id")
        if not (isinstance(call_id, str) and call_id in called):
            error = result_error(event)
            run.actions.append(Action("other", tool_name(event), (), error=error))
            run.error = error
    elif is_assistant_text(event):
        text = clean_text(event_text(event.get("content"))[:TEXT_READ_CHARS])
        if text.strip():
            run.said.append(text)
            run.outcome = collapse_whitespace(text)
    else:
        brief = collapse_whitespace(event_text(event.get("content"))[:400])[:120]
        if brief:
            label = "screen" if kind == "screen_context" else "system"
            run.context.append(f"({label}) {brief}")


def _add_call(run: Run, event: Event, results: dict[str, Event], called: set[str]) -> None:
    """A tool call becomes an action, with its result's error (or pending, without one)."""
    name = tool_name(event)
    args = call_arguments(event)
    action_kind, targets = classify_tool(name, args)
    workdir = _call_workdir(args) or run.cwd
    if action_kind in ("edit", "read"):
        targets = tuple(relative_path(t, run.cwd) for t in targets)
    shell_edits: tuple[str, ...] = ()
    if action_kind == "command" and targets:
        shell_edits = tuple(
            relative_path(_resolve(p, workdir), run.cwd)
            for p in shell_edit_paths(raw_command(args) or targets[0], None)
        )
    used = argument_text(args) if args is not None else ""
    if used:
        run.used.append(clean_text(used))
    call_id = event.get("tool_call_id")
    if isinstance(call_id, str):
        called.add(call_id)
    result = results.get(call_id) if isinstance(call_id, str) else None
    error = result_error(result) if result is not None else None
    if result is None:
        run.pending.append(f"{name}({_args_brief(args)})")
    run.actions.append(Action(action_kind, name, targets, error=error, pending=result is None))
    if shell_edits:
        run.actions.append(Action("edit", name, shell_edits, error=error, pending=result is None))
    if result is not None:
        run.error = error


def event_cwd(event: Event) -> str | None:
    """The absolute working directory an event names in `meta.cwd` (importers set it from the
    transcript's own record, e.g. a session header), else None."""
    meta = event.get("meta")
    value = meta.get("cwd") if isinstance(meta, dict) else None
    if isinstance(value, str) and value.startswith("/") and len(value) <= 300:
        return posixpath.normpath(collapse_whitespace(value))
    return None


def _call_workdir(args: Any) -> str | None:
    """The directory a tool call says it runs in (`workdir`, `cwd`), when absolute."""
    if isinstance(args, dict):
        for key in ("workdir", "cwd", "working_directory"):
            value = args.get(key)
            if isinstance(value, str) and value.startswith("/"):
                return posixpath.normpath(value)
    return None


def relative_path(path: str, cwd: str | None) -> str:
    """path relative to cwd when it lies under it (`/repo/src/a.py` → `src/a.py`), else as
    written."""
    if not cwd or not path.startswith("/"):
        return path
    root = cwd.rstrip("/")
    if path.startswith(root + "/") and len(path) > len(root) + 1:
        return path[len(root) + 1 :]
    return path


def _args_brief(args: Any, max_chars: int = 80) -> str:
    if isinstance(args, dict):
        text = ", ".join(
            f"{k}={v if isinstance(v, str) else compact_json(v)}" for k, v in args.items()
        )
    else:
        text = event_text(args)
    text = collapse_whitespace(text)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


# --------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class Carried:
    """What an earlier summary (or a synthetic split-turn event) says, labels stripped."""

    request: str = ""
    edits: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()


def is_summary_text(text: str) -> bool:
    """Whether text is one of our summaries (two or more of its label lines at line starts)."""
    starts = {line.strip() for line in text.split("\n")[:200]}
    hits = sum(1 for label in _SUMMARY_LABELS if label in starts)
    return hits >= 2 or any(line.startswith(SPLIT_TURN_MARKER) for line in starts)


def is_summary_event(event: Event) -> bool:
    """A synthetic split-turn event, or a system event that holds an earlier summary."""
    if is_synthetic(event):
        return True
    if etype(event) not in ("system_event", None) and event.get("role") != "system":
        return False
    content = event.get("content")
    return isinstance(content, str) and is_summary_text(content[:TEXT_READ_CHARS])


def _split_items(value: str) -> list[str]:
    return [item.strip() for item in value.split(", ") if item.strip() and item.strip() != "…"]


def _strip_more(value: str) -> str:
    return re.sub(r"\s*\(\+\d+ more\)$", "", value)


def flatten_summary(text: str) -> Carried:
    """The request and actions of an earlier summary, read back without its labels.

    The request is the run's own (the last `Original request:` of a split turn, else the last
    `Request:` / `Continued:` entry, else the first `Goal:` bullet); paths and commands come
    from `edited:` / `ran:` / `read:` lines.
    """
    lines = [line.strip() for line in clean_text(text).split("\n")]
    request = ""
    goal = ""
    edits: list[str] = []
    commands: list[str] = []
    reads: list[str] = []
    for i, line in enumerate(lines):
        body = line.removeprefix("- ").strip()
        if line == ORIGINAL_REQUEST_LABEL or line == "Goal:":
            nxt = next((ln for ln in lines[i + 1 :] if ln), "")
            value = nxt.removeprefix("- ").strip() if nxt.startswith("- ") else ""
            if line == ORIGINAL_REQUEST_LABEL:
                request = value if not value.startswith("(") else request
            elif not goal and not value.startswith("("):
                goal = value
        elif body.startswith((REQUEST_LABEL, CONTINUED_LABEL)):
            value = body.split(":", 1)[1].strip()
            if value and not value.startswith("("):
                request = value
        elif body.startswith(EDITED_LABEL):
            for item in _split_items(_strip_more(body[len(EDITED_LABEL) :])):
                _add(edits, item)
        elif body.startswith(RAN_LABEL):
            for item in body[len(RAN_LABEL) :].split(" · "):
                item = re.sub(r"\s*→ error: .*$", "", item).strip()
                if item and item != "…":
                    _add(commands, item)
        elif body.startswith(READ_LABEL):
            for item in _split_items(_strip_more(body[len(READ_LABEL) :])):
                _add(reads, item)
    if not request:
        request = goal
    if not request and not is_summary_text(text):
        first = next((ln for ln in lines if ln), "")
        request = collapse_whitespace(first)[:300]
    return Carried(request, tuple(edits), tuple(commands), tuple(reads))


# --------------------------------------------------------------------------- identifiers

_URL_RE = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_WIN_PATH_RE = re.compile(r"\b[A-Za-z]:\\[^\s\"'<>|]+")
_PATH_RE = re.compile(
    r"(?<![\w/.@-])(?:~|\.{1,2})?/?(?:[\w@.-]+/)+[\w.-]*\w"
    r"|(?<![\w/.-])[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|json|jsonl|yaml|yml|"
    r"md|txt|toml|cfg|ini|sh|go|rs|java|kt|c|h|cc|cpp|hpp|html|css|scss|log|csv|sql|xml|lock|"
    r"env|conf|rb|php|swift|vue|svelte|proto|ipynb|gradle|dart|lua|zig|ex|exs)\b"
)
_ERROR_NAME_ONLY_RE = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Fault|Warning)\b")
_IDENT_RE = re.compile(
    r"`([^`\n]{2,80})`"
    r"|(?<![\w.])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?(?![\w])"
    r"|\b([A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)\b"
    r"|\b([a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b"
    r"|(?<![\w&])(#[1-9]\d{0,6})\b(?![-.]\d)"
    r"|\b([A-Z][A-Z0-9]{1,9}-\d{1,7})\b"
)
_HASH_RE = re.compile(r"^(?=.*\d)(?=.*[a-f])[0-9a-f]{7,}$")
_NOISE_WORDS = frozenset({"e.g", "i.e", "etc", "vs", "a.m", "p.m"})
_IMPORT_LINE_RE = re.compile(
    r"^\s*(?:from\s+\S+\s+import\b|import\s+[\w.{*]|#include\b|use\s+\w+::|require\(|"
    r"const\s+\w+\s*=\s*require\()"
)


_QUOTED_PATH_RE = re.compile(
    r"([\"'`])((?:~|\.{1,2}|[A-Za-z]:)?/(?:[^\"'`\n/\\*:<>|]{1,80}/)+[^\"'`\n/\\*:<>|]{0,80}[\w.-]"
    r"|(?:[^\"'`\n/\\*:<>|\s][^\"'`\n/\\*:<>|]{0,80}/)+[^\"'`\n/\\*:<>|]{0,80}\.[A-Za-z0-9]{1,8})\1"
)
"""A quoted path with a space in it (`"/Users/Jo Smith/app/a.py"`): taken whole."""
_ESCAPED_SPACE_PATH_RE = re.compile(r"(?:~|\.{1,2})?/?(?:[\w@.-]|\\ )+(?:/(?:[\w@.-]|\\ )+)+")
_JSON_KEY_RE = re.compile(r"\"[\w.$@-]{1,80}\"\s*:")
"""A JSON key (`"user_id":`): the data's vocabulary, not a name of the work."""
_BACKTICK_OK_RE = re.compile(r"[\w~./@$-][^\s`]*")
_LONG_DIGITS_RE = re.compile(r"\d{5,}")
_UUID_RE = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def _noise(token: str) -> bool:
    if re.fullmatch(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})", token) and not (
        re.fullmatch(r"#[1-9]\d{0,4}", token)
    ):
        return True  # a colour (#282832, #00d7ff), not an issue number (#123)
    if re.fullmatch(r"#[1-9]\d*", token):
        return False
    if re.fullmatch(r"(?:/\*)?\.[A-Za-z0-9]{1,8}", token):
        return True  # a bare extension (.json, /*.json), not a file's name
    bare = token.strip("`")
    if not bare or bare.lower() in _NOISE_WORDS:
        return True
    if _HASH_RE.match(bare.lower()):
        return True
    if "/" not in bare and "." not in bare and _LONG_DIGITS_RE.search(bare):
        return True  # user and record ids (user_48213, U0248213), not names of the work
    if re.fullmatch(r"[\d.,:x×/ -]+", bare):  # numbers, coordinates, dates, sizes
        return True
    return bool(re.fullmatch(r"\d+(?:\.\d+)*[a-z]{0,3}", bare))


def extract_identifiers(text: str, *, limit: int = 200) -> list[str]:
    """Identifiers in text, first-seen order: URLs, paths and file names, error names, dotted,
    snake_case and CamelCase names, backticked names, issue ids (#123, ABC-123). Numbers,
    coordinates and hashes are noise and left out."""
    out: list[str] = []
    if not text:
        return out
    rest = _UUID_RE.sub(" ", _JSON_KEY_RE.sub(" ", clean_text(text)))
    for match in _URL_RE.finditer(rest):
        _add(out, match.group(0).rstrip(".,;:!?"), limit)
    rest = _URL_RE.sub(" ", rest)
    for match in _QUOTED_PATH_RE.finditer(rest):
        if " " in match.group(2):
            _add(out, match.group(2), limit)
    rest = _QUOTED_PATH_RE.sub(lambda m: " " if " " in m.group(2) else m.group(0), rest)
    for match in _ESCAPED_SPACE_PATH_RE.finditer(rest):
        if "\\ " in match.group(0):
            _add(out, match.group(0).rstrip(".,;:"), limit)
    rest = _ESCAPED_SPACE_PATH_RE.sub(lambda m: " " if "\\ " in m.group(0) else m.group(0), rest)
    for match in _WIN_PATH_RE.finditer(rest):
        _add(out, match.group(0).rstrip(".,;:"), limit)
    rest = _WIN_PATH_RE.sub(" ", rest)
    for match in _PATH_RE.finditer(rest):
        path = match.group(0).rstrip(".,;:")
        if ("/" in path or "." in path) and not _noise(path) and "//" not in path:
            _add(out, path, limit)
    rest = _PATH_RE.sub(" ", rest)
    for match in _ERROR_NAME_ONLY_RE.finditer(rest):
        _add(out, match.group(0), limit)
    for match in _IDENT_RE.finditer(rest):
        ident = next(g for g in match.groups() if g).strip()
        if match.group(1) is not None and not _BACKTICK_OK_RE.fullmatch(ident):
            continue  # a backticked phrase, or text between two unrelated backticks
        if not _noise(ident) and len(ident) >= 3:
            _add(out, ident, limit)
    return out


def argument_text(args: Any) -> str:
    """The values of tool-call arguments as text, keys left out (`oldText`, `path` are the
    tool's vocabulary, not the session's)."""
    parts: list[str] = []

    def walk(value: Any, depth: int) -> None:
        if depth > 6:
            return
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item, depth + 1)
        elif isinstance(value, list):
            for item in value:
                walk(item, depth + 1)

    walk(parse_arguments(args), 0)
    return _head_words("\n".join(parts), TEXT_READ_CHARS)


def _head_words(text: str, limit: int) -> str:
    """The first `limit` characters of text, without a word cut in two at the end (a name cut
    there would be read as a name of its own: `CouponExpir`)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if not text[limit].isspace():
        cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        head = head[:cut] if cut > 0 else ""
    return head


def _without_imports(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not _IMPORT_LINE_RE.match(line))


def identifier_sources(
    events: Iterable[Event], *, limit: int = 1000
) -> tuple[list[str], list[str]]:
    """(said or used, only shown): identifiers of the user's and agent's words, then of
    tool-call argument values; then those that only tool results and screens showed (import
    lines of file contents skipped). First-seen order within each."""
    said: dict[str, None] = {}
    used: dict[str, None] = {}
    shown: dict[str, None] = {}
    for event in events:
        if is_summary_event(event):
            continue
        kind = etype(event)
        if kind == "tool_call":
            target, text = used, argument_text(call_arguments(event))
        elif kind in ("tool_result", "screen_context"):
            text = _without_imports(
                _head_words(event_text(event.get("content")), RESULT_READ_CHARS)
            )
            target = shown
        elif is_request(event) or is_assistant_text(event):
            target, text = said, _head_words(event_text(event.get("content")), TEXT_READ_CHARS)
        else:
            continue
        if len(target) >= limit:
            continue
        for ident in extract_identifiers(text, limit=limit):
            target.setdefault(ident, None)
    first = list(dict.fromkeys([*said, *used]))[:limit]
    firsts = set(first)
    return first, [i for i in shown if i not in firsts][: max(0, limit - len(first))]


def ranked_identifiers(events: Sequence[Event], *, limit: int = 200) -> list[str]:
    """Identifiers of a span, most salient first: what the user and the agent said (their
    words), then what the agent used (tool-call argument values), then what tool results
    showed (import lines of file contents skipped)."""
    said, shown = identifier_sources(events, limit=limit)
    return [*said, *shown][:limit]


def said_and_used_identifiers(events: Iterable[Event], *, limit: int = 1000) -> list[str]:
    """Identifiers of the user's and agent's words, then of tool-call argument values (what
    the quality figures call "said/used")."""
    return identifier_sources(events, limit=limit)[0]
