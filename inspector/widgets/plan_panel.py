"""The planner's answer, explained, with what-if inputs that move the cut without writing.

`show(plan, trigger)` draws the explanation (the plan's own notes: token path candidate and snap,
count path, pull-in, root pin and advance, split turn, or why nothing is useful). Editing the
what-if inputs posts `PlanPanel.WhatIfChanged`; the app re-plans in a worker with
`CompactionConfig.replace(...)` and calls `show` again. Nothing here touches the disk.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Static

from core.planner import CompactionPlan
from core.trigger import TriggerDecision
from inspector.safe_text import safe_text


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


def _int_or_none(text: str) -> int | None:
    text = text.strip().replace(",", "").replace("_", "")
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 0 else None


def render_plan(
    plan: CompactionPlan | None, trigger: TriggerDecision | None, what_if: WhatIf
) -> Text:
    out = Text()
    if what_if.active:
        out.append("WHAT-IF (nothing is written)\n", style="bold reverse")
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
            out.append(f"  split turn (starts at event {plan.turn_start_index})", style="bold")
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
    """Explanation + three what-if inputs (keep_recent_tokens, hot_window_events, prompt)."""

    DEFAULT_CSS = """
    PlanPanel { height: 1fr; }
    PlanPanel > #whatif-row { height: 1; }
    PlanPanel > #whatif-row > Label { width: auto; padding: 0 0 0 1; }
    PlanPanel > #whatif-row > Input { width: 1fr; min-width: 8; }
    PlanPanel > VerticalScroll { height: 1fr; }
    PlanPanel #plan-body { height: auto; }
    """

    class WhatIfChanged(Message):
        def __init__(self, what_if: WhatIf) -> None:
            super().__init__()
            self.what_if = what_if

    def compose(self) -> ComposeResult:
        with Horizontal(id="whatif-row"):
            yield Label("keep ")
            yield Input(
                placeholder="keep_recent_tokens", id="whatif-keep", type="integer", compact=True
            )
            yield Label("hot ")
            yield Input(
                placeholder="hot_window_events", id="whatif-hot", type="integer", compact=True
            )
            yield Label("prompt ")
            yield Input(placeholder="tokens", id="whatif-prompt", type="integer", compact=True)
        with VerticalScroll(id="plan-scroll"):
            yield Static(Text("planning…", style="dim"), id="plan-body", markup=False)

    @property
    def what_if(self) -> WhatIf:
        return WhatIf(
            keep_recent_tokens=_int_or_none(self.query_one("#whatif-keep", Input).value),
            hot_window_events=_int_or_none(self.query_one("#whatif-hot", Input).value),
            prompt_tokens=_int_or_none(self.query_one("#whatif-prompt", Input).value),
        )

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.WhatIfChanged(self.what_if))

    def focus_what_if(self) -> None:
        self.query_one("#whatif-keep", Input).focus()

    def show(self, plan: CompactionPlan | None, trigger: TriggerDecision | None) -> None:
        self.query_one("#plan-body", Static).update(render_plan(plan, trigger, self.what_if))
