"""Human output of the command line, made with Rich.

Everything that comes from the memory root (event text, ids, summaries, file names) is
untrusted: it goes through `inspector.safe_text` into `rich.text.Text` (never markup), with
control characters made visible, so no escape sequence from the data reaches the terminal.
Colour follows the terminal: none when it is not one, none with `NO_COLOR`, and Rich
degrades by itself on `TERM=dumb`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from inspector.safe_text import one_line, safe_line, safe_text

if TYPE_CHECKING:  # the CLI imports this module lazily; these are for the signatures only
    from core.compaction.planner import CompactionPlan
    from core.maintenance.compaction_pass import PassResult
    from core.maintenance.rotation import RotationResult
    from core.manager import MemoryManager
    from core.recall.ranking import RecallResult
    from core.status import PlanReport, SessionStatus
    from inspector.demo.agent import DemoStats, DemoStep

Event = Mapping[str, Any]
"""An event as read from events.jsonl: a JSON object whose values are untrusted JSON (the
one `Any` left: JSON values have no narrower static type)."""
Message = Mapping[str, Any]
"""A chat message of the assembled prompt (role, content, tool_calls …), JSON like an event."""

Row = tuple[str, Text | str]


STATUS_ARCHIVES_SHOWN = 10
"""Archived sessions `status` draws (the newest: archives sort by their dated ids); a
device that rotated for months has hundreds, which `status --json` lists in full."""


PIPED_WIDTH = 10_000
"""The width a console writes at when its output is not a terminal: wide enough that no table
cell is ever wrapped, with each line's trailing padding stripped (`_TrimmedLines`)."""


class _TrimmedLines:
    """A text stream that strips the trailing blanks of every line before passing it on:
    Rich pads each table cell to its column, which a pipe or a file would keep."""

    def __init__(self, target: IO[str]) -> None:
        self._target = target
        self._partial = ""

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        if lines:
            self._target.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._partial:
            self._target.write(self._partial)
            self._partial = ""
        self._target.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return str(getattr(self._target, "encoding", None) or "utf-8")

    def fileno(self) -> int:
        return self._target.fileno()


class _Console(Console):
    """Rich's console, except that a closed pipe (`plan | head`) is left to the command line,
    which ends quietly with status 0 (Rich would exit with status 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def make_console(file: IO[str] | None = None) -> Console:
    """The console of every command: no colour (and no styles at all) with NO_COLOR.

    When the output is not a terminal (a pipe, a file) nothing is ever hard-wrapped or padded
    to a width: tables take the width their cells need (COLUMNS is a terminal's width and is
    not applied to a pipe), no line ends in blanks, and a command or a path printed for
    copying stays on one line."""
    no_color = bool(os.environ.get("NO_COLOR"))
    target = file if file is not None else sys.stdout
    isatty = getattr(target, "isatty", None)
    terminal = bool(callable(isatty) and isatty())
    # Never markup, highlighting or emoji: printed text comes from events (untrusted).
    plain: dict[str, Any] = {
        "no_color": no_color,
        "color_system": None if no_color else "auto",
        "highlight": False,
        "markup": False,
        "emoji": False,
    }
    if terminal:
        return _Console(file=file, **plain)
    return _Console(
        file=_TrimmedLines(target),  # type: ignore[arg-type]
        width=PIPED_WIDTH,
        soft_wrap=True,
        **plain,
    )


def elide_path(text: str, width: int) -> str:
    """A path in at most `width` cells with its middle replaced by "…": a third for the head
    (where it lives), the rest for the tail (which memory root it is)."""
    if cell_len(text) <= width:
        return text
    width = max(2, width)
    head = text[: max(0, (width - 1) // 3)]
    while cell_len(head) > (width - 1) // 3:
        head = head[:-1]
    room = width - 1 - cell_len(head)
    tail = text[-room:] if room else ""
    while cell_len(tail) > room:
        tail = tail[1:]
    return head + "…" + tail


def plural(count: int, word: str, words: str | None = None) -> str:
    """ "1 event", "2 events", "1,000 events" (`words` for irregular plurals)."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def _t(*parts: tuple[str, str] | str) -> Text:
    """Text from trusted literal pieces (str) and (text, style) pairs."""
    out = Text()
    for part in parts:
        if isinstance(part, tuple):
            out.append(part[0], style=part[1])
        else:
            out.append(part)
    return out


def _n(value: int | float | None, unknown: str = "unknown") -> Text:
    if value is None:
        return Text(unknown, style="dim")
    if isinstance(value, float) and not value.is_integer():
        return Text(f"{value:,.1f}")
    return Text(f"{int(value):,}")


def _yes(flag: bool, yes_style: str = "bold yellow") -> Text:
    return Text("yes", style=yes_style) if flag else Text("no", style="dim")


def _kv_table(rows: Iterable[Row], title: str | None = None) -> Table:
    table = Table(
        box=box.SIMPLE,
        show_header=False,
        title=title,
        title_justify="left",
        title_style="bold",
        pad_edge=False,
    )
    table.add_column("key", style="cyan", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in rows:
        table.add_row(key, value if isinstance(value, Text) else Text(value))
    return table


def event_preview(event: Event, limit: int = 90) -> str:
    """One line of an event's content for tables (control characters visible)."""
    content = event.get("content")
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    else:
        from core.text import compact_json

        text = compact_json(content)
    if event.get("type") == "tool_call":
        args = event.get("arguments")
        if args is not None and not text:
            from core.text import compact_json

            text = args if isinstance(args, str) else compact_json(args)
        name = event.get("name")
        if isinstance(name, str) and name:
            text = f"{name}({text})"
    meta = event.get("meta")
    if isinstance(meta, Mapping) and meta.get("synthetic"):
        text = f"[synthetic {meta.get('synthetic')}] {text}"
    return one_line(text, limit)


def _event_label(event: Event) -> Text:
    etype = event.get("type") or event.get("role") or "?"
    style = {
        "user_input": "bold green",
        "assistant_output": "blue",
        "role_output": "blue",
        "tool_call": "magenta",
        "tool_result": "yellow",
        "system_event": "dim",
        "screen_context": "dim",
    }.get(str(etype), "")
    return safe_line(str(etype), style, limit=20)


def _short_id(value: object, limit: int = 18) -> Text:
    if not isinstance(value, str):
        return Text("—", style="dim")
    return safe_line(value, "dim", limit=limit)


def events_table(
    events: Sequence[Event],
    indexes: Sequence[int],
    *,
    title: str | None = None,
    tokens: Sequence[int] | None = None,
    fate: Callable[[int], Text] | None = None,
    offset: int = 0,
    width: int = 80,
) -> Table:
    """Events as rows; `offset` is added to the shown index (a tail of the hot window).

    The content column gets what the fixed columns leave of `width` (the console width):
    left to itself Rich would squeeze the index column away to fit the long previews.
    """
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", title_style="bold")
    widest = len(str(max(indexes, default=0) + offset))
    table.add_column("#", justify="right", style="dim", no_wrap=True, min_width=widest)
    table.add_column("type", no_wrap=True, min_width=16)
    used = widest + 16 + 2 * 3 + 3
    if tokens is not None:
        table.add_column("tok", justify="right", no_wrap=True, min_width=5)
        used += 5 + 2
    if fate is not None:
        table.add_column("fate", no_wrap=True, min_width=16)
        used += 16 + 2
    table.add_column("content", overflow="ellipsis", no_wrap=True, max_width=max(width - used, 12))
    previous: int | None = None
    for i in indexes:
        if previous is not None and i != previous + 1:
            gap = i - previous - 1
            cells = [Text("…", style="dim"), Text(f"{gap:,} more", style="dim")]
            if tokens is not None:
                cells.append(Text(""))
            if fate is not None:
                cells.append(Text(""))
            cells.append(Text(""))
            table.add_row(*cells)
        event = events[i]
        row = [Text(str(i + offset)), _event_label(event)]
        if tokens is not None:
            row.append(Text(f"{tokens[i]:,}"))
        if fate is not None:
            row.append(fate(i))
        row.append(Text(event_preview(event)))
        table.add_row(*row)
        previous = i
    return table


# --- status ---------------------------------------------------------------------------------


def _latest_events(manager: MemoryManager, count: int) -> Sequence[Event]:
    """The last few hot-window events, or [] when they cannot be read."""
    try:
        snapshot = manager.store.read_events()
    except Exception:
        return []
    return list(snapshot.events)[-count:]


def render_status(
    console: Console, status: SessionStatus, manager: MemoryManager | None = None
) -> None:
    should = status.should_compress
    trigger_text = _yes(should)
    if status.trigger:
        trigger_text.append(f" (trigger: {one_line(str(status.trigger), 20)})")
    reason = status.trigger_reason
    if reason:
        trigger_text.append("  ")
        trigger_text.append(one_line(str(reason), 200), style="dim")
    window = Text(f"{status.context_window or 0:,}")
    model = status.model
    if model:
        window.append("  model ")
        window.append(one_line(str(model), 60), style="cyan")
    pending = int(status.pending_count or 0)
    corrupt = int(status.corrupt_lines or 0)
    rows: list[Row] = [
        ("memory root", safe_line(str(status.memory_dir or ""), limit=300)),
        ("session", safe_line(str(status.session_id or "—"), "bold")),
        ("events (hot window)", _n(status.event_count)),
        ("hot tokens", _n(status.hot_tokens)),
        ("last prompt tokens", _n(status.last_prompt_tokens)),
        ("prompt tokens", _prompt_text(status)),
        ("calibration", _calibration_text(status)),
        ("context window", window),
        ("should compress", trigger_text),
        ("chunks", _n(status.chunk_count)),
        ("pending evidence", Text(str(pending), style="bold yellow" if pending else "")),
        ("corrupt lines", Text(str(corrupt), style="bold red" if corrupt else "")),
        ("compressed history", _yes(bool(status.has_compressed_history), "green")),
    ]
    index_error = status.index_error
    if index_error:
        rows.append(("index", safe_text(str(index_error), "bold red", limit=400)))
        rows.append(("", _t(("run `session-inspector repair` to rebuild it", "dim"))))
    for warning in status.warnings:
        rows.append(("warning", safe_text(str(warning), "yellow", limit=400)))
    # The root in full when it fits the value column; else its middle elided there (head and
    # tail stay readable) and the whole path on a line of its own under the table, never
    # wrapped inside (a terminal folds it; a pipe gets it on one line, to copy).
    root = one_line(str(status.memory_dir or ""), 10_000)
    room = console.width - max(cell_len(key) for key, _ in rows) - 6
    elided = cell_len(root) > room
    if elided:
        rows[0] = ("memory root", Text(elide_path(root, max(room, 12)), no_wrap=True))
    console.print(_kv_table(rows, title="Session"))
    if elided:
        console.print(Text.assemble(("memory root: ", "dim"), root), soft_wrap=True)
        console.print()

    archives = list(status.archives)
    if archives:
        shown = archives[-STATUS_ARCHIVES_SHOWN:]
        title = "Archived sessions"
        if len(shown) < len(archives):
            title += f" (the last {len(shown)} of {len(archives)}; `status --json` lists all)"
        table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
        table.title_style = "bold"
        table.add_column("session")
        table.add_column("events", justify="right")
        table.add_column("chunks", justify="right")
        table.add_column("created", style="dim")
        for info in shown:
            table.add_row(
                safe_line(str(info.session_id), limit=60),
                _n(info.event_count),
                _n(info.chunk_count),
                safe_line(str(info.created_at or ""), limit=40),
            )
        console.print(table)

    if manager is not None:
        latest = _latest_events(manager, 5)
        if latest:
            total = int(status.event_count or len(latest))
            first = max(total - len(latest), 0)
            indexes = list(range(len(latest)))
            console.print(
                events_table(
                    latest, indexes, title="Latest events", offset=first, width=console.width
                )
            )


# --- plan -----------------------------------------------------------------------------------


def _plan_window(plan: CompactionPlan, n: int, around: int = 6) -> list[int]:
    """Indexes worth showing: the ends, the root, the turn start, and around the cut."""
    if n <= 40:
        return list(range(n))
    keep: set[int] = set(range(min(3, n))) | set(range(max(n - 3, 0), n))
    for value in (plan.root_index, plan.turn_start_index):
        if value is not None:
            keep.add(value)
    if plan.cut_index is not None:
        cut = plan.cut_index
        keep |= set(range(max(cut - around, 0), min(cut + around, n)))
    for trace in (plan.token_path, plan.count_path):
        for value in (trace.candidate_index, trace.snapped_index):
            if value is not None and 0 <= value < n:
                keep |= set(range(max(value - 2, 0), min(value + 3, n)))
    return sorted(i for i in keep if 0 <= i < n)


def _calibration_text(status: SessionStatus) -> Text:
    """How the provider counts, once two figures are recorded (contract §5, Calibration)."""
    cal = status.calibration
    if cal.samples < 2:
        return _t((f"not learned yet ({plural(cal.samples, 'figure')} recorded; needs 2)", "dim"))
    return _t(
        f"{cal.overhead:,} fixed + {cal.ratio:.2f} × estimate",
        (f"  (over the last {plural(cal.samples, 'figure')})", "dim"),
    )


def render_plan(console: Console, report: PlanReport) -> None:
    trigger = report.trigger
    plan = report.plan
    events: list[Event] = list(report.events)
    tokens = list(report.tokens)
    head = _t(("should compress: ", "bold"))
    head.append_text(_yes(bool(trigger.should_compress)))
    if trigger.trigger:
        head.append(f"  (trigger: {trigger.trigger})", style="yellow")
    console.print(head)
    console.print(Text("  " + one_line(str(trigger.reason), 300), style="dim"))

    if plan.useful:
        cut = plan.cut_index
        first_kept = plan.first_kept_event_id
        rows: list[Row] = [
            ("path", Text(f"{plan.path}", style="bold")),
            ("cut index", Text(str(cut))),
            ("first kept event", safe_line(str(first_kept or "—"))),
            (
                "pinned root",
                safe_line(str(plan.pinned_root_event_id))
                if plan.pinned_root_event_id
                else Text("none", style="dim"),
            ),
            (
                "split turn",
                _t(("yes", "bold magenta"), "  turn starts at ")
                + safe_line(str(plan.turn_start_event_id))
                + (
                    Text(
                        f" (its request is in a chunk: an earlier pass compacted it; synthetic "
                        f"event #{plan.turn_start_index})",
                        style="dim",
                    )
                    if plan.turn_continued
                    else Text("")
                )
                if plan.is_split_turn
                else Text("no", style="dim"),
            ),
            (
                "compacts",
                Text(
                    f"{plural(len(plan.compacted_indices()), 'event')} "
                    f"({plan.compacted_tokens:,} tokens)"
                ),
            ),
            (
                "keeps",
                Text(
                    f"{plural(len(plan.kept_indices()), 'event')} "
                    f"({plan.kept_tokens_estimate:,} tokens)"
                ),
            ),
        ]
    else:
        rows = [("cut", _t(("none", "dim"), "  ") + safe_line(str(plan.reason or ""), limit=300))]
    if plan.useful and plan.headroom_moves:
        rows.append(
            (
                "headroom",
                Text(
                    f"cut moved {plural(plan.headroom_moves, 'legal cut')} forward: predicted "
                    f"prompt after the pass {plan.predicted_after_tokens or 0:,} tokens "
                    f"(limit {plan.headroom_limit or 0:,})"
                ),
            )
        )
    added = report.would_add_tokens
    if added is not None:
        rows.append(
            (
                "prompt after",
                Text(
                    f"this pass would add {added:,} tokens"
                    + (
                        " — a token-triggered pass does not commit"
                        if trigger.trigger == "tokens"
                        else ""
                    ),
                    style="bold red",
                ),
            )
        )
    if not trigger.should_compress and plan.useful:
        rows.append(("", _t(("a pass would not run now; `compact --force` would cut here", "dim"))))
    console.print(_kv_table(rows, title="Plan"))

    notes = list(plan.notes)
    if added is not None:
        notes.append(
            f"this pass would add {added:,} tokens (predicted prompt after it "
            f"{plan.predicted_after_tokens or 0:,}, {trigger.prompt_tokens or 0:,} before)"
        )
    if notes:
        console.print(Text("Explanation", style="bold"))
        for note in notes:
            line = Text("  • ")
            line.append_text(safe_text(str(note), limit=600))
            console.print(line)
        console.print()

    if not events:
        return
    compacted = set(plan.compacted_indices()) if plan.useful else set()
    pinned = plan.pinned_root_index
    turn_start = plan.turn_start_index

    def fate(i: int) -> Text:
        if i == pinned:
            return Text("pinned root", style="bold green")
        if plan.useful and i == plan.cut_index:
            return Text("→ first kept", style="bold cyan")
        if i in compacted:
            label = "compact"
            if plan.is_split_turn and turn_start is not None and i >= turn_start:
                label = "compact (prefix)"
            return Text(label, style="yellow")
        return Text("keep", style="green" if plan.useful else "dim")

    indexes = _plan_window(plan, len(events))
    shown_tokens = tokens if len(tokens) == len(events) else None
    console.print(
        events_table(
            events, indexes, title="Events", tokens=shown_tokens, fate=fate, width=console.width
        )
    )


# --- one-line results ----------------------------------------------------------------------


def render_pass(console: Console, result: PassResult) -> None:
    if result.compacted:
        line = _t(("compacted ", "bold green"))
        count = result.compacted_event_count
        if count:
            line.append(plural(count, "event") + " ")
        line.append("into ")
        line.append_text(safe_line(str(result.chunk_id), "bold"))
        extras = []
        plan = result.plan
        if plan is not None and plan.path:
            extras.append(f"{plan.path} path")
        if result.is_split_turn:
            extras.append("split turn")
        backend = result.summary_backend
        if backend:
            extras.append(f"summary: {one_line(str(backend), 40)}")
        if extras:
            line.append(f" ({', '.join(extras)})", style="dim")
        line.append(f"; hot window now {plural(result.kept_event_count, 'event')}")
    else:
        reason = str(result.reason or "not needed")
        line = _t(("not compacted", "bold yellow" if reason == "busy" else "bold"), ": ")
        line.append_text(safe_line(reason, limit=300))
        if reason == "busy":
            line.append("  (another pass is running; it will compact)", style="dim")
    console.print(line)


def render_append(
    console: Console,
    stored: Sequence[Event],
    memory_dir: Path,
    prompt_tokens: int | None,
    model: str | None,
) -> None:
    line = Text()
    if stored:
        line.append(f"appended {len(stored)} event{'s' if len(stored) != 1 else ''}", "bold green")
        first, last = stored[0].get("id"), stored[-1].get("id")
        line.append(" (")
        line.append_text(safe_line(str(first), limit=60))
        if len(stored) > 1:
            line.append(" … ")
            line.append_text(safe_line(str(last), limit=60))
        line.append(")")
    else:
        line.append("appended no events", "bold")
    if prompt_tokens is not None:
        line.append(f"; prompt tokens {prompt_tokens:,}")
    if model is not None:
        line.append("; model ")
        line.append_text(safe_line(model, limit=60))
    line.append(" in ")
    line.append_text(safe_line(str(memory_dir), "dim", limit=300))
    console.print(line)


def render_rotation(console: Console, result: RotationResult) -> None:
    if result.reason == "empty":
        console.print(
            _t(("nothing to rotate", "bold"), ": the active session is empty (no archive made)")
        )
        return
    if result.closed_session_id is None:
        console.print(_t(("no session to close", "bold"), "; started a new session"))
        return
    line = _t(("closed session ", "bold green"))
    line.append_text(safe_line(str(result.closed_session_id), "bold"))
    line.append(" → ")
    line.append_text(safe_line(str(result.archive_path), limit=300))
    line.append("; started a new session")
    console.print(line)


CACHE_REBUILDS = frozenset({"catalog_rebuilt", "recall_index_rebuilt"})
"""What `repair` rebuilds every time (derived caches), which is no sign that anything was
wrong: a healthy root reports "nothing to repair"."""


def repairs_done(repaired: Mapping[str, int]) -> dict[str, int]:
    """The counts of what was actually wrong and is now mended (caches left out)."""
    return {k: v for k, v in repaired.items() if v and k not in CACHE_REBUILDS}


def render_repair(console: Console, repaired: Mapping[str, int]) -> None:
    done = repairs_done(repaired)
    if not done:
        console.print(_t(("nothing to repair", "bold green"), ("  (caches rebuilt)", "dim")))
        return
    line = _t(("repaired: ", "bold green"))
    line.append(", ".join(f"{one_line(str(k), 60)} {v}" for k, v in sorted(done.items())))
    console.print(line)


# --- recall and prompt ----------------------------------------------------------------------


def render_recall(console: Console, query: str, result: RecallResult) -> None:
    hits = list(result.results)
    head = _t(("recall ", "bold"))
    head.append_text(safe_line(repr(query), limit=120))
    head.append(f": {len(hits)} result{'s' if len(hits) != 1 else ''}")
    pending = result.pending_chunks_recalled
    if pending:
        head.append(f" ({pending} from pending evidence)", style="yellow")
    console.print(head)
    if not hits:
        console.print(
            Text(
                "  recall searches compacted history: the hot window is not searched "
                "(it is in the prompt already)",
                style="dim",
            )
        )
    for hit in hits:
        source = "archived" if hit.archived else str(hit.source)
        line = Text("\n")
        line.append_text(safe_line(str(hit.chunk_id), "bold", limit=80))
        line.append(
            f"  source: {one_line(source, 20)}",
            style={"pending": "yellow", "archived": "magenta"}.get(source, "cyan"),
        )
        score = hit.score
        if isinstance(score, int | float):
            line.append(f"  score {score:.3f}", style="dim")
        session_id = hit.session_id
        if session_id is not None:
            line.append("  session ")
            line.append_text(safe_line(str(session_id), "magenta", limit=60))
            line.append(" (archived)" if hit.archived else " (active)", style="dim")
        console.print(line)
        summary = str(hit.summary or "")
        if summary:
            for text_line in summary.splitlines()[:8]:
                console.print(Text("  ") + safe_line(text_line, limit=160))
            extra = len(summary.splitlines()) - 8
            if extra > 0:
                console.print(Text(f"  … {extra} more summary lines", style="dim"))
        events: list[Event] = list(hit.events or [])
        for event in events[:5]:
            row = Text("    ")
            row.append_text(_event_label(event))
            row.append("  ")
            row.append(event_preview(event, 120))
            console.print(row)
        if len(events) > 5:
            more = plural(len(events) - 5, "more matching event")
            console.print(Text(f"    … {more}", style="dim"))


def render_prompt(console: Console, messages: Sequence[Message]) -> None:
    for number, message in enumerate(messages):
        role = str(message.get("role", "?"))
        head = Text(f"[{number}] ", style="dim")
        head.append(one_line(role, 20), style="bold cyan")
        if message.get("tool_call_id"):
            head.append("  tool_call_id ")
            head.append_text(safe_line(str(message["tool_call_id"]), limit=60))
        console.print(head)
        content = message.get("content")
        if isinstance(content, str) and content:
            console.print(safe_text(content, limit=4000))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            line = Text("  → ")
            line.append_text(safe_line(str(function.get("name", "")), "magenta", limit=60))
            line.append("(")
            line.append(one_line(str(function.get("arguments", "")), 200))
            line.append(")  id ")
            line.append_text(safe_line(str(call.get("id")), "dim", limit=60))
            console.print(line)
        console.print()


# --- demo -----------------------------------------------------------------------------------


def demo_progress(console: Console) -> Callable[[DemoStep], None]:
    """An on_step callback printing compactions, rotations, recalls and crashes as they happen."""

    def show(step: DemoStep) -> None:
        kind = str(step.kind)
        if kind not in ("maintenance", "rotate", "recall", "crash", "scenario"):
            return
        style = {"maintenance": "green", "rotate": "cyan", "recall": "blue", "crash": "red"}
        line = Text(f"{kind:>11}  ", style=style.get(kind, "bold"))
        line.append_text(safe_line(str(step.description), limit=200))
        console.print(line)

    return show


def render_demo(console: Console, root: Path, scenario: str, stats: DemoStats) -> None:
    data = stats.to_json()
    rows: list[Row] = [
        ("memory root", safe_line(str(root), limit=300)),
        ("scenario", Text(scenario, style="bold")),
    ]
    for key, value in data.items():
        if isinstance(value, int | float | str):
            rows.append(
                (
                    key.replace("_", " "),
                    Text(f"{value:,}" if isinstance(value, int) else str(value)),
                )
            )
    console.print(_kv_table(rows, title="Demo played"))
    hint = Text("look around: ", style="dim")
    hint.append(f"session-inspector --memory-dir {one_line(str(root), 300)} status")
    console.print(hint, soft_wrap=True)  # a command to copy: never broken across lines


def _prompt_text(status: SessionStatus) -> Text:
    """The trigger's figure and its parts: `12,345 (recorded 11,000 + 1,345 appended)`."""
    tokens = status.prompt_tokens
    source = str(status.prompt_tokens_source or "unknown")
    if tokens is None:
        return Text("unknown (count rule only)", style="dim")
    out = Text(f"{int(tokens):,}")
    base = status.last_prompt_tokens
    appended = int(status.prompt_tokens_appended or 0)
    detail = f"  {source}"
    if base is not None and appended:
        cal = status.calibration
        scaled = f" × {cal.ratio:.2f}" if cal.samples >= 2 and cal.ratio != 1 else ""
        detail += f" {int(base):,} + {appended:,} appended (estimate{scaled})"
    out.append(detail, style="dim")
    return out
