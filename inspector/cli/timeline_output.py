"""Human output of `timeline`, `prompt --at` and `dropped` (Rich; text from events escaped)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from inspector.safe_text import one_line, safe_line

if TYPE_CHECKING:
    from core.compaction.dropped import DroppedReport
    from core.timeline import RebuiltPrompt, Timeline


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "—"


def render_timeline(console: Console, timeline: Timeline) -> None:
    console.print(
        f"{timeline.calls:,} model calls, {timeline.passes:,} passes · window "
        f"{timeline.window:,} · threshold {timeline.threshold:,}"
        + (f" · {timeline.bad_lines} unreadable ledger lines" if timeline.bad_lines else "")
    )
    table = Table(box=box.SIMPLE, pad_edge=False)
    for name, justify in (
        ("row", "left"),
        ("at (UTC)", "left"),
        ("prompt", "right"),
        ("measured", "right"),
        ("what", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=name != "what")  # type: ignore[arg-type]
    for row in timeline.rows:
        stamp = str(row.get("at") or "")
        at = Text(one_line(stamp[11:23] if len(stamp) >= 23 else stamp, 24))  # from the file
        if row["kind"] == "call":
            what = Text(
                f"sys {_n(row['system_tokens'])} · summary {_n(row['summary_tokens'])} · "
                f"hot {_n(row['hot_tokens'])}/{_n(row['hot_events'])} ev · "
                f"task {_n(row['task_tokens'])}"
            )
            table.add_row(
                Text(f"call {row['call']}"), at, _n(row["estimate"]), _n(row["measured"]), what
            )
            continue
        label = Text()
        if not row.get("compacted"):
            label.append("no compaction: ", style="yellow")
            label.append(one_line(str(row.get("reason") or ""), 80))
        else:
            label.append_text(safe_line(str(row.get("chunk_id") or ""), "bold", limit=40))
            label.append(
                f" · {row.get('trigger') or 'forced'}/{row.get('path') or '?'}"
                + (" · split turn" if row.get("is_split_turn") else "")
                + (
                    f" · headroom moves {row['headroom_moves']}"
                    if row.get("headroom_moves")
                    else ""
                )
                + f" · {row.get('summary_backend') or '?'}"
                + (f" · {row['duration_ms']:.0f} ms" if row.get("duration_ms") else "")
                + (" · (from the index)" if not row.get("recorded") else "")
            )
            after = row.get("measured_after")
            label.append(
                f" · after {_n(row.get('predicted_after'))} predicted, {_n(after)} measured"
            )
        if row.get("not_smaller"):
            label.append("  NOT SMALLER", style="bold red")
        table.add_row(
            Text("pass", style="bold red" if row.get("not_smaller") else "bold magenta"),
            at,
            _n(row.get("prompt_before")),
            "",
            label,
        )
    console.print(table)


def render_rebuilt(console: Console, rebuilt: RebuiltPrompt) -> None:
    from inspector.cli.output import render_prompt

    head = Text(f"call {rebuilt.number}", style="bold")
    head.append(f"  {one_line(rebuilt.call_id or '', 20)}  {one_line(rebuilt.at or '', 30)}")
    if rebuilt.model:
        head.append("  model ")
        head.append_text(safe_line(rebuilt.model, limit=40))
    console.print(head)
    parts = rebuilt.parts
    console.print(
        f"estimate {_n(rebuilt.estimate)} (system {_n(parts['system']['tokens'])}, "
        f"summary {_n(parts['summary']['tokens'])}, hot window {_n(parts['hot']['tokens'])} "
        f"in {_n(parts['hot']['events'])} event{'' if parts['hot']['events'] == 1 else 's'}, "
        f"task {_n(parts['task']['tokens'])}) · "
        f"provider {_n(rebuilt.measured)}"
    )
    if rebuilt.exact:
        console.print(Text("rebuilt exactly: every part matches its digest", style="green"))
    else:
        for problem in rebuilt.problems:
            console.print(Text(f"not exact: {one_line(problem, 200)}", style="bold red"))
    console.print()
    render_prompt(console, rebuilt.messages)


def render_dropped(console: Console, report: DroppedReport) -> None:
    head = Text(f"{report.chunk_id}: ", style="bold")
    head.append(
        f"{len(report.dropped)} of {report.facts_total} facts dropped "
        f"({report.carried} carried after the pass)"
    )
    console.print(head)
    for key, value in report.sources.items():
        console.print(Text(f"  {key.replace('_', ' ')}: {one_line(str(value), 100)}", style="dim"))
    for kind, facts in report.groups().items():
        console.print(Text(f"\n{kind}s ({len(facts)})", style="bold cyan"))
        for fact in facts:
            line = Text("  • ")
            line.append_text(safe_line(fact.text, limit=200))
            extra = f"  ({len(fact.event_ids)} event{'s' if len(fact.event_ids) != 1 else ''}"
            extra += ", said by the user)" if fact.from_user else ")"
            line.append(extra, style="dim")
            console.print(line)
    if not report.dropped:
        console.print(Text("nothing dropped: every fact is carried after the pass", style="green"))


__all__ = ["render_dropped", "render_rebuilt", "render_timeline"]
