"""TimelineView: the session through time, from the prompt ledger (core.timeline).

A chart of the prompt size over model calls (the estimate, and the provider's figure where one
was recorded) against the trigger's threshold and the context window, with the passes marked;
below it, the row under the cursor: a call's prompt rebuilt as the model got it, or a pass's
before → after, the facts it dropped and the diff it made to summary.md. The keyboard moves the
cursor through calls and passes; on a pass, up/down select a dropped fact and `r` recalls it
(`RecallFact`: the app takes its text to the Recall tab's search, and names the events that
hold it); `g` takes every tab back to the moment under the cursor (`MomentReady`: the app
opens it read-only, `b` comes back to now). The timeline is read in a thread worker; a rebuild
too. The ledger is polled while the tab is on screen, so a live session keeps appending to the
chart while it is open.

Text from events and summaries is untrusted: it is shown as Rich Text, never as markup, with
control characters made visible (inspector.safe_text).
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static
from textual_plotext import PlotextPlot

from inspector.safe_text import one_line, safe_text
from inspector.tui.views.session_view import SessionView, ViewContext

if TYPE_CHECKING:
    from core.compaction.dropped import Fact
    from core.manager import MemoryManager
    from core.store.paths import MemoryPaths
    from core.timeline import RebuiltPrompt, Timeline

POLL_SECONDS = 1.0
"""How often the ledger's size is looked at (a grown ledger is read again)."""
DETAIL_CHARS = 20_000
"""A rebuilt message's text is cut to this on screen (the CLI prints it whole)."""


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "—"


def bucket(xs: list[int], ys: list[int], width: int) -> tuple[list[int], list[int]]:
    """At most ~2×width points: the largest y of each bucket of x (a chart cell cannot show
    more, and a 10,000-call session must not cost plotext 10,000 points)."""
    limit = max(2, 2 * width)
    if len(xs) <= limit:
        return xs, ys
    size = -(-len(xs) // limit)
    out_x: list[int] = []
    out_y: list[int] = []
    for start in range(0, len(xs), size):
        part = ys[start : start + size]
        k = max(range(len(part)), key=part.__getitem__)
        out_x.append(xs[start + k])
        out_y.append(part[k])
    return out_x, out_y


def summary_diff(before: str | None, after: str | None) -> Text:
    """A unified diff of two summary.md versions, escaped, + green and - red."""
    out = Text()
    lines = difflib.unified_diff(
        (before or "").splitlines(),
        (after or "").splitlines(),
        "summary.md before",
        "summary.md after",
        lineterm="",
        n=1,
    )
    for line in lines:
        style = ""
        if line.startswith("+") and not line.startswith("+++"):
            style = "green"
        elif line.startswith("-") and not line.startswith("---"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        out.append_text(safe_text(line, limit=400, style=style))
        out.append("\n")
    if not out.plain:
        out.append("summary.md did not change", style="dim")
    return out


class TimelineView(SessionView):
    """The Timeline (see the module docstring)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,j", "move(1)", "Next row", show=False, id="timeline.next"),
        Binding("left,k", "move(-1)", "Previous row", show=False, id="timeline.prev"),
        Binding("n", "next_pass(1)", "Next pass", id="timeline.next_pass"),
        Binding("N", "next_pass(-1)", "Previous pass", id="timeline.prev_pass"),
        Binding("home", "jump(0)", "First row", show=False, id="timeline.first"),
        Binding("end", "jump(-1)", "Latest row", show=False, id="timeline.last"),
        Binding("down", "select_fact(1)", "Next dropped fact", show=False, id="timeline.fact"),
        Binding("up", "select_fact(-1)", "Previous fact", show=False, id="timeline.prev_fact"),
        Binding("r", "recall_fact", "Recall fact", id="timeline.recall"),
        Binding("g", "go", "Go to this moment", id="timeline.go"),
    ]

    can_focus = True

    @dataclass
    class Loaded(Message):
        timeline: Timeline | None
        error: str | None
        size: int

    @dataclass
    class Rebuilt(Message):
        index: int
        detail: Text
        dropped: Text | None = None
        facts: list[Fact] | None = None
        chunk_id: str | None = None

    @dataclass
    class RecallFact(Message):
        """`r` on a dropped fact: search Recall for it; `event_ids` hold it."""

        text: str
        event_ids: list[str]
        chunk_id: str

    @dataclass
    class MomentReady(Message):
        """`g`: the moment under the cursor, laid out read-only under `root`."""

        root: Path
        label: str

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.timeline: Timeline | None = None
        self.cursor = -1
        """Index into `timeline.rows` (-1: nothing yet)."""
        self._ledger_size = -1
        self._follow = True
        """The cursor stays on the newest row while the user has not moved it."""
        self.facts: list[Fact] = []
        """The dropped facts of the pass under the cursor (empty on a call)."""
        self.fact_cursor = 0
        self._chunk_id: str | None = None
        self._dropped_head = Text()

    def compose(self) -> Any:
        yield PlotextPlot(id="timeline-chart")
        yield Static(Text("reading the prompt ledger …", style="dim"), id="timeline-row")
        with VerticalScroll(id="timeline-detail-scroll"):
            yield Static(Text(""), id="timeline-dropped")
            yield Static(Text(""), id="timeline-detail")

    def on_mount(self) -> None:
        self.set_interval(POLL_SECONDS, self._poll)

    def attach(self, context: ViewContext) -> None:
        same = self.manager is context.manager
        super().attach(context)
        if same:  # shown again: keep the cursor where the user left it
            return
        self._ledger_size = -1
        self.cursor = -1
        self._follow = True

    def _ledger_bytes(self) -> int:
        if self.manager is None:
            return -1
        from core.store.ledger import ledger_path

        try:
            return os.stat(ledger_path(self.manager.paths)).st_size
        except OSError:
            return 0

    def _poll(self) -> None:
        # A hidden tab does not read: it catches up within a second of being shown.
        if (
            self.manager is not None
            and self.is_on_screen
            and self._ledger_bytes() != self._ledger_size
        ):
            self._read(self.manager)

    @work(thread=True, exclusive=True, group="timeline-load")
    def _read(self, manager: MemoryManager) -> None:
        from core.timeline import build_timeline

        size = self._ledger_bytes()
        try:
            timeline: Timeline | None = build_timeline(
                manager.paths, manager.config, manager.session_model(), light=True
            )
            error = None
        except Exception as exc:  # shown in the view, never a crash of the app
            timeline, error = None, f"{type(exc).__name__}: {exc}"
        self.post_result(self.Loaded(timeline, error, size))

    @on(Loaded)
    def _on_loaded(self, message: Loaded) -> None:
        message.stop()
        self._ledger_size = message.size
        row = self.query_one("#timeline-row", Static)
        if message.error is not None or message.timeline is None:
            row.update(Text(f"cannot read the timeline: {one_line(message.error or '', 200)}"))
            return
        self.timeline = message.timeline
        rows = message.timeline.rows
        if not rows:
            row.update(
                Text(
                    "no model call recorded yet: build_prompt writes the prompt ledger "
                    "(session/prompts.jsonl)",
                    style="dim",
                )
            )
            self._draw()
            return
        if self._follow or self.cursor >= len(rows):
            self.cursor = len(rows) - 1
        self._draw()
        self._show_row()

    # -- the chart -------------------------------------------------------------------------

    def _draw(self) -> None:
        plot = self.query_one("#timeline-chart", PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        timeline = self.timeline
        if timeline is None:
            plot.refresh()
            return
        calls = [r for r in timeline.rows if r["kind"] == "call"]
        width = max(10, plot.size.width)
        plt.title("prompt tokens per model call")
        if calls:
            xs = [int(r["call"]) for r in calls]
            est_x, est_y = bucket(xs, [int(r["estimate"]) for r in calls], width)
            plt.plot(est_x, est_y, label="estimate", marker="braille", color="cyan")
            measured = [(int(r["call"]), r["measured"]) for r in calls if r["measured"] is not None]
            if measured:
                mx, my = bucket([x for x, _ in measured], [int(y) for _, y in measured], width)
                plt.scatter(mx, my, label="provider", marker="dot", color="green")
        # The y range is the data's and the threshold's: a 128k window over prompts of a few
        # thousand tokens would flatten them to the floor; the window is drawn when in range.
        top = max([timeline.threshold, *(int(r["estimate"]) for r in calls)], default=1)
        top = max(top, *(int(r["measured"]) for r in calls if r["measured"] is not None), 1)
        plt.ylim(0, top * 1.1)
        plt.hline(timeline.threshold, "yellow")
        window_note = "red: window"
        if timeline.window <= top * 1.1:
            plt.hline(timeline.window, "red")
        else:
            window_note = f"window {timeline.window:,} above"
        passes = [r for r in timeline.rows if r["kind"] == "pass"]
        for r in passes[-200:]:
            plt.vline(int(r.get("after_call") or 0) + 0.5, "magenta+")
        if 0 <= self.cursor < len(timeline.rows):
            here = timeline.rows[self.cursor]
            x = here["call"] if here["kind"] == "call" else int(here.get("after_call") or 0) + 0.5
            plt.vline(x, "white")
        plt.xlabel(f"call (│ magenta: a pass; yellow: threshold; {window_note})")
        plot.refresh()

    # -- the row under the cursor ----------------------------------------------------------

    def _row_text(self, row: dict[str, Any]) -> Text:
        timeline = self.timeline
        total = timeline.calls if timeline is not None else 0
        if row["kind"] == "call" and row.get("light"):
            text = Text(f"call {row['call']:,} of {total:,}", style="bold")
            text.append(
                f" · {one_line(str(row.get('at') or ''), 24)} · estimate {_n(row['estimate'])}"
                f" · provider {_n(row['measured'])}"
            )
            return text
        if row["kind"] == "call":
            text = Text(f"call {row['call']:,} of {total:,}", style="bold")
            text.append(
                f" · {one_line(str(row.get('at') or ''), 24)} · estimate {_n(row['estimate'])}"
                f" (system {_n(row['system_tokens'])}, summary {_n(row['summary_tokens'])}, "
                f"hot {_n(row['hot_tokens'])} in {_n(row['hot_events'])} "
                f"event{'' if row['hot_events'] == 1 else 's'}, task "
                f"{_n(row['task_tokens'])}) · provider {_n(row['measured'])}"
            )
            return text
        bad = bool(row.get("not_smaller"))
        text = Text("pass ", style="bold red" if bad else "bold magenta")
        text.append(one_line(str(row.get("chunk_id") or "no chunk"), 40), style="bold")
        text.append(
            f" · {one_line(str(row.get('at') or ''), 24)} · before {_n(row.get('prompt_before'))}"
            f" → after {_n(row.get('predicted_after'))} predicted, "
            f"{_n(row.get('measured_after'))} measured"
        )
        if bad:
            text.append(" · NOT SMALLER", style="bold red")
        return text

    def _show_row(self) -> None:
        timeline = self.timeline
        if timeline is None or not 0 <= self.cursor < len(timeline.rows):
            return
        row = timeline.rows[self.cursor]
        self.query_one("#timeline-row", Static).update(self._row_text(row))
        self.query_one("#timeline-detail", Static).update(Text("…", style="dim"))
        self._set_facts([], None, Text())
        if self.manager is not None:
            self._detail(self.manager.paths, self.cursor, row, self._summary_before(self.cursor))

    def _summary_before(self, index: int) -> str | None:
        """summary.md's digest after the last pass before row `index` (None: none kept)."""
        assert self.timeline is not None
        for other in reversed(self.timeline.rows[:index]):
            if other["kind"] == "pass" and other.get("summary_after_sha"):
                return str(other["summary_after_sha"])
        return None

    @work(thread=True, exclusive=True, group="timeline-detail")
    def _detail(
        self, paths: MemoryPaths, index: int, row: dict[str, Any], before_sha: str | None
    ) -> None:
        """Everything the worker reads comes in as values: the cursor and the session may
        change while it runs."""
        head: Text | None = None
        facts: list[Fact] | None = None
        chunk_id = row.get("chunk_id") if isinstance(row.get("chunk_id"), str) else None
        try:
            if row["kind"] == "call":
                from core.timeline import rebuild_call

                detail = rebuilt_text(rebuild_call(paths, str(row["call"])))
            else:
                detail = self._pass_text(row, paths, before_sha)
                if chunk_id is not None and row.get("compacted"):
                    head, facts = dropped_facts(paths, chunk_id)
        except Exception as exc:  # shown, never a crash
            detail = Text(f"cannot show this row: {one_line(str(exc), 200)}", style="red")
        self.post_result(self.Rebuilt(index, detail, head, facts, chunk_id))

    def _pass_text(self, row: dict[str, Any], paths: MemoryPaths, before_sha: str | None) -> Text:
        from core.timeline import summary_text

        text = Text()
        for label, key in (
            ("trigger", "trigger"),
            ("path", "path"),
            ("cut at event", "cut_index"),
            ("first kept", "first_kept_event_id"),
            ("split turn", "is_split_turn"),
            ("turn start", "turn_start_event_id"),
            ("headroom moves", "headroom_moves"),
            ("summarizer", "summary_backend"),
            ("fallback", "fallback"),
            ("duration ms", "duration_ms"),
            ("reason", "reason"),
        ):
            value = row.get(key)
            if value is None or value == "":
                continue
            text.append(f"{label:>15}  ", style="dim")
            text.append(one_line(str(value), 120))
            text.append("\n")
        after_sha = row.get("summary_after_sha")
        if after_sha is None:
            text.append("\nsummary.md after this pass was not kept", style="dim")
            return text
        text.append("\n")
        text.append_text(
            summary_diff(summary_text(paths, before_sha), summary_text(paths, after_sha))
        )
        return text

    @on(Rebuilt)
    def _on_rebuilt(self, message: Rebuilt) -> None:
        message.stop()
        if message.index == self.cursor:
            self.query_one("#timeline-detail", Static).update(message.detail)
            self._set_facts(message.facts or [], message.chunk_id, message.dropped or Text())

    # -- the dropped facts of a pass -------------------------------------------------------

    def _set_facts(self, facts: list[Fact], chunk_id: str | None, head: Text) -> None:
        self.facts = facts
        self.fact_cursor = 0
        self._chunk_id = chunk_id
        self._dropped_head = head
        self._show_facts()

    def _show_facts(self) -> None:
        text = self._dropped_head.copy()
        for i, fact in enumerate(self.facts[:DROPPED_SHOWN]):
            here = i == self.fact_cursor
            text.append("▶ " if here else "  ", style="bold yellow")
            text.append(f"{fact.kind:<10} ", style="dim")
            text.append_text(safe_text(one_line(fact.text, 140), style="reverse" if here else ""))
            if fact.from_user:
                text.append("  (user)", style="dim")
            events = len(fact.event_ids)
            text.append(f"  {events} event{'' if events == 1 else 's'}", style="dim")
            text.append("\n")
        if len(self.facts) > DROPPED_SHOWN:
            text.append(f"  … {len(self.facts) - DROPPED_SHOWN} more\n", style="dim")
        if self.facts:
            text.append("  ↑/↓ select · r recall the events that hold it\n", style="dim")
        dropped = self.query_one("#timeline-dropped", Static)
        dropped.update(text)
        dropped.display = bool(text.plain)

    def selected_fact(self) -> Fact | None:
        if not self.facts:
            return None
        return self.facts[min(self.fact_cursor, len(self.facts) - 1)]

    def action_select_fact(self, step: int) -> None:
        if not self.facts:
            self.query_one("#timeline-detail-scroll", VerticalScroll).scroll_relative(y=step)
            return
        self.fact_cursor = max(0, min(self.fact_cursor + step, len(self.facts[:DROPPED_SHOWN]) - 1))
        self._show_facts()

    def action_recall_fact(self) -> None:
        """`r`: the selected dropped fact to the Recall tab (the app does the searching)."""
        fact = self.selected_fact()
        if fact is None or self._chunk_id is None:
            self.notify(
                "no dropped fact here: r recalls a dropped fact of a pass (n goes to a pass)",
                severity="warning",
                markup=False,
            )
            return
        self.post_message(self.RecallFact(fact.text, list(fact.event_ids), self._chunk_id))

    # -- time travel -----------------------------------------------------------------------

    def action_go(self) -> None:
        """`g`: every tab back to the call under the cursor (for a pass: the first call after
        it), read-only; the app's `b` comes back to now."""
        number = self.moment_call()
        if number is None or self.manager is None:
            self.notify("no model call to go to", severity="warning", markup=False)
            return
        self._materialize(self.manager.paths, number)

    @work(thread=True, exclusive=True, group="timeline-moment")
    def _materialize(self, paths: MemoryPaths, number: int) -> None:
        from core.timeline import materialize_moment

        dest = Path(tempfile.mkdtemp(prefix="session-inspector-moment-")) / "memory"
        try:
            moment = materialize_moment(paths, str(number), dest)
        except Exception as exc:  # shown, never a crash
            self.app.call_from_thread(
                self.notify,
                one_line(f"cannot go to call {number}: {exc}", 200),
                severity="error",
                markup=False,
            )
            return
        at = moment.at or ""
        self.post_message(self.MomentReady(moment.root, f"call {number} at {at[11:19]} (past)"))

    # -- keys ------------------------------------------------------------------------------

    def _go(self, index: int) -> None:
        timeline = self.timeline
        if timeline is None or not timeline.rows:
            return
        self.cursor = max(0, min(index, len(timeline.rows) - 1))
        self._follow = self.cursor == len(timeline.rows) - 1
        self._draw()
        self._show_row()

    def moment_call(self) -> int | None:
        """The call the cursor stands for: the call itself, or for a pass the first call after
        it (the prompt the pass made), else the last call before it."""
        timeline = self.timeline
        if timeline is None or not 0 <= self.cursor < len(timeline.rows):
            return None
        rows = timeline.rows
        if rows[self.cursor]["kind"] == "call":
            return int(rows[self.cursor]["call"])
        for row in rows[self.cursor :]:
            if row["kind"] == "call":
                return int(row["call"])
        for row in reversed(rows[: self.cursor]):
            if row["kind"] == "call":
                return int(row["call"])
        return None

    def action_move(self, step: int) -> None:
        self._go(self.cursor + step)

    def action_jump(self, where: int) -> None:
        if self.timeline is not None:
            self._go(where if where >= 0 else len(self.timeline.rows) - 1)

    def action_next_pass(self, step: int) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        i = self.cursor + step
        while 0 <= i < len(timeline.rows):
            if timeline.rows[i]["kind"] == "pass":
                self._go(i)
                return
            i += step


DROPPED_SHOWN = 12
"""Dropped facts listed under a pass (`session-inspector dropped CHUNK` lists them all)."""


def dropped_facts(paths: MemoryPaths, chunk_id: str) -> tuple[Text, list[Fact]]:
    """The heading of what the pass that made `chunk_id` dropped, and the facts, most
    important first (core.compaction.dropped)."""
    from core.timeline import dropped_for_chunk

    text = Text()
    try:
        report = dropped_for_chunk(paths, chunk_id)
    except Exception as exc:  # shown, never a crash
        text.append(f"dropped facts: {one_line(str(exc), 160)}\n", style="dim")
        return text, []
    if not report.dropped:
        text.append(
            f"dropped: nothing — all {report.facts_total} facts are carried after it\n",
            style="green",
        )
        return text, []
    text.append(
        f"dropped: {len(report.dropped)} of {report.facts_total} facts nothing after it "
        f"carries (session-inspector dropped {chunk_id})\n",
        style="bold yellow",
    )
    return text, list(report.dropped)


def rebuilt_text(rebuilt: RebuiltPrompt) -> Text:
    """A rebuilt prompt for the screen: whether it is exact, then each message, escaped."""
    text = Text()
    parts = rebuilt.parts
    text.append(
        f"system {_n(parts['system']['tokens'])} · summary.md {_n(parts['summary']['tokens'])}"
        f" ({_n(parts['summary']['chunks'])} chunks) · hot window {_n(parts['hot']['tokens'])}"
        f" in {_n(parts['hot']['events'])} · task {_n(parts['task']['tokens'])} tokens\n",
        style="dim",
    )
    if rebuilt.exact:
        text.append("rebuilt exactly: every part matches its digest\n\n", style="green")
    else:
        for problem in rebuilt.problems:
            text.append(f"not exact: {one_line(problem, 200)}\n", style="bold red")
        text.append("\n")
    for i, message in enumerate(rebuilt.messages):
        text.append(f"[{i}] ", style="dim")
        text.append(one_line(str(message.get("role", "?")), 20), style="bold cyan")
        text.append("\n")
        content = message.get("content")
        if isinstance(content, str) and content:
            text.append_text(safe_text(content, limit=DETAIL_CHARS))
            text.append("\n")
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            text.append("  → ")
            text.append(one_line(str(function.get("name", "")), 60), style="magenta")
            text.append(f"({one_line(str(function.get('arguments', '')), 200)})\n")
        text.append("\n")
    return text


__all__ = [
    "TimelineView",
    "bucket",
    "dropped_facts",
    "rebuilt_text",
    "summary_diff",
]
