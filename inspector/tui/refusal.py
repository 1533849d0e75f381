"""Which actions the app refuses, when, and why: pure, over what the app is showing.

    shown(action, gate) -> bool          # the footer, the palette and Textual's check_action
    refusal(action, gate) -> str | None  # the reason, in words a person can act on

Writes are refused when the inspector is read-only or shows an archive or a past moment; the
demo's keys without a demo, read-only, or once the demo has ended; `b` when already on the
active session.
"""

from __future__ import annotations

from dataclasses import dataclass

WRITE_ACTIONS = frozenset({"maintenance", "compact", "rotate", "append", "repair"})
DEMO_ACTIONS = frozenset({"demo_toggle", "demo_step"})


@dataclass(frozen=True)
class Gate:
    """What refusals depend on: how the inspector was started and what it shows."""

    read_only: bool
    archived: bool
    """An archived session or a past moment is on display."""
    demo: bool
    """A demo is running in the app."""
    demo_finished: bool = False


def shown(action: str, gate: Gate) -> bool:
    """Whether the action is offered here (the footer and the palette hide the rest)."""
    if action in WRITE_ACTIONS and (gate.read_only or gate.archived):
        return False
    if action in DEMO_ACTIONS and (not gate.demo or gate.read_only):
        return False
    return not (action == "back_to_active" and not gate.archived)


def refusal(action: str, gate: Gate) -> str | None:
    """Why an action cannot run here (None: it can), in words a person can act on."""
    if action in WRITE_ACTIONS:
        if gate.archived:
            return "an archived session is read-only (b goes back to the active session)"
        if gate.read_only:
            return "the inspector was started with --read-only"
    if action in DEMO_ACTIONS:
        if not gate.demo:
            return "there is no demo running (session-inspector demo starts one)"
        if gate.read_only:
            return "the inspector was started with --read-only"
        if gate.demo_finished:
            return "the demo has ended (q quits; session-inspector demo starts it again)"
    if action == "back_to_active" and not gate.archived:
        return "already on the active session"
    return None
