"""The budget gauge's verdict, pure: what will happen to the prompt, in words (issue 22 item 6:
nothing runs until a pass does), and the figures the gauge draws.

    budget_verdict(trigger, preview, *, running, archived) -> (verdict, will_compact)
    budget_info(trigger, preview, size, history, state, *, running, archived) -> BudgetInfo
"""

from __future__ import annotations

from collections.abc import Sequence

from core.compaction.state import SessionState
from core.compaction.trigger import PromptSize, TriggerDecision
from inspector.tui.hot_window_model import CutPreview
from inspector.tui.widgets.budget_gauge import BudgetInfo


def budget_verdict(
    trigger: TriggerDecision, preview: CutPreview | None, *, running: bool, archived: bool
) -> tuple[str, bool]:
    """(what a pass would do now, whether it would compact)."""
    if archived:
        return "none: an archived session is never compacted", False
    if running:
        return "a pass is running now", True
    if not trigger.should_compress:
        return "idle: no pass needed", False
    useful = preview is not None and preview.plan.useful
    grows = (
        preview is not None
        and useful
        and trigger.trigger == "tokens"
        and trigger.prompt_tokens is not None
        and preview.plan.predicted_after_tokens is not None
        and preview.plan.predicted_after_tokens >= trigger.prompt_tokens
    )
    if grows:
        return "a pass would not commit — it would not shrink the prompt", False
    if preview is not None and useful:
        return f"a pass would compact now — m runs it ({preview.plan.path} path)", True
    return "a pass would skip: no useful cut", False


def budget_info(
    trigger: TriggerDecision,
    preview: CutPreview | None,
    size: PromptSize | None,
    history: Sequence[tuple[int | None, bool]],
    state: SessionState | None,
    *,
    running: bool,
    archived: bool,
) -> BudgetInfo:
    """Everything the gauge shows for the session on display."""
    verdict, will = budget_verdict(trigger, preview, running=running, archived=archived)
    calibration = state.calibration(trigger.context_window) if state is not None else None
    return BudgetInfo(
        prompt_tokens=trigger.prompt_tokens,
        estimated_tokens=estimated_part(trigger.prompt_tokens, size),
        window=trigger.context_window,
        reserve=trigger.reserve,
        compress_at_percent=trigger.compress_at_percent,
        will_compact=will,
        verdict=verdict,
        history=tuple(history),
        overhead=calibration.overhead if calibration is not None else 0,
        ratio=calibration.ratio if calibration is not None else 1.0,
        samples=calibration.samples if calibration is not None else 0,
    )


def estimated_part(tokens: int | None, size: PromptSize | None) -> int:
    """How much of the gauge's figure is an estimate rather than a provider's count."""
    if tokens is None or size is None or size.tokens != tokens:
        return 0
    return tokens if size.source == "estimated" else size.appended
