"""PromptView: the prompt the model would see next — system prompt + summary.md, the hot window
as native chat messages, the task — with a token estimate per message and the total against the
context window.

Public API (for the app):

    view = PromptView(id="prompt", system_prompt=DEFAULT_SYSTEM_PROMPT, task=DEFAULT_TASK)
    view.manager: MemoryManager | None  # attach() sets it; reload() builds through it
    view.context_window: int | None          # set by the app from SessionStatus.context_window;
                                             # None: manager.config.window_for(model)
    view.system_prompt -> str, view.task_text -> str   # what the two inputs hold
    view.set_messages(messages: Sequence[dict], context_window: int,
                      compress_at_percent: float | None = None) -> None
        # Plain data in: the output of MemoryManager.build_prompt(system_prompt, task).
    view.reload() -> None
        # In a thread worker: manager.build_prompt(view.system_prompt, view.task_text), then
        # set_messages. The app calls it when events.jsonl or summary.md change.
    view.total_tokens -> int                  # sum of
    core.compaction.prompt.estimate_message_tokens

Keys: e edits the task, E (shift+e) the system prompt; enter in either rebuilds; escape goes
back to the table. The cursor row's message is shown in full (capped) below the table; enter on
a row focuses it, escape goes back. Binding ids: "prompt.task", "prompt.system", "prompt.back".
Message posted (bubbles) after each build:
`PromptView.Built(total_tokens: int, context_window: int, message_count: int)`.
Styles: inspector/tui/styles/widgets/prompt_view.tcss. All message text is untrusted: shown as
Text, controls visible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Input, Label, Static

from core.compaction.prompt import estimate_message_tokens
from core.manager import MemoryManager
from core.text import compact_json
from inspector.defaults import DEFAULT_SYSTEM_PROMPT, DEFAULT_TASK
from inspector.safe_text import safe_line, safe_text
from inspector.tui.tables import replace_rows
from inspector.tui.views.chunks_view import describe_error
from inspector.tui.views.session_view import SessionView, ViewContext

DETAIL_LIMIT = 50_000

ROLE_STYLE = {"system": "magenta", "user": "bold cyan", "assistant": "green", "tool": "yellow"}


ROLE_COLUMN_CAP = 28
"""Cells of the role column at most (`assistant calls a,b,c` can be long): on an 80-column
SSH terminal the content column keeps about a third of the width."""


def message_label(msg: dict[str, Any]) -> Text:
    """Role plus what kind of message it is (tool calls, tool result id)."""
    role = msg.get("role")
    out = safe_line(role if isinstance(role, str) else "?", ROLE_STYLE.get(str(role), ""), limit=20)
    calls = msg.get("tool_calls")
    if isinstance(calls, list) and calls:
        names = [
            str(c.get("function", {}).get("name", "?"))
            for c in calls
            if isinstance(c, dict) and isinstance(c.get("function"), dict)
        ]
        out.append(" calls ", style="dim")
        out.append_text(safe_line(",".join(names) or "?", limit=30))
    elif msg.get("tool_call_id") is not None:
        out.append(" \u2190 ", style="dim")
        out.append_text(safe_line(str(msg.get("tool_call_id")), "dim", limit=20))
    return out


def message_preview(msg: dict[str, Any]) -> Text:
    content = msg.get("content")
    if content is None and msg.get("tool_calls"):
        return safe_line(compact_json(msg.get("tool_calls")), "dim", limit=120)
    text = content if isinstance(content, str) else compact_json(content)
    return safe_line(text, limit=120)


def message_detail(index: int, msg: dict[str, Any], tokens: int) -> Text:
    out = Text()
    out.append(f"#{index} ", style="dim")
    out.append_text(message_label(msg))
    out.append(f"  ~{tokens:,} tokens\n", style="dim")
    content = msg.get("content")
    if content is not None:
        text = content if isinstance(content, str) else compact_json(content)
        out.append_text(safe_text(text, limit=DETAIL_LIMIT) if text else Text("(empty)", "dim"))
    for call in msg.get("tool_calls") or ():
        out.append("\ntool call: ", style="bold")
        out.append_text(safe_text(compact_json(call), limit=DETAIL_LIMIT))
    return out


class PromptView(SessionView):
    """The assembled next prompt with per-message token estimates."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "edit_task", "Task", id="prompt.task"),
        Binding("E", "edit_system", "System", id="prompt.system"),
        Binding("escape", "focus_table", "Back to table", show=False, id="prompt.back"),
    ]
    TABLE = "#prompt-table"

    @dataclass(eq=False)
    class Built(Message):
        """A prompt was assembled and is now shown."""

        total_tokens: int
        context_window: int
        message_count: int

    @dataclass(eq=False)
    class _Loaded(Message):
        """The prompt built by the worker (or why it could not be)."""

        messages: list[dict[str, Any]]
        window: int
        percent: float | None
        error: str | None

    def __init__(
        self,
        *,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        task: str = DEFAULT_TASK,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.context_window: int | None = None
        self._initial_system = system_prompt
        self._initial_task = task
        self._messages: list[dict[str, Any]] = []
        self._tokens: list[int] = []

    def compose(self) -> ComposeResult:
        with Horizontal(classes="prompt-row"):
            yield Label("system")
            yield Input(self._initial_system, id="prompt-system", compact=True)
        with Horizontal(classes="prompt-row"):
            yield Label("task")
            yield Input(self._initial_task, id="prompt-task", compact=True)
        yield Static(Text("prompt not built yet", style="dim"), id="prompt-total")
        table: DataTable[Text] = DataTable(id="prompt-table", cursor_type="row", zebra_stripes=True)
        yield table
        with VerticalScroll(id="prompt-detail", can_focus=True):
            yield Static(Text(""), id="prompt-message", markup=False)

    def on_mount(self) -> None:
        table: DataTable[Text] = self.query_one("#prompt-table", DataTable)
        table.add_column("#", key="n")
        table.add_column("role", key="role")
        table.add_column("tokens", key="tokens")
        table.add_column("cum.", key="cum")
        table.add_column("content", key="content")

    @property
    def system_prompt(self) -> str:
        return self.query_one("#prompt-system", Input).value

    @property
    def task_text(self) -> str:
        return self.query_one("#prompt-task", Input).value

    @property
    def total_tokens(self) -> int:
        return sum(self._tokens)

    def set_messages(
        self,
        messages: Sequence[dict[str, Any]],
        context_window: int,
        compress_at_percent: float | None = None,
    ) -> None:
        """Show these chat messages (MemoryManager.build_prompt's output)."""
        self._messages = list(messages)
        self._tokens = [estimate_message_tokens(m) for m in self._messages]
        table: DataTable[Text] = self.query_one("#prompt-table", DataTable)
        cursor = table.cursor_row
        rows: list[tuple[str, list[Text]]] = []
        running = 0
        for i, (msg, tokens) in enumerate(zip(self._messages, self._tokens, strict=True)):
            running += tokens
            cells = [
                Text(str(i), justify="right", style="dim"),
                message_label(msg),
                Text(f"{tokens:,}", justify="right"),
                Text(f"{running:,}", justify="right", style="dim"),
                message_preview(msg),
            ]
            rows.append((str(i), cells))
        replace_rows(table, rows, caps={"role": ROLE_COLUMN_CAP})
        self._show_total(context_window, compress_at_percent)
        if self._messages:
            table.move_cursor(row=min(max(cursor, 0), len(self._messages) - 1))
            self._show_message(table.cursor_row)
        self.post_message(self.Built(self.total_tokens, context_window, len(self._messages)))

    def _show_total(self, window: int, percent_threshold: float | None) -> None:
        total = self.total_tokens
        pct = 100.0 * total / window if window > 0 else 0.0
        style = "bold green"
        if pct >= 100:
            style = "bold red"
        elif percent_threshold is not None and pct >= percent_threshold:
            style = "bold yellow"
        out = Text()
        out.append("next prompt ")
        out.append(f"~{total:,}", style=style)
        out.append(f" / {window:,} tokens ({pct:.1f}%)  \u00b7  {len(self._messages)} messages")
        if percent_threshold is not None:
            out.append(f"  \u00b7  compacts at {percent_threshold:g}%", style="dim")
        self.query_one("#prompt-total", Static).update(out)

    def _show_message(self, row: int) -> None:
        static = self.query_one("#prompt-message", Static)
        if 0 <= row < len(self._messages):
            static.update(message_detail(row, self._messages[row], self._tokens[row]))
        else:
            static.update(Text(""))

    def attach(self, context: ViewContext) -> None:
        """Read this session, and measure its prompt against this window."""
        super().attach(context)
        self.context_window = context.context_window

    def _read(self, manager: MemoryManager) -> None:
        """Rebuild through the manager in a thread worker, with the fields as they are now."""
        self._build_worker(manager, self.system_prompt, self.task_text, self.context_window)

    @work(thread=True, exclusive=True, group="prompt-build")
    def _build_worker(
        self, manager: MemoryManager, system_prompt: str, task: str, window: int | None
    ) -> None:
        percent = float(manager.config.compress_at_percent)
        try:
            messages = manager.build_prompt(system_prompt, task)
            if window is None:
                window = manager.config.window_for(manager.session_model())
            loaded = self._Loaded(messages, window, percent, None)
        except Exception as exc:
            loaded = self._Loaded([], window or 0, percent, describe_error(exc))
        self.post_result(loaded)

    @on(_Loaded)
    def _on_loaded(self, message: _Loaded) -> None:
        message.stop()
        if message.error is not None:
            self.query_one("#prompt-total", Static).update(
                safe_text(f"cannot build the prompt: {message.error}", "bold red", limit=500)
            )
            return
        self.set_messages(message.messages, message.window, message.percent)

    @on(Input.Submitted)
    def _on_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.reload()

    @on(DataTable.RowHighlighted, "#prompt-table")
    def _on_row(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_message(event.cursor_row)

    @on(DataTable.RowSelected, "#prompt-table")
    def _on_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.query_one("#prompt-detail").focus()

    def action_edit_task(self) -> None:
        self.query_one("#prompt-task", Input).focus()

    def action_edit_system(self) -> None:
        self.query_one("#prompt-system", Input).focus()
