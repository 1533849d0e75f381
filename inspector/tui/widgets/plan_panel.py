"""The planner's answer, explained, with what-if inputs that move the cut without writing.

`show(plan, trigger)` draws the explanation (the plan's own notes: token path candidate and snap,
count path, pull-in, root pin and advance, split turn, or why nothing is useful). Editing the
what-if inputs posts `PlanPanel.WhatIfChanged`; the app re-plans in a worker with
`CompactionConfig.replace(...)` and calls `show` again. Nothing here touches the disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Static

from core.compaction.planner import CompactionPlan
from core.compaction.trigger import TriggerDecision
from core.config import CompactionConfig
from inspector.safe_text import safe_line, safe_text


@dataclass(frozen=True)
class WhatIf:
    keep_recent_tokens: int | None = None
    hot_window_events: int | None = None
    prompt_tokens: int | None = None

    @property
    def active(self) -> bool:
        return any(
            v is not None
            for v in (self.keep_recent_tokens, self.hot_window_events, self.prompt_tokens)
        )


def parse_count(text: str, *, minimum: int) -> tuple[int | None, str | None]:
    """(value, None) for a whole number ≥ minimum ("20,000" and "20_000" allowed), (None, None)
    for an empty field, (None, why) for anything else."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    if not cleaned:
        return None, None
    try:
        value = int(cleaned)
    except ValueError:
        return None, f"{text.strip()!r} is not a whole number"
    if value < minimum:
        return None, f"{value} is below {minimum}"
    if value > MAX_WHAT_IF:
        return None, f"{value:,} is above {MAX_WHAT_IF:,}"
    return value, None


MAX_WHAT_IF = 100_000_000

FIELDS: tuple[tuple[str, str, int], ...] = (
    ("keep", "keep_recent_tokens", 1),
    ("hot", "hot_window_events", 1),
    ("prompt", "prompt tokens", 0),
)
"""(input id suffix, label, smallest value) of the what-if inputs."""


def what_if_values(what_if: WhatIf) -> str | None:
    """The what-if values that move the cut, as a person reads them ("keep_recent_tokens
    300"); None when none is set."""
    parts = []
    if what_if.keep_recent_tokens is not None:
        parts.append(f"keep_recent_tokens {what_if.keep_recent_tokens:,}")
    if what_if.hot_window_events is not None:
        parts.append(f"hot_window_events {what_if.hot_window_events:,}")
    return ", ".join(parts) or None


def force_values(config: CompactionConfig, what_if: WhatIf) -> tuple[str, str | None]:
    """(the config's values that place a forced pass's cut, the what-if values or None): what
    the force dialog says it will cut with."""
    uses = (
        f"keep_recent_tokens {config.keep_recent_tokens:,}, "
        f"hot_window_events {config.hot_window_events:,}"
    )
    return uses, what_if_values(what_if)


def render_plan(
    plan: CompactionPlan | None, trigger: TriggerDecision | None, what_if: WhatIf
) -> Text:
    out = Text()
    values = what_if_values(what_if)
    if values is not None:
        out.append("what-if: ", style="bold magenta")
        out.append(f"{values} (not the config's; `c` offers them once, `p` clears)\n")
    if trigger is not None:
        out.append("trigger: ", style="dim")
        out.append(
            "compact now" if trigger.should_compress else "idle",
            style="bold yellow" if trigger.should_compress else "bold",
        )
        out.append("\n")
        out.append_text(safe_text(trigger.reason, "dim"))
        out.append("\n")
    if plan is None:
        out.append("planning…", style="dim")
        return out
    out.append("cut: ", style="dim")
    if plan.useful:
        out.append(f"{plan.path} path at #{plan.cut_index}", style="bold")
        if plan.is_split_turn:
            out.append_text(safe_line(f"  split turn ({split_turn_label(plan)})", "bold"))
        if plan.pinned_root_index is not None:
            out.append(f"  root {plan.pinned_root_index} pinned")
    else:
        out.append("none", style="bold")
    out.append("\n")
    for note in plan.notes:
        out.append("• ", style="dim")
        out.append_text(safe_text(note))
        out.append("\n")
    return out


class PlanPanel(Vertical):
    """Explanation, and (after `w`) three what-if inputs: keep_recent_tokens, hot_window_events
    and prompt tokens, each labelled, showing the value in force as its placeholder, with a
    message under them when a value is not a usable number."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "next_field", "Next field", show=False, id="whatif.next"),
        Binding("up", "previous_field", "Previous field", show=False, id="whatif.previous"),
    ]

    HINT = "type a number · ↑↓ tab enter: fields · esc: back · the cut line follows"

    FOOTER_KEYS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ("", "0-9", "number"),
        ("up", "↑↓", "field"),
        ("tab", "tab", "next field"),
        ("escape", "esc", "back"),
    )
    """(key, shown as, what) for the footer while a what-if field has the keyboard: the
    fields take every printable key, so the app's letter keys cannot run and are not shown);
    the footer adds ctrl+q."""

    @dataclass(eq=False)
    class WhatIfChanged(Message):
        """The what-if values were edited (the app re-plans with them; nothing is written)."""

        what_if: WhatIf

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.errors: dict[str, str] = {}
        self._defaults: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="whatif"):
            yield Static(
                Text.assemble(("WHAT-IF", "bold"), " · nothing is written"),
                id="whatif-title",
            )
            yield Static(Text(self.HINT, style="italic"), id="whatif-hint", markup=False)
            for key, label, _ in FIELDS:
                with Horizontal(classes="whatif-row"):
                    yield Label(label)
                    yield Input(placeholder="", id=f"whatif-{key}", compact=True)
            yield Static(Text(""), id="whatif-error", markup=False)
        with VerticalScroll(id="plan-scroll"):
            yield Static(Text("planning…", style="dim"), id="plan-body", markup=False)

    HINT_MIN_HEIGHT = 10
    """Below this many rows the hint line is left out (the footer gives the same keys), so
    the three fields and the start of the plan stay on screen (80x24, 60x20)."""

    def on_resize(self) -> None:
        self.query_one("#whatif-hint", Static).display = self.size.height >= self.HINT_MIN_HEIGHT
        self.call_after_refresh(self._fit_placeholders)  # the fields' new widths

    def set_defaults(
        self, keep_recent_tokens: int, hot_window_events: int, prompt_tokens: int | None
    ) -> None:
        """The values in force, shown as each empty input's placeholder."""
        values = {
            "keep": f"{keep_recent_tokens:,} (config)",
            "hot": f"{hot_window_events:,} (config)",
            "prompt": f"{prompt_tokens:,} (last run)" if prompt_tokens is not None else "unknown",
        }
        if values == self._defaults:
            return
        self._defaults = values
        self._fit_placeholders()

    def _fit_placeholders(self) -> None:
        """Each value in force with where it comes from ("8 (config)"), or the number alone
        when the field is too narrow for both (60 columns): never a cut-off "8 (confi"."""
        for key, placeholder in self._defaults.items():
            field = self.query_one(f"#whatif-{key}", Input)
            room = field.content_region.width
            if room and cell_len(placeholder) >= room:
                placeholder = placeholder.split(" (")[0]
            field.placeholder = placeholder

    @property
    def what_if(self) -> WhatIf:
        values: dict[str, int | None] = {}
        for key, _label, minimum in FIELDS:
            values[key], _ = parse_count(
                self.query_one(f"#whatif-{key}", Input).value, minimum=minimum
            )
        return WhatIf(
            keep_recent_tokens=values["keep"],
            hot_window_events=values["hot"],
            prompt_tokens=values["prompt"],
        )

    def _validate(self) -> None:
        self.errors = {}
        for key, label, minimum in FIELDS:
            field = self.query_one(f"#whatif-{key}", Input)
            _, why = parse_count(field.value, minimum=minimum)
            field.set_class(why is not None, "-bad")
            if why is not None:
                self.errors[key] = f"{label}: {why} (the value in force is used)"
        message = Text()
        for i, why in enumerate(self.errors.values()):
            if i:
                message.append("\n")
            message.append("✗ " + why)
        self.query_one("#whatif-error", Static).update(message)

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self._validate()
        self.post_message(self.WhatIfChanged(self.what_if))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter moves to the next field (and from the last one back to the list)."""
        event.stop()
        self.screen.focus_next()

    def _fields(self) -> list[Input]:
        return [self.query_one(f"#whatif-{key}", Input) for key, _, _ in FIELDS]

    def _step_field(self, step: int) -> None:
        fields = self._fields()
        focused = self.screen.focused
        if focused in fields:
            index = fields.index(focused)
            fields[(index + step) % len(fields)].focus()

    def action_next_field(self) -> None:
        self._step_field(1)

    def action_previous_field(self) -> None:
        self._step_field(-1)

    def clear_what_if(self) -> bool:
        """Empty the what-if fields (the config's values are in force again); whether any
        held a value. The change is posted as WhatIfChanged, so the app plans again."""
        fields = [f for f in self._fields() if f.value]
        for field in fields:
            field.value = ""
        self.remove_class("-what-if")
        return bool(fields)

    def focus_what_if(self) -> None:
        self.add_class("-what-if")
        self.query_one("#whatif-keep", Input).focus()
        self.call_after_refresh(self._fit_placeholders)  # the fields have a width now

    def show(self, plan: CompactionPlan | None, trigger: TriggerDecision | None) -> None:
        self.query_one("#plan-body", Static).update(render_plan(plan, trigger, self.what_if))


def split_turn_label(plan: CompactionPlan) -> str:
    """Where a split turn's request is, in words (issue 22 item 2): its own user_input in the
    window, or the chunk an earlier pass compacted it into; never the pinned root unless the
    root is that turn's input."""
    request = f": {plan.turn_request}" if plan.turn_request else ""
    if plan.turn_continued:
        where = (
            f"its request is in chunk {plan.turn_start_chunk_id}"
            if plan.turn_start_chunk_id
            else "its request was compacted by an earlier pass"
        )
        return f"{where}{request}"
    if plan.turn_start_index is not None and plan.turn_start_index == plan.pinned_root_index:
        return f"starts at the pinned root, event {plan.turn_start_index}{request}"
    return f"starts at event {plan.turn_start_index}{request}"
