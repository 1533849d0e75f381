"""The extractive summarizer: offline, deterministic, bounded; the checkpoint built from
the events alone, runs as its backbone (core.compaction.runs)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.compaction.runs import (
    CONTINUED_LABEL,
    EARLIER_REQUEST_PLACEHOLDER,
    EDITED_LABEL,
    ERROR_LABEL,
    HISTORY_SECTIONS,
    NAMES_LABEL,
    OUTCOME_LABEL,
    RAN_LABEL,
    READ_LABEL,
    REQUEST_LABEL,
    ROOT_REQUEST_PLACEHOLDER,
    TOOLS_LABEL,
    TURN_PREFIX_SECTIONS,
    Run,
    call_arguments,
    extract_identifiers,
    identifier_sources,
    relative_path,
    result_error,
    said_and_used_identifiers,
    split_runs,
)
from core.events import Event
from core.summarizer.base import (
    TEXT_READ_CHARS,
    TOOL_RESULT_READ_CHARS,
    SummaryKind,
    args_short,
)
from core.summarizer.layout import (
    CONSTRAINT_RE,
    LIST_ITEM_RE,
    NEXT_RE,
    Doc,
    add_unique,
    bounded,
    decision,
    document_outcome,
    focus_keywords,
    is_document,
    is_follow_up,
    is_status_remark,
    prose,
    user_prose,
)
from core.text import (
    clean_text,
    collapse_whitespace,
    ends_cjk_sentence,
    event_text,
    sentences,
    shorten,
)
from core.tokens import estimate_tokens, fit_tokens

# --------------------------------------------------------------------------- extractive

HISTORY_LAYOUT = tuple((key, f"{key}:") for key in HISTORY_SECTIONS)
TURN_PREFIX_LAYOUT = tuple((key, f"{key}:") for key in TURN_PREFIX_SECTIONS)
PATHS_PER_LINE = 8
COMMANDS_PER_LINE = 3
COMMAND_CHARS = 100


def _action_lines(run: Run) -> list[tuple[str, int]]:
    """(line, priority) for what a run did: edits first, then commands, reads, other tools."""
    out: list[tuple[str, int]] = []
    for n, group in enumerate(_groups(run.edits, PATHS_PER_LINE)):
        out.append((EDITED_LABEL + " " + ", ".join(group), 90 - n))
    commands: list[str] = []
    failed = {
        action.targets[0]: action.error
        for action in run.actions
        if action.kind == "command" and action.targets and action.error
    }
    for command in run.commands:
        item = shorten(_relative_command(command, run.cwd), COMMAND_CHARS)
        if command in failed and failed[command] != run.error:
            item += f" → error: {shorten(failed[command] or 'error', 80)}"
        commands.append(item)
    for n, group in enumerate(_groups(commands, COMMANDS_PER_LINE)):
        out.append((RAN_LABEL + " " + " · ".join(group), 52 + min(n, 10)))  # latest first
    for n, group in enumerate(_groups(run.reads, PATHS_PER_LINE)):
        out.append((READ_LABEL + " " + ", ".join(shorten(r, 120) for r in group), 42 - n))
    if run.others:
        out.append((TOOLS_LABEL + " " + ", ".join(run.others[:12]), 30))
    return out


def _relative_command(command: str, cwd: str | None) -> str:
    """A command with the known working directory's prefix left out of its paths
    (`cd /repo && cat /repo/a.py` → `cd . && cat a.py`), as the summary's paths are."""
    if not cwd or cwd == "/":
        return command
    root = cwd.rstrip("/")
    command = command.replace(root + "/", "")
    return re.sub(re.escape(root) + r"(?![\w.-])", ".", command)


def first_sentences(text: str, max_tokens: int = 60, min_tokens: int = 15) -> str:
    """Leading sentences until min_tokens is reached, cut to at most max_tokens (by estimate,
    so a CJK sentence gets as much room as its English translation)."""
    out = ""
    for sentence in sentences(text[:TEXT_READ_CHARS]):
        out = f"{out} {sentence}" if out and not ends_cjk_sentence(out) else out + sentence
        if estimate_tokens(out) >= min_tokens:
            break
    return fit_tokens(out, max_tokens)


def _last_sentences(text: str, max_tokens: int) -> str:
    """The closing words of an assistant message (its conclusion), at most max_tokens."""
    parts = sentences(prose(text)[-TEXT_READ_CHARS:])
    out = ""
    for sentence in reversed(parts):
        glue = "" if ends_cjk_sentence(sentence) else " "
        candidate = sentence if not out else f"{sentence}{glue}{out}"
        if estimate_tokens(candidate) > max_tokens and out:
            break
        out = candidate
        if estimate_tokens(out) >= max_tokens // 2:
            break
    return fit_tokens(out, max_tokens)


class ExtractiveSummarizer:
    """Builds the checkpoint from the events alone: offline, deterministic, bounded.

    Runs are the backbone (core.compaction.runs): one Progress entry per run with its request, what
    the agent edited, ran and read, and how it ended. `focus` only ranks lines (lines and runs that
    match it survive the budget first); it is never written into the summary."""

    def __init__(self, name: str = "extractive") -> None:
        self.name = name

    def summarize(
        self,
        events: Sequence[Event],
        *,
        kind: SummaryKind = "history",
        previous_summary: str | None = None,
        focus: str | None = None,
        max_tokens: int = 1024,
    ) -> str:
        doc = Doc(focus_keywords(shorten(collapse_whitespace(focus), 300)) if focus else [])
        runs = split_runs(events)
        if kind == "turn_prefix":
            return self._turn_prefix(events, runs, doc, max_tokens)
        return self._history(events, runs, doc, previous_summary, max_tokens)

    # -- history ---------------------------------------------------------------------------

    def _history(
        self,
        events: Sequence[Event],
        runs: list[Run],
        doc: Doc,
        previous_summary: str | None,
        max_tokens: int,
    ) -> str:
        last = len(runs) - 1
        for n, run in enumerate(runs):
            recency = 5 if n == last else 0
            text_of_run = " ".join([run.request, *run.edits, *run.commands, *run.reads]).lower()
            boost = recency + (15 if any(k in text_of_run for k in doc.focus_keys) else 0)
            label = f"{CONTINUED_LABEL} " if run.continued else f"{REQUEST_LABEL} "
            doc.pin_request("Progress", label, run.request or EARLIER_REQUEST_PLACEHOLDER)
            for line, priority in _action_lines(run):
                doc.add("Progress", line, priority, sub=True, boost=boost)
            if run.outcome and is_ongoing(run):
                doc.add(
                    "Progress", f"{LAST_SAID_LABEL} {outcome_of(run)}", 66, sub=True, boost=boost
                )
            elif run.outcome:
                doc.add("Progress", f"{OUTCOME_LABEL} {outcome_of(run)}", 80, sub=True, boost=boost)
            if run.error:
                doc.add("Progress", f"{ERROR_LABEL} {run.error}", 85, sub=True, boost=boost)
            names = run_names(run)
            if names:
                doc.add("Progress", NAMES_LABEL + " " + ", ".join(names), 70, sub=True, boost=boost)
            for note in run.context[-3:]:
                doc.add("Progress", note, 20, sub=True, boost=boost)
            for said in run.said[:1] if not run.continued else []:
                for sentence in sentences(user_prose(said)):
                    if CONSTRAINT_RE.search(sentence) and not is_status_remark(sentence):
                        doc.add("Constraints & Preferences", shorten(sentence, 200), 65)
            for said in run.said[1:-1] if not run.continued else run.said[:-1]:
                conclusion = decision(said, 50)
                if conclusion and conclusion not in run.outcome:
                    doc.add("Key Decisions", conclusion, 50, boost=recency)

        if runs:
            _next_steps(doc, runs[-1])

        in_text = " ".join(it.text for it in doc.items)
        errors: list[str] = []
        for run in runs:
            for action in run.actions:
                if action.error:
                    add_unique(errors, action.error, 6)
        for error in errors:
            if error not in in_text:
                doc.add("Critical Context", f"{ERROR_LABEL} {error}", 55)
        said_used, shown = identifier_sources(events, limit=120)
        cwd = next((r.cwd for r in reversed(runs) if r.cwd), None)
        first = [
            i for i in dict.fromkeys(relative_path(i, cwd) for i in said_used) if i not in in_text
        ]
        rest = [i for i in dict.fromkeys(relative_path(i, cwd) for i in shown) if i not in in_text]
        for n, group in enumerate(_groups(first, 8)):
            doc.add("Critical Context", "identifiers: " + ", ".join(group), 56 - n)
        for n, group in enumerate(_groups(rest, 8)):
            doc.add("Critical Context", "seen in tool output: " + ", ".join(group), 22 - n)

        # The Goal is the latest request that says what the work is: a short follow-up
        # ("check again") stands under it, never as it.
        latest = next((r.request for r in reversed(runs) if r.request), "")
        goal = next(
            (r.request for r in reversed(runs) if r.request and not is_follow_up(r.request)), ""
        )
        goal = goal or _previous_goal(previous_summary) or latest
        doc.pin_request("Goal", "", goal or "(no user request in this range)")
        if latest and latest != goal:
            doc.add("Goal", f"(latest: {shorten(latest, 120)})", 96)
        if len(runs) > 1:
            doc.add("Goal", f"({len(runs)} requests in this range, each under Progress)", 95)
        return bounded(HISTORY_LAYOUT, doc.items, frozenset({"Goal"}), max_tokens)

    # -- turn prefix -----------------------------------------------------------------------

    def _turn_prefix(
        self, events: Sequence[Event], runs: list[Run], doc: Doc, max_tokens: int
    ) -> str:
        request = next((r.request for r in reversed(runs) if r.request), "")
        doc.pin_request("Original request", "", request or ROOT_REQUEST_PLACEHOLDER)
        for run in runs:
            for line, priority in _action_lines(run):
                doc.add("Early progress", line, priority)
            if run.outcome:
                doc.add("Early progress", f"{OUTCOME_LABEL} {_last_sentences(run.outcome, 50)}", 75)
        suffix = "Context for the retained suffix"
        for run in runs:
            for call in run.pending:
                doc.add(suffix, f"Awaiting the result of {shorten(call, 120)}", 88)
        last_call = _last_tool_line(events)
        if last_call:
            doc.add(suffix, f"Last tool call: {last_call}", 86)
        if runs and runs[-1].error and runs[-1].error not in last_call:
            doc.add(suffix, f"{ERROR_LABEL} {runs[-1].error}", 84)
        in_text = " ".join(it.text for it in doc.items)
        idents = [i for i in said_and_used_identifiers(events, limit=40) if i not in in_text]
        for n, group in enumerate(_groups(idents, 8)):
            doc.add(suffix, "identifiers: " + ", ".join(group), 40 - n)
        return bounded(TURN_PREFIX_LAYOUT, doc.items, frozenset({"Original request"}), max_tokens)


NAMES_PER_RUN = 8


LAST_SAID_LABEL = "last said:"
"""A run whose agent's last words say what it is about to do, not how it ended."""
_ROLE_PREFIX_RE = re.compile(r"^(?:THOUGHT|DISCUSSION|ANALYSIS|PLAN|REASONING):\s*")
_ONGOING_RE = re.compile(
    r"^(?:let me|let's|let us|i'll|i will|i'm going to|i am going to|i need to|i should|"
    r"(?:now|next|first|then),? (?:i'll|i will|let me|let's)|running|looking|checking|reading|"
    r"searching|trying|opening|viewing|inspecting)\b",
    re.IGNORECASE,
)


def is_ongoing(run: Run) -> bool:
    """Whether the run's last assistant message only announces steps ("Let me run the tests.")
    and concludes nothing: the run stopped before a result (its range ended, or the user moved
    on)."""
    last = run.said[-1] if run.said and run.outcome else ""
    parts = [_ROLE_PREFIX_RE.sub("", p) for p in sentences(prose(last)[-TEXT_READ_CHARS:])]
    return bool(parts) and all(_ONGOING_RE.match(p) or p.endswith(":") for p in parts)


def outcome_of(run: Run, max_tokens: int = 50) -> str:
    """How a run ended, in the agent's words: the closing sentences of its last message, or,
    when that message is a document (a report, notes), its lead-in and size. A leading role
    label of the agent's format (`THOUGHT:`) is left out."""
    last = run.said[-1] if run.said and run.outcome else run.outcome
    if is_document(last):
        return document_outcome(last, max_tokens)
    return _ROLE_PREFIX_RE.sub("", _last_sentences(run.outcome, max_tokens))


def run_names(run: Run, *, leave_out_shown: bool = True) -> list[str]:
    """The key identifiers of a run, whole: those its request names, then those the agent both
    said and used, then the rest it said, then what it used; paths, commands and (with
    `leave_out_shown`) names already in the run's lines left out."""
    listed = [*run.edits, *run.commands, *run.reads]
    shown = " ".join([run.request, *listed, run.outcome] if leave_out_shown else listed)
    request = extract_identifiers(run.request) if not run.continued else []
    words = [i for said in run.said[1:] for i in extract_identifiers(said, limit=60)]
    used = [i for text in run.used for i in extract_identifiers(text, limit=60)]
    both = [i for i in words if i in used]
    out: list[str] = []
    for ident in [*request, *both, *words, *used]:
        ident = relative_path(ident, run.cwd)
        if ident not in shown and ident not in out and len(ident) <= 80:
            out.append(ident)
        if len(out) >= NAMES_PER_RUN:
            break
    return out


_OFFER_RE = re.compile(r"(?i)(?:if you|let me know|want me|shall i|should i|would you)")


def _next_steps(doc: Doc, final: Run) -> None:
    """What is left when the range ends: calls awaiting their result, the error the last run
    ended on, a request not yet answered, and what the agent said it would do next (a
    statement, never a question or offer to the user); else that the last request was
    answered."""
    added = 0
    for call in final.pending:
        doc.add("Next Steps", f"Check the result of {shorten(call, 120)}", 64)
        added += 1
    if final.error:
        doc.add("Next Steps", f"Resolve: {final.error}", 63)
        added += 1
    if (not final.outcome or is_ongoing(final)) and final.request:
        verb = "Continue" if final.actions or final.continued else "Answer"
        doc.add("Next Steps", f"{verb}: {shorten(final.request, 200)}", 62)
        added += 1
    if final.outcome and final.said:
        own = prose(final.said[-1])
        lines = [ln for ln in own.split("\n") if not LIST_ITEM_RE.match(ln)]
        for sentence in sentences("\n".join(lines)):
            offer = sentence.rstrip().endswith("?") or _OFFER_RE.match(sentence)
            if NEXT_RE.search(sentence) and not offer:
                doc.add("Next Steps", shorten(sentence, 200), 58)
                added += 1
    if not added and final.outcome and not is_ongoing(final):
        doc.add("Next Steps", "None pending: the latest request has its outcome above.", 57)


def _last_tool_line(events: Sequence[Event]) -> str:
    """`name(args) → outcome` of the last tool call of a span (what the kept suffix follows)."""
    results: dict[str, Event] = {}
    for event in events:
        call_id = event.get("tool_call_id")
        if event.get("type") == "tool_result" and isinstance(call_id, str):
            results.setdefault(call_id, event)
    for event in reversed(events):
        if event.get("type") != "tool_call":
            continue
        line = f"{tool_name(event)}({args_short(call_arguments(event))})"
        call_id = event.get("tool_call_id")
        result = results.get(call_id) if isinstance(call_id, str) else None
        if result is None:
            return f"{line} → no result yet"
        error = result_error(result)
        if error:
            return f"{line} → error: {error}"
        return f"{line} → {_outcome_short(event_text(result.get('content')))}"
    return ""


def _outcome_short(text: str) -> str:
    lines = [ln.strip() for ln in clean_text(text[:TOOL_RESULT_READ_CHARS]).split("\n")]
    lines = [ln for ln in lines if ln]
    if not lines:
        return "(empty result)"
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return shorten(collapse_whitespace(lines[0]), 120) + more


def tool_name(event: Event) -> str:
    name = event.get("name")
    return (
        shorten(collapse_whitespace(name), 60) if isinstance(name, str) and name.strip() else "tool"
    )


def _groups(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _previous_goal(previous_summary: str | None) -> str:
    """The Goal of an earlier checkpoint, so a chunk without a user request still has one."""
    if not previous_summary:
        return ""
    lines = clean_text(previous_summary).split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("[") and "] " in stripped:
            stripped = stripped.split("] ", 1)[1]
        if stripped == "Goal:" and i + 1 < len(lines):
            goal = lines[i + 1].strip().removeprefix("- ").strip()
            if goal and not goal.startswith("("):
                return shorten(goal, 300)
    return ""
