"""Context budget: prompt tokens against the window, the two trigger thresholds marked, the next
pass's verdict, and a sparkline of prompt sizes over recent runs with compactions marked.

Keyboard-free and text-only, so it reads the same in 16 colours or with NO_COLOR: the bar uses
`█` (recorded by the provider) / `▓` (estimated: appended since, or reset by a pass) / `░`, the
reserve threshold is `R`, the `compress_at_percent` threshold is `%`, and a
compaction in the sparkline is `|`.

The figure is the trigger's: it carries the session's calibration (contract §5), so after a pass
it already holds the provider's fixed part and does not jump at the next recorded figure; the
head line says what was learned (`cal. 26,000 + 2.00×`). The bar keeps its width whatever the
verdict says: the verdict has a room of its own, set by the width alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.text import Text
from textual.widget import Widget

SPARK = "▁▂▃▄▅▆▇█"
MIN_BAR = 24
"""The bar keeps at least this many cells before the verdict is shortened or the sparkline goes."""
VERDICT_SHARE = 0.47
"""The verdict's room, as a share of the width (at least 16, at most 56 cells)."""


@dataclass(frozen=True)
class BudgetInfo:
    prompt_tokens: int | None = None
    estimated_tokens: int = 0
    """The part of `prompt_tokens` that is an estimate (events appended after the provider's
    figure, or the whole figure after a pass); drawn `▓` beside the recorded part's `█`."""
    window: int = 128000
    reserve: int = 16384
    compress_at_percent: float = 80.0
    will_compact: bool = False
    verdict: str = "idle"
    history: Sequence[tuple[int | None, bool]] = field(default_factory=tuple)
    """Prompt tokens per observed run, oldest first; True where a compaction happened."""
    overhead: int = 0
    ratio: float = 1.0
    samples: int = 0
    """The session's calibration (core.compaction.calibration): shown once it has two samples."""


def sparkline(history: Sequence[tuple[int | None, bool]], width: int) -> str:
    items = list(history)[-width:]
    values = [v for v, _ in items if v is not None]
    top = max(values) if values else 1
    out = []
    for value, compacted in items:
        if compacted:
            out.append("|")
        elif value is None:
            out.append(" ")
        else:
            out.append(SPARK[min(len(SPARK) - 1, int(value / max(top, 1) * (len(SPARK) - 1)))])
    return "".join(out)


def render_budget(info: BudgetInfo, width: int) -> Text:
    window = max(1, info.window)
    threshold = window - info.reserve
    pct_tokens = int(window * info.compress_at_percent / 100)
    prompt = info.prompt_tokens
    head: list[tuple[str, str]] = [("prompt ", "dim")]
    if prompt is None:
        head.append(("unknown", "bold"))
    else:
        head.append((f"{prompt:,}", "bold"))
        head.append((f" / {window:,} ({100 * prompt / window:.1f}%)", ""))
        estimated = min(prompt, max(0, info.estimated_tokens))
        if estimated >= prompt:
            head.append((" est.", "dim"))
        elif estimated:
            head.append((f" ▓{estimated:,} est.", "dim"))
    head += [
        ("  R=window−reserve ", "dim"),
        (f"{threshold:,}", ""),
        (f"  %={info.compress_at_percent:g}% ", "dim"),
        (f"{pct_tokens:,}", ""),
    ]
    if info.samples >= 2:
        head.append((f"  cal. {info.overhead:,} + {info.ratio:.2f}×", "dim"))
    if sum(len(t) for t, _ in head) > width and info.samples >= 2:
        head.pop()  # the calibration goes first
    if sum(len(t) for t, _ in head) > width:
        head[-4] = ("  R ", "dim")
    if sum(len(t) for t, _ in head) > width:
        head[-2] = ("  % ", "dim")
    if sum(len(t) for t, _ in head) > width:
        head = [(t.replace(" est.", "e"), style) for t, style in head]

    # The verdict's room depends on the width alone, so the bar does not change width when
    # the verdict's text does; a verdict longer than its room is shortened (the part in
    # parentheses first, then what follows a dash, then cut).
    room = min(56, max(16, int(width * VERDICT_SHARE)))
    verdict = _fit_verdict(info.verdict, room)
    spark_cells = min(20, max(6, len(info.history)))
    spark_room = 7 + spark_cells if info.history else 0
    if width - 3 - room - spark_room < MIN_BAR:
        spark_room = 0
    bar_width = max(10, min(60, width - 3 - room - spark_room))
    filled = 0 if prompt is None else min(bar_width, round(prompt / window * bar_width))
    estimated = 0 if prompt is None else min(prompt, max(0, info.estimated_tokens))
    solid = 0 if prompt is None else min(filled, round((prompt - estimated) / window * bar_width))
    cells = ["█" if i < solid else "▓" if i < filled else "░" for i in range(bar_width)]
    r_at = min(bar_width - 1, round(threshold / window * bar_width))
    p_at = min(bar_width - 1, round(pct_tokens / window * bar_width))
    cells[r_at] = "R"
    cells[p_at] = "%" if p_at != r_at else "R"
    over = prompt is not None and (prompt >= threshold or prompt >= pct_tokens)
    bar: list[tuple[str, str]] = [("[", "dim")]
    for ch in cells:
        if ch in "R%":
            bar.append((ch, "bold yellow"))
        elif ch == "█":
            bar.append((ch, "red" if over else "green"))
        elif ch == "▓":
            bar.append((ch, "red" if over else "yellow"))
        else:
            bar.append((ch, "dim"))
    bar.append(("] ", "dim"))
    bar.append((verdict, "bold yellow" if info.will_compact else "bold"))
    if info.history and spark_room:
        bar.append((" " * (room - len(verdict)), ""))
    used = sum(len(t) for t, _ in bar)
    spark_width = min(40, max(spark_cells, width - used - 7))
    if info.history and spark_room and used + 7 + spark_width <= width:
        bar.append(("  runs ", "dim"))
        bar.append((sparkline(info.history, spark_width), ""))
    out = Text("\n").join([Text.assemble(*head), Text.assemble(*bar)])
    out.no_wrap = True
    out.overflow = "ellipsis"
    return out


def _fit_verdict(verdict: str, room: int) -> str:
    if len(verdict) > room and " (" in verdict:
        verdict = verdict[: verdict.index(" (")]
    if len(verdict) > room and " — " in verdict:
        verdict = verdict[: verdict.index(" — ")]
    if len(verdict) > room:
        verdict = verdict[: room - 1] + "…"
    return verdict


class BudgetGauge(Widget):
    """Two lines: numbers, then bar + verdict + sparkline."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.info = BudgetInfo()

    def set_info(self, info: BudgetInfo) -> None:
        if info != self.info:
            self.info = info
            self.refresh()

    def render(self) -> Text:
        return render_budget(self.info, self.content_size.width or 80)
