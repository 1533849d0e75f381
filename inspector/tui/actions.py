"""The inspector's actions as data: `ACTIONS` (each `ActionSpec` as the palette, the footer
and the help list it), and the write actions as jobs: what each runs on the session and how
its result reads in the activity log. The app runs every job through a single thread worker
(`inspector.tui.write_actions.WriteActions`), so running, timing and reporting are written once.

    job = ActionJob(name, run=lambda manager: ..., describe=lambda result, ms: "...")
    MAINTENANCE, ROTATE, REPAIR; compact_job(focus, config); append_job(event)

`run` is called in a worker thread with the manager on display when the action started and
may raise (the app shows the error); `describe` gets its result and the elapsed ms.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from core.config import CompactionConfig
from core.maintenance.compaction_pass import PassResult
from core.maintenance.rotation import RotationResult
from core.manager import MemoryManager
from inspector.cli.output import repairs_done
from inspector.tui.widgets.demo_controls import compaction_line

T = TypeVar("T")


@dataclass(frozen=True)
class ActionSpec:
    """An action as the footer and the command palette list it."""

    action: str
    title: str
    help: str
    key: str


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("maintenance", "Run maintenance", "Request a (coalesced) background pass", "m"),
    ActionSpec("compact", "Force compaction", "Compact now, with optional focus text", "c"),
    ActionSpec("rotate", "Rotate session", "Close the session into session_archive/", "r"),
    ActionSpec("append", "Append event", "Append one event (type, role, text)", "a"),
    ActionSpec("repair", "Repair", "Rebuild the index, finish crashed passes", "R"),
    ActionSpec("recall", "Recall", "Search compacted history", "/"),
    ActionSpec("toggle_preview", "Toggle cut preview", "Show where a pass would cut", "p"),
    ActionSpec("what_if", "What-if", "Change keep/hot/prompt and watch the cut move", "w"),
    ActionSpec("toggle_follow", "Toggle follow tail", "Keep the newest event in view", "f"),
    ActionSpec("demo_toggle", "Demo play/pause", "Play or pause the demo agent", "space"),
    ActionSpec("demo_step", "Demo step", "Run one step of the demo agent", "s"),
    ActionSpec("timeline", "Timeline", "Every model call and pass, prompt sizes (tab 8)", "T"),
    ActionSpec(
        "timeline_go", "Go to this moment", "Every tab as it was at the Timeline's cursor", "g"
    ),
    ActionSpec(
        "timeline_recall",
        "Recall dropped fact",
        "Search Recall for the Timeline's selected dropped fact",
        "r",
    ),
    ActionSpec(
        "back_to_active", "Back to active session", "Leave the archived or past session", "b"
    ),
    ActionSpec("help", "Help: marks and keys", "What every mark, sign and key means", "?"),
    ActionSpec("quit", "Quit", "Leave the inspector", "q"),
)
"""Every action of the app, in the order the palette lists them (the footer and `?` too)."""


@dataclass(frozen=True)
class ActionJob(Generic[T]):
    """One write action: its name (as logged), what it runs, how its result reads."""

    name: str
    run: Callable[[MemoryManager], T]
    describe: Callable[[T, float], str]


def pass_text(result: PassResult) -> str:
    """A pass as the activity log shows it: the compaction line, or why it was skipped."""
    line = compaction_line(result.to_json())
    if line is not None:
        return line
    total = result.timings_ms.get("total", 0.0)
    return f"pass skipped: {result.reason or 'no reason given'} ({total:.0f} ms)"


class MaintenanceFailed(RuntimeError):
    """The background pass this request ran failed (its message is the pass's error)."""


def maintain(manager: MemoryManager) -> PassResult | None:
    """Ask for a (coalesced) background pass and wait for the pass that serves this request:
    its result, its error as MaintenanceFailed (even when a pass the agent asked for just
    before succeeded), or None when no pass ran (a read-only manager)."""
    try:
        return manager.request_maintenance().result()
    except Exception as exc:
        raise MaintenanceFailed(f"{type(exc).__name__}: {exc}") from exc


def _maintenance_text(result: PassResult | None, ms: float) -> str:
    return pass_text(result) if result is not None else f"no pass ran ({ms:.0f} ms)"


def _rotation_text(result: RotationResult, ms: float) -> str:
    if result.reason == "empty":
        return f"nothing to rotate: the session is empty, no archive made ({ms:.0f} ms)"
    where = result.archive_path.name if result.archive_path else "nothing to close"
    return f"closed {result.closed_session_id or '(none)'} → session_archive/{where} ({ms:.0f} ms)"


def _repair_text(repaired: Mapping[str, int], ms: float) -> str:
    done = repairs_done(repaired)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(done.items())) or "nothing to repair"
    return f"{counts} ({ms:.0f} ms)"


def _appended_text(stored: Mapping[str, Any], ms: float) -> str:
    return f"{stored.get('type')} {stored.get('id')} appended ({ms:.0f} ms)"


MAINTENANCE: ActionJob[PassResult | None] = ActionJob("maintenance", maintain, _maintenance_text)
ROTATE: ActionJob[RotationResult] = ActionJob("rotate", lambda m: m.rotate(), _rotation_text)
REPAIR: ActionJob[dict[str, int]] = ActionJob("repair", lambda m: m.repair(), _repair_text)


def compact_job(focus: str | None, config: CompactionConfig | None = None) -> ActionJob[PassResult]:
    """A forced pass, with the focus text the person typed (None: none) and, when given, a
    one-off config (the what-if values) for this pass alone."""
    return ActionJob(
        "compact",
        lambda m: m.save(force=True, focus=focus, config=config),
        lambda r, _ms: pass_text(r),
    )


def append_job(event: dict[str, Any]) -> ActionJob[Mapping[str, Any]]:
    """One event appended as the append form built it."""
    return ActionJob("append", lambda m: m.append(event), _appended_text)


__all__ = [
    "ACTIONS",
    "MAINTENANCE",
    "REPAIR",
    "ROTATE",
    "ActionJob",
    "ActionSpec",
    "MaintenanceFailed",
    "append_job",
    "compact_job",
    "maintain",
    "pass_text",
]
