"""Where a compaction cuts the event stream, and why (contract §5; design: Cut-Point Selection).

`plan_compaction(events, config)` is pure and O(n). A cut index `c` means `events[c:]` stay in the
hot window and `events[:c]` go to a chunk, except the pinned root. The returned `CompactionPlan`
explains itself: the TUI draws it and `session-inspector plan` prints it, so every decision
(candidate, snap, leading-context pull-in, advance, root pin, split turn) is recorded.

Steps, in order:

1. Legal cuts: the event at `c` is a turn boundary or split-allowed (`core.events.cut_class`), and
   no tool pair is separated: a `tool_call` at `j` with `tool_call_id` X makes the cuts
   `j < c <= k` illegal, `k` being the first later `tool_result` with X; with no such result,
   the cuts `j < c < u`, `u` being the next turn boundary after `j` (or n).
2. Token path: walk back from the newest event summing estimates; the first index `i` where the
   sum reaches `keep_recent_tokens` is the candidate; the cut is the first legal cut `>= i`.
3. Count path, only when the token path gave no useful cut: target `t = n - hot_window_events`
   (`t <= 0`: no cut), snapped to the last legal cut `<= t` (none: advance from 0).
4. Leading context: while the event before the cut is a system_event or screen_context, the cut
   moves back over it (those events are retained).
5. Root pin: the earliest turn boundary `r`; when `r < c` it is pinned as the first event of the
   new hot window and is in neither the compacted set nor any summary range.
6. Advance: while the compacted set (`[0, c)` minus the pinned root) is empty, try the next legal
   cut after the one before pull-in, pulling in again; none left: that path gives no cut.
7. Split turn: the first retained non-ambient event is not a turn boundary and a turn boundary
   precedes it, unless only the pinned root lies between that turn's start `s` and the cut.

Ranges (`history`, `prefix`, `pulled_in`) are half-open `(start, end)` index pairs. The pinned
root is never part of `history` or `prefix`, even when its index lies inside the span; use
`history_indices()` / `prefix_indices()`. For a plan that is not a split turn, `history` is
everything compacted and `prefix` is None.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, Protocol

from core.compaction.headroom import Headroom
from core.events import KNOWN_TYPES, CutClass, Event, cut_class, is_ambient, is_synthetic
from core.text import compact_json, content_text
from core.tokens import estimate_event_tokens

PathName = Literal["token", "count"]
Span = tuple[int, int]


class PlannerConfig(Protocol):
    """The two settings the planner reads (core.config.CompactionConfig has both)."""

    @property
    def keep_recent_tokens(self) -> int: ...

    @property
    def hot_window_events(self) -> int: ...


class CutStatus(StrEnum):
    """Whether the hot window may open at an event, and if not, why."""

    LEGAL = "legal"
    FORBIDDEN = "forbidden"
    """The event's cut class cannot start the hot window (tool_result, system_event, ...)."""
    TOOL_PAIR = "tool_pair"
    """The cut would separate a tool_call from its result (or from the turn still awaiting it)."""


@dataclass(frozen=True)
class ToolSpan:
    """A tool_call and the cuts it makes illegal: `call_index < c <= last_blocked`."""

    call_index: int
    result_index: int | None
    last_blocked: int


@dataclass(frozen=True)
class AdvanceStep:
    """One move forward because a cut would have compacted nothing."""

    from_cut: int | None
    """The legal cut (before pull-in) that compacted nothing; None: no legal cut at or before the
    count target, so the search starts from the beginning."""
    pulled_to: int | None
    """Where leading-context pull-in moved `from_cut`."""
    why: str
    to_cut: int | None
    """The next legal cut tried; None when none was left."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class PathTrace:
    """What one path (token or count) did."""

    path: PathName
    considered: bool
    candidate_index: int | None = None
    """Token path: the first index from the end where the kept sum reaches keep_recent_tokens.
    Count path: the target n - hot_window_events (may be <= 0)."""
    candidate_tokens: int | None = None
    """Token path: the estimate of events[candidate_index:]."""
    snapped_index: int | None = None
    """The legal cut the candidate snapped to (token: first at or after; count: last at or
    before), before pull-in and advance."""
    advanced: tuple[AdvanceStep, ...] = ()
    pulled_in: Span | None = None
    cut_index: int | None = None
    """The path's final cut after pull-in and advance; None: the path gave no useful cut."""
    reason: str | None = None
    """Why the path gave no cut, or why it was not considered."""

    @property
    def useful(self) -> bool:
        return self.cut_index is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "considered": self.considered,
            "candidate_index": self.candidate_index,
            "candidate_tokens": self.candidate_tokens,
            "snapped_index": self.snapped_index,
            "advanced": [step.to_json() for step in self.advanced],
            "pulled_in": _span_json(self.pulled_in),
            "cut_index": self.cut_index,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class CompactionPlan:
    """Where a pass would cut and why. Indices refer to the events the plan was made from."""

    n_events: int
    useful: bool
    path: PathName | None
    cut_index: int | None
    """Final cut after pull-in and advance: events[cut_index:] are retained."""
    first_kept_event_id: str | None
    """The id of events[cut_index]: the first retained event, never the pinned root nor the
    synthetic event this pass will add (contract §6)."""
    root_index: int | None
    """The earliest turn boundary, pinned or not."""
    pinned_root_index: int | None
    pinned_root_event_id: str | None
    is_split_turn: bool
    turn_start_index: int | None
    turn_start_event_id: str | None
    history: Span | None
    """Compacted events summarised as history (the pinned root excluded). Not a split turn:
    everything compacted. Split turn: the events before the turn start."""
    prefix: Span | None
    """Split turn only: turn start up to the cut (the pinned root excluded)."""
    pulled_in: Span | None
    """Leading context (system_event / screen_context) pulled into the hot window."""
    token_path: PathTrace
    count_path: PathTrace
    reason: str | None
    """Why there is no useful cut; None when there is one."""
    tokens_before: int
    kept_tokens_estimate: int
    """Pinned root plus retained events (the synthetic event is not known yet)."""
    compacted_tokens: int
    keep_recent_tokens: int
    hot_window_events: int
    notes: tuple[str, ...]
    """Human-readable account of every decision, in order."""
    headroom_moves: int = 0
    """How many legal cuts the cut moved forward so that the predicted prompt after the pass
    is not above `headroom_limit` (contract §5, Headroom)."""
    predicted_after_tokens: int | None = None
    """The prompt right after the pass, predicted (core.compaction.headroom); None: not
    predicted."""
    headroom_limit: int | None = None
    """`T − compact_headroom_percent% × window` when headroom applies, else None."""
    turn_continued: bool = False
    """Split turn whose user_input an earlier pass compacted: the turn's part in this window
    begins at that pass's synthetic event (`turn_start_index`), and `turn_start_event_id`
    is the input that event names (contract §5, Turn start)."""
    turn_start_chunk_id: str | None = None
    """Continued turn: the chunk that holds its user_input. The planner knows the chunk of the
    synthetic event (`meta.chunk_id`); `resolve_turn_start_chunk` follows that chunk's index
    entry (`turn_start_chunk_id`) to the one that holds the input. None otherwise."""
    turn_request: str | None = None
    """A split turn's request, shortened (its user_input's text, or what the synthetic event
    says under `Original request:`), for labels."""

    def compacted_indices(self) -> list[int]:
        """Events that go to the chunk, in order; the pinned root is never among them."""
        if self.cut_index is None:
            return []
        return [i for i in range(self.cut_index) if i != self.pinned_root_index]

    def kept_indices(self) -> list[int]:
        """The new hot window's events: the pinned root first, then events[cut_index:]."""
        if self.cut_index is None:
            return list(range(self.n_events))
        head = [self.pinned_root_index] if self.pinned_root_index is not None else []
        return head + list(range(self.cut_index, self.n_events))

    def history_indices(self) -> list[int]:
        return self._span_indices(self.history)

    def prefix_indices(self) -> list[int]:
        return self._span_indices(self.prefix)

    def compacted_event_ids(self, events: Sequence[Event]) -> list[str | None]:
        self._check(events)
        return [event_id(events[i]) for i in self.compacted_indices()]

    def kept_event_ids(self, events: Sequence[Event]) -> list[str | None]:
        self._check(events)
        return [event_id(events[i]) for i in self.kept_indices()]

    def to_json(self, events: Sequence[Event]) -> dict[str, Any]:
        """The contract §12 `plan` keys this module can know, plus the full explanation."""
        self._check(events)
        return {
            "useful": self.useful,
            "path": self.path,
            "cut_index": self.cut_index,
            "first_kept_event_id": self.first_kept_event_id,
            "pinned_root_event_id": self.pinned_root_event_id,
            "is_split_turn": self.is_split_turn,
            "turn_start_event_id": self.turn_start_event_id,
            "compacted_event_ids": self.compacted_event_ids(events),
            "kept_event_ids": self.kept_event_ids(events),
            "reason": self.reason,
            "n_events": self.n_events,
            "root_index": self.root_index,
            "pinned_root_index": self.pinned_root_index,
            "turn_start_index": self.turn_start_index,
            "history": _span_json(self.history),
            "prefix": _span_json(self.prefix),
            "pulled_in": _span_json(self.pulled_in),
            "tokens_before": self.tokens_before,
            "kept_tokens_estimate": self.kept_tokens_estimate,
            "compacted_tokens": self.compacted_tokens,
            "keep_recent_tokens": self.keep_recent_tokens,
            "hot_window_events": self.hot_window_events,
            "token_path": self.token_path.to_json(),
            "count_path": self.count_path.to_json(),
            "headroom_moves": self.headroom_moves,
            "predicted_after_tokens": self.predicted_after_tokens,
            "headroom_limit": self.headroom_limit,
            "turn_continued": self.turn_continued,
            "turn_start_chunk_id": self.turn_start_chunk_id,
            "turn_request": self.turn_request,
            "notes": list(self.notes),
        }

    def _span_indices(self, span: Span | None) -> list[int]:
        if span is None:
            return []
        return [i for i in range(span[0], span[1]) if i != self.pinned_root_index]

    def _check(self, events: Sequence[Event]) -> None:
        if len(events) != self.n_events:
            raise ValueError(
                f"plan was made for {self.n_events} events, got {len(events)}: re-plan first"
            )


def event_id(event: Event) -> str | None:
    value = event.get("id")
    return value if isinstance(value, str) else None


def cut_statuses(events: Sequence[Event]) -> list[CutStatus]:
    """The cut status of every index 0..n-1 (a cut at n would keep nothing)."""
    return list(_Analysis(events).status)


def legal_cuts(events: Sequence[Event]) -> list[bool]:
    """legal_cuts(events)[c] is True when the hot window may open at events[c]."""
    return list(_Analysis(events).legal)


def tool_spans(events: Sequence[Event]) -> list[ToolSpan]:
    """Every tool_call with a tool_call_id and the cuts it makes illegal, by call index."""
    return sorted(_Analysis(events).spans, key=lambda s: s.call_index)


def plan_compaction(
    events: Sequence[Event],
    config: PlannerConfig,
    *,
    tokens: Sequence[int] | None = None,
    headroom: Headroom | None = None,
) -> CompactionPlan:
    """Choose the cut (token path first, count path as fallback) and explain the choice.

    `headroom`: predict the prompt after the pass and, when the headroom applies, move the cut
    forward while that prediction is above its limit (contract §5, Headroom)."""
    n = len(events)
    toks = _token_estimates(events, tokens)
    keep = config.keep_recent_tokens
    hot = config.hot_window_events
    total = sum(toks)
    an = _Analysis(events)
    notes = [f"{n} events, {total:,} tokens; keep_recent_tokens {keep:,}, hot_window_events {hot}"]
    if an.root is not None:
        notes.append(f"root: event {an.root} ({an.kind(an.root)}), the earliest turn boundary")
    else:
        notes.append("root: none (no turn boundary in the stream)")

    token = _token_path(an, toks, keep, notes)
    if token.useful:
        count = PathTrace("count", considered=False, reason="not needed: the token path gave a cut")
        chosen: PathTrace | None = token
    else:
        count = _count_path(an, hot, notes)
        chosen = count if count.useful else None

    base: dict[str, Any] = {
        "n_events": n,
        "root_index": an.root,
        "token_path": token,
        "count_path": count,
        "tokens_before": total,
        "keep_recent_tokens": keep,
        "hot_window_events": hot,
    }
    if chosen is None or chosen.cut_index is None:
        reason = (
            "no events" if n == 0 else f"token path: {token.reason}; count path: {count.reason}"
        )
        notes.append(f"no compaction: {reason}")
        return _no_cut(base, reason, total, notes)
    final = _FinalCut(chosen.cut_index, chosen.pulled_in)
    if headroom is not None:
        final = _headroom(an, toks, final, headroom, notes)
    return _cut_plan(an, chosen, final, toks, base, notes)


@dataclass(frozen=True)
class _FinalCut:
    """The cut a path chose, once headroom had its say: where, the leading context pulled in,
    and what headroom did (legal cuts moved, the predicted prompt after, the limit it kept
    below; none of them without headroom)."""

    index: int
    pulled: Span | None
    headroom_moves: int = 0
    predicted_after_tokens: int | None = None
    headroom_limit: int | None = None


def _token_estimates(events: Sequence[Event], tokens: Sequence[int] | None) -> list[int]:
    if tokens is None:
        return [estimate_event_tokens(e) for e in events]
    if len(tokens) != len(events):
        raise ValueError(f"tokens has {len(tokens)} estimates for {len(events)} events")
    return list(tokens)


def _no_cut(base: dict[str, Any], reason: str, total: int, notes: list[str]) -> CompactionPlan:
    """The plan when neither path gave a useful cut: everything stays hot."""
    return CompactionPlan(
        **base,
        useful=False,
        path=None,
        cut_index=None,
        first_kept_event_id=None,
        pinned_root_index=None,
        pinned_root_event_id=None,
        is_split_turn=False,
        turn_start_index=None,
        turn_start_event_id=None,
        history=None,
        prefix=None,
        pulled_in=None,
        reason=reason,
        kept_tokens_estimate=total,
        compacted_tokens=0,
        notes=tuple(notes),
    )


def _cut_plan(
    an: _Analysis,
    chosen: PathTrace,
    final: _FinalCut,
    toks: Sequence[int],
    base: dict[str, Any],
    notes: list[str],
) -> CompactionPlan:
    """The plan for the final cut: root pin, split turn, ranges and estimates."""
    c = final.index
    events = an.events
    n = an.n
    total = sum(toks)
    pinned = an.root if an.root is not None and an.root < c else None
    if pinned is not None:
        notes.append(
            f"root pinned: event {pinned} lies before the cut; it opens the new hot window "
            "verbatim and is in neither the chunk nor any summary"
        )

    turn = _split_turn(an, c, pinned, notes)
    is_split, turn_start = turn.is_split, turn.start_index
    if is_split and turn_start is not None:
        history: Span = (0, turn_start)
        turn_prefix: Span = (turn_start, c)
        prefix: Span | None = turn_prefix
        notes.append(
            f"history: {_range_text(history, pinned)}; "
            f"turn prefix: {_range_text(turn_prefix, pinned)}"
        )
    else:
        history, prefix = (0, c), None

    for i in range(c):
        if is_synthetic(events[i]):
            notes.append(
                f"event {i} is the split-turn prefix summary of an earlier compaction; "
                "it is compacted with the rest"
            )
            break

    kept = total - sum(toks[:c]) + (toks[pinned] if pinned is not None else 0)
    compacted_n = c - (1 if pinned is not None else 0)
    kept_n = n - c + (1 if pinned is not None else 0)
    notes.append(
        f"compacts {compacted_n} event{_s(compacted_n)} ({total - kept:,} tokens); keeps "
        f"{kept_n} event{_s(kept_n)} ({kept:,} tokens"
        + (", pinned root included)" if pinned is not None else ")")
    )
    return CompactionPlan(
        **base,
        useful=True,
        path=chosen.path,
        cut_index=c,
        first_kept_event_id=event_id(events[c]),
        pinned_root_index=pinned,
        pinned_root_event_id=event_id(events[pinned]) if pinned is not None else None,
        is_split_turn=is_split,
        turn_start_index=turn_start if is_split else None,
        turn_start_event_id=turn.start_event_id if is_split else None,
        history=history,
        prefix=prefix,
        pulled_in=final.pulled,
        reason=None,
        kept_tokens_estimate=kept,
        compacted_tokens=total - kept,
        notes=tuple(notes),
        headroom_moves=final.headroom_moves,
        predicted_after_tokens=final.predicted_after_tokens,
        headroom_limit=final.headroom_limit,
        turn_continued=turn.continued,
        turn_start_chunk_id=turn.chunk_id,
        turn_request=turn.request,
    )


class _Analysis:
    """One pass over the events: classes, cut legality, root, and next/previous legal cuts."""

    def __init__(self, events: Sequence[Event]) -> None:
        n = len(events)
        self.events = events
        self.n = n
        self.classes = [cut_class(e) for e in events]
        self.ambient = [is_ambient(e) for e in events]
        self.root: int | None = next(
            (i for i, k in enumerate(self.classes) if k is CutClass.BOUNDARY), None
        )
        self.spans = self._tool_spans()

        diff = [0] * (n + 1)
        for span in self.spans:
            if span.call_index + 1 <= span.last_blocked:
                diff[span.call_index + 1] += 1
                diff[span.last_blocked + 1] -= 1
        self.status: list[CutStatus] = []
        depth = 0
        for c in range(n):
            depth += diff[c]
            if self.classes[c] is CutClass.FORBIDDEN:
                self.status.append(CutStatus.FORBIDDEN)
            elif depth > 0:
                self.status.append(CutStatus.TOOL_PAIR)
            else:
                self.status.append(CutStatus.LEGAL)
        self.legal = [s is CutStatus.LEGAL for s in self.status]

        # next_legal[i]: smallest legal cut >= i; prev_legal[i]: largest legal cut <= i.
        self.next_legal: list[int | None] = [None] * (n + 1)
        for i in range(n - 1, -1, -1):
            self.next_legal[i] = i if self.legal[i] else self.next_legal[i + 1]
        self.prev_legal: list[int | None] = [None] * n
        last: int | None = None
        for i in range(n):
            if self.legal[i]:
                last = i
            self.prev_legal[i] = last
        # ambient_start[c]: where leading-context pull-in moves a cut at c.
        self.ambient_start = [0] * (n + 1)
        for c in range(1, n + 1):
            self.ambient_start[c] = self.ambient_start[c - 1] if self.ambient[c - 1] else c

    def _tool_spans(self) -> list[ToolSpan]:
        open_calls: dict[Hashable, list[int]] = {}
        awaiting_boundary: list[int] = []
        next_boundary: dict[int, int] = {}
        spans: list[ToolSpan] = []
        for k, event in enumerate(self.events):
            etype = event.get("type")
            if self.classes[k] is CutClass.BOUNDARY:
                for j in awaiting_boundary:
                    next_boundary[j] = k
                awaiting_boundary.clear()
            if etype == "tool_call":
                key = _call_key(event)
                if key is not None:
                    open_calls.setdefault(key, []).append(k)
                    awaiting_boundary.append(k)
            elif etype == "tool_result":
                key = _call_key(event)
                if key is not None:
                    for j in open_calls.pop(key, ()):
                        spans.append(ToolSpan(j, k, k))
        for calls in open_calls.values():
            for j in calls:
                spans.append(ToolSpan(j, None, next_boundary.get(j, self.n) - 1))
        return spans

    def kind(self, i: int) -> str:
        event = self.events[i]
        etype = event.get("type")
        if etype in KNOWN_TYPES:
            return str(etype)
        return f"{etype if etype is not None else 'untyped'} event with role {event.get('role')}"

    def next_legal_after(self, c: int) -> int | None:
        return self.next_legal[c + 1] if c + 1 <= self.n else None

    def compacted_count(self, c: int) -> int:
        return c - (1 if self.root is not None and self.root < c else 0)

    def blocking_span(self, c: int) -> ToolSpan | None:
        return next((s for s in self.spans if s.call_index < c <= s.last_blocked), None)

    def why_not_legal(self, start: int, end: int, limit: int = 3) -> str:
        """Illegal events in [start, end) in runs: 'events 41–43 are tool_result (forbidden)'."""
        runs: list[tuple[int, int, CutStatus, str]] = []
        for i in range(start, end):
            label = self.kind(i)
            status = self.status[i]
            if runs and runs[-1][1] == i and runs[-1][2] is status and runs[-1][3] == label:
                runs[-1] = (runs[-1][0], i + 1, status, label)
            else:
                runs.append((i, i + 1, status, label))
        parts = []
        for a, b, status, label in runs[:limit]:
            if status is CutStatus.FORBIDDEN:
                why = "(forbidden)"
            else:
                span = self.blocking_span(a)
                why = "(would separate a tool pair)" if span is None else f"({_span_why(span)})"
            verb = "is" if b - a == 1 else "are"
            parts.append(f"{_inclusive('event', a, b)} {verb} {label} {why}")
        if len(runs) > limit:
            parts.append(f"… ({len(runs) - limit} more runs)")
        return "; ".join(parts)

    def why_empty(self, c_pre: int, c: int) -> str:
        if c == 0 and c_pre == 0:
            return "nothing lies before it"
        if c == 0:
            return f"only leading context ({_inclusive('event', 0, c_pre)}) lies before it"
        pulled = (
            f" once {_inclusive('event', c, c_pre)} move into the hot window" if c < c_pre else ""
        )
        return f"only the pinned root (event {self.root}) lies before it{pulled}"


def _settle(an: _Analysis, start: int, steps: list[AdvanceStep]) -> tuple[int, int, str | None]:
    """Pull-in and advance from a legal cut: (cut before pull-in, final cut, failure reason)."""
    c_pre = start
    while True:
        c = an.ambient_start[c_pre]
        if an.compacted_count(c) > 0:
            return c_pre, c, None
        why = an.why_empty(c_pre, c)
        nxt = an.next_legal_after(c_pre)
        steps.append(AdvanceStep(c_pre, c, why, nxt))
        if nxt is None:
            return (
                c_pre,
                c,
                f"no useful cut: the cut at {c_pre} would compact nothing ({why}) "
                "and no legal cut lies after it",
            )
        c_pre = nxt


def _finish(
    an: _Analysis, name: PathName, start: int, notes: list[str], steps: list[AdvanceStep], **kw: Any
) -> PathTrace:
    """Run pull-in and advance from `start` and record them (notes and trace)."""
    c_pre, c, failure = _settle(an, start, steps)
    for step in steps:
        if step.from_cut is None:
            notes.append(f"{name} path: {step.why}; first legal cut: {step.to_cut}")
        else:
            nxt = "none left" if step.to_cut is None else f"advance to legal cut {step.to_cut}"
            notes.append(
                f"{name} path: the cut at {step.from_cut} would compact nothing ({step.why}); "
                + nxt
            )
    if failure is not None:
        notes.append(f"{name} path: {failure}")
        return PathTrace(name, True, advanced=tuple(steps), reason=failure, **kw)
    pulled: Span | None = (c, c_pre) if c < c_pre else None
    if pulled is not None:
        kinds = ", ".join(sorted({an.kind(i) for i in range(c, c_pre)}))
        notes.append(
            f"leading context: {_inclusive('event', c, c_pre)} ({kinds}) pulled into the hot "
            f"window; the cut moves from {c_pre} to {c}"
        )
    opens = f", leading context before {an.kind(c_pre)} at {c_pre}" if pulled is not None else ""
    notes.append(f"{name} path: cut at {c} ({an.kind(c)}{opens})")
    return PathTrace(name, True, advanced=tuple(steps), pulled_in=pulled, cut_index=c, **kw)


def _token_path(an: _Analysis, toks: Sequence[int], keep: int, notes: list[str]) -> PathTrace:
    total = 0
    candidate: int | None = None
    for i in range(an.n - 1, -1, -1):
        total += toks[i]
        if total >= keep:
            candidate = i
            break
    if candidate is None:
        reason = (
            "no events"
            if an.n == 0
            else f"all {an.n} event{_s(an.n)} ({total:,} tokens) fit in keep_recent_tokens {keep}"
        )
        notes.append(f"token path: {reason}")
        return PathTrace("token", True, reason=reason)
    notes.append(
        f"token path: {_inclusive('event', candidate, an.n)} sum to {total:,} ≥ {keep:,} tokens; "
        f"candidate index {candidate} ({an.kind(candidate)})"
    )
    snapped = an.next_legal[candidate]
    if snapped is None:
        reason = f"no legal cut at or after index {candidate}: {an.why_not_legal(candidate, an.n)}"
        notes.append(f"token path: {reason}")
        return PathTrace(
            "token", True, candidate_index=candidate, candidate_tokens=total, reason=reason
        )
    if snapped != candidate:
        notes.append(
            f"token path: index {candidate} is not a legal cut "
            f"({an.why_not_legal(candidate, snapped, limit=2)}); "
            f"first legal cut after it: {snapped} ({an.kind(snapped)})"
        )
    return _finish(
        an,
        "token",
        snapped,
        notes,
        [],
        candidate_index=candidate,
        candidate_tokens=total,
        snapped_index=snapped,
    )


def _count_path(an: _Analysis, hot: int, notes: list[str]) -> PathTrace:
    target = an.n - hot
    if target <= 0:
        reason = (
            f"count target {an.n} − hot_window_events {hot} = {target} ≤ 0: "
            "every event fits in the hot window"
        )
        notes.append(f"count path: {reason}")
        return PathTrace("count", True, candidate_index=target, reason=reason)
    snapped = an.prev_legal[min(target, an.n - 1)]
    notes.append(f"count path: target index {an.n} − {hot} = {target}")
    steps: list[AdvanceStep] = []
    if snapped is None:
        first = an.next_legal[0]
        why = f"no legal cut at or before target {target}"
        steps.append(AdvanceStep(None, None, why, first))
        if first is None:
            reason = f"no useful cut: no legal cut anywhere ({an.why_not_legal(0, an.n)})"
            notes.append(f"count path: {reason}")
            return PathTrace(
                "count", True, candidate_index=target, advanced=tuple(steps), reason=reason
            )
        start = first
    else:
        start = snapped
        if snapped != target:
            notes.append(
                f"count path: index {target} is not a legal cut "
                f"({an.why_not_legal(target, target + 1)}); last legal cut at or before it: "
                f"{snapped} ({an.kind(snapped)})"
            )
    return _finish(an, "count", start, notes, steps, candidate_index=target, snapped_index=snapped)


@dataclass(frozen=True)
class _Turn:
    is_split: bool
    start_index: int | None = None
    """Where the turn's part of the window begins: its user_input, or (continued) the synthetic
    event of the earlier pass that compacted that input."""
    start_event_id: str | None = None
    continued: bool = False
    chunk_id: str | None = None
    request: str | None = None


def _split_turn(an: _Analysis, c: int, pinned: int | None, notes: list[str]) -> _Turn:
    """Whether the final cut c splits a turn, and that turn's start (contract §5, Split turn
    and Turn start): the latest user_input before the cut in append order. When an earlier
    pass compacted it, the window holds that pass's synthetic event instead (after the pinned
    root, before the rest of the turn) and the input is the one its
    `meta.turn_start_event_id` names (an older event without it: the synthetic event's id)."""
    f = next((i for i in range(c, an.n) if not an.ambient[i]), None)
    if f is None or an.classes[f] is CutClass.BOUNDARY:
        if f is not None:
            notes.append(f"not a split turn: the hot window opens on a turn boundary (event {f})")
        return _Turn(False)
    if an.root is None or an.root >= f:
        notes.append(
            f"not a split turn: no turn boundary precedes event {f} ({an.kind(f)}) it opens on"
        )
        return _Turn(False)
    s = next(
        (
            i
            for i in range(c - 1, -1, -1)
            if an.classes[i] is CutClass.BOUNDARY or is_synthetic(an.events[i])
        ),
        None,
    )
    assert s is not None  # the root precedes the cut
    if an.classes[s] is not CutClass.BOUNDARY:
        meta = an.events[s].get("meta")
        named = meta.get("turn_start_event_id") if isinstance(meta, dict) else None
        start_id = named if isinstance(named, str) and named else event_id(an.events[s])
        chunk = meta.get("chunk_id") if isinstance(meta, dict) else None
        chunk_id = chunk if isinstance(chunk, str) else None
        request = _request_of(an.events[s])
        notes.append(
            f"split turn: the hot window opens on {an.kind(f)} at {f}, inside the turn whose "
            f"user_input ({start_id}) an earlier pass compacted"
            + (f" (the synthetic event came from chunk {chunk_id})" if chunk_id else "")
            + (f" (request: {request})" if request else "")
            + f"; its synthetic event {s} stands for it; no history part: the prefix "
            "continues that turn"
        )
        return _Turn(True, s, start_id, continued=True, chunk_id=chunk_id, request=request)
    if s == pinned and c == s + 1:
        notes.append(
            f"not a split turn: only the pinned root lies between its turn start ({s}) and the cut"
        )
        return _Turn(False)
    request = _request_of(an.events[s])
    notes.append(
        f"split turn: the hot window opens on {an.kind(f)} at {f}, inside the turn started by "
        f"event {s} ({an.kind(s)}"
        + (", the pinned root" if s == pinned else "")
        + (f": {request})" if request else ")")
    )
    return _Turn(True, s, event_id(an.events[s]), request=request)


def _request_of(event: Event) -> str | None:
    """A turn's request, shortened to one line, from its user_input or from the synthetic
    event that stands for it (`Original request:`); None when there is no text."""
    from core.compaction.runs import flatten_summary  # only split turns need it

    text = content_text(event.get("content"))
    if is_synthetic(event):
        text = flatten_summary(text).request
    line = " ".join(text.split())
    if not line:
        return None
    return line if len(line) <= 80 else line[:79] + "…"


class _PromptAfter:
    """The predicted prompt after a pass for each candidate cut (contract §5, Headroom).

    Prefix sums make the kept and compacted estimates O(1) per cut. The split-turn check is
    O(1) too once the turn tables are built — only when the cut has to move (`index_turns`);
    until then a prediction asks _split_turn itself, as the plan does."""

    def __init__(self, an: _Analysis, toks: Sequence[int], hr: Headroom) -> None:
        self.an, self.toks, self.hr = an, toks, hr
        self.pre = [0]
        for t in toks:
            self.pre.append(self.pre[-1] + t)
        self.total = self.pre[-1]
        self.first_open: list[int] = []
        """first_open[c]: the first event at or after c that is not ambient context (n: none)."""
        self.last_start: list[int] = []
        """last_start[c]: the last turn boundary or synthetic event before c (-1: none)."""

    def index_turns(self) -> None:
        """Build the two tables the split-turn check reads (once)."""
        if self.first_open:
            return
        an, n = self.an, self.an.n
        first_open, last_start = self.first_open, self.last_start
        first_open.extend([n] * (n + 1))
        for i in range(n - 1, -1, -1):
            first_open[i] = first_open[i + 1] if an.ambient[i] else i
        last_start.extend([-1] * (n + 1))
        for i in range(n):
            starts = an.classes[i] is CutClass.BOUNDARY or is_synthetic(an.events[i])
            last_start[i + 1] = i if starts else last_start[i]

    def split_start(self, cut: int, pinned: int | None) -> int | None:
        """The start of the turn a cut at `cut` splits (None: not a split turn), as
        _split_turn decides it."""
        an = self.an
        if not self.first_open:
            return _split_turn(an, cut, pinned, []).start_index
        f = self.first_open[cut]
        if f == an.n or an.classes[f] is CutClass.BOUNDARY:
            return None
        if an.root is None or an.root >= f:
            return None
        s = self.last_start[cut]
        if an.classes[s] is CutClass.BOUNDARY and s == pinned and cut == s + 1:
            return None
        return s

    def predict(self, cut: int) -> int:
        """The prompt after a pass cutting at `cut`, as the provider will count it."""
        an, toks, pre, total = self.an, self.toks, self.pre, self.total
        pinned = an.root if an.root is not None and an.root < cut else None
        kept = total - pre[cut] + (toks[pinned] if pinned is not None else 0)
        start = self.split_start(cut, pinned)
        prefix: tuple[int, bool] | None = None
        if start is not None:
            s = start
            in_prefix = (
                pre[cut] - pre[s] - (toks[pinned] if pinned is not None and pinned >= s else 0)
            )
            history = s - (1 if pinned is not None and pinned < s else 0)
            prefix = (in_prefix, history > 0)
        return self.hr.predict_after(kept, total - kept, prefix)


def _headroom(
    an: _Analysis, toks: Sequence[int], chosen: _FinalCut, hr: Headroom, notes: list[str]
) -> _FinalCut:
    """The cut with the predicted prompt after the pass: while headroom applies and that
    prediction is above its limit, the next legal cut, with leading context pulled in again;
    never past the last legal cut (contract §5, Headroom)."""
    c, pulled = chosen.index, chosen.pulled
    active_limit = hr.limit if hr.active else None
    after = _PromptAfter(an, toks, hr)
    predicted = after.predict(c)
    limit = hr.limit
    if not hr.active or limit is None:
        if hr.threshold is not None and not hr.active:
            notes.append(
                f"headroom: not applied (the calibration has {hr.calibration.samples} sample"
                f"{_s(hr.calibration.samples)}, it needs 2); predicted prompt after the pass "
                f"{predicted:,}"
            )
        return _FinalCut(c, pulled, 0, predicted, active_limit)
    start, first = c, predicted
    c, pulled, moves, predicted = _move_cut(after, c, pulled, predicted, limit, notes)
    why = (
        f"threshold {hr.threshold:,} − compact_headroom_percent {hr.headroom_percent:g}% × "
        f"window {hr.window:,} = {limit:,}"
    )
    if moves:
        notes.append(
            f"headroom: the prompt after a cut at {start} would be {first:,} tokens "
            f"(overhead {hr.calibration.overhead:,} + ratio {hr.calibration.ratio:.2f} × "
            f"estimate), above {why}; the cut moves {moves} legal cut{_s(moves)} forward to "
            f"{c}, predicted {predicted:,}"
        )
    else:
        notes.append(f"headroom: predicted prompt after the pass {predicted:,} ≤ {why}")
    return _FinalCut(c, pulled, moves, predicted, active_limit)


def _move_cut(
    after: _PromptAfter,
    c: int,
    pulled: Span | None,
    predicted: int,
    limit: int,
    notes: list[str],
) -> tuple[int, Span | None, int, int]:
    """(cut, pulled-in span, moves, predicted): the cut stepped from legal cut to legal cut
    (from the one before pull-in, pulling in again) until the prediction is within `limit`
    or no legal cut is left — the headroom loop, apart from the notes that explain it."""
    an = after.an
    c_pre = pulled[1] if pulled is not None else c
    moves = 0
    while predicted > limit:
        after.index_turns()
        nxt = an.next_legal_after(c_pre)
        if nxt is None:
            notes.append(
                f"headroom: predicted prompt after the pass {predicted:,} is still above "
                f"{limit:,}, but no legal cut lies after {c_pre}: the cut stays at {c}"
            )
            break
        c_pre = nxt
        c = an.ambient_start[c_pre]
        pulled = (c, c_pre) if c < c_pre else None
        moves += 1
        predicted = after.predict(c)
    return c, pulled, moves, predicted


def _call_key(event: Event) -> Hashable | None:
    value = event.get("tool_call_id")
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    return ("json", compact_json(value))


def _span_why(span: ToolSpan) -> str:
    if span.result_index is None:
        return f"tool_call {span.call_index} awaits a result until the next turn boundary"
    return f"separates tool_call {span.call_index} from its tool_result {span.result_index}"


def _span_json(span: Span | None) -> list[int] | None:
    return None if span is None else [span[0], span[1]]


def _inclusive(noun: str, a: int, b: int) -> str:
    """Half-open [a, b) as text: 'event 4' or 'events 4–7'."""
    return f"{noun} {a}" if b - a == 1 else f"{noun}s {a}–{b - 1}"


def _range_text(span: Span, pinned: int | None) -> str:
    a, b = span
    if a < b and a == pinned:
        a += 1
    if a >= b:
        return "empty"
    text = _inclusive("event", a, b)
    if pinned is not None and a < pinned < b:
        text += f" without the pinned root {pinned}"
    return text


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def resolve_turn_start_chunk(
    plan: CompactionPlan, entry_extra: Callable[[str], dict[str, Any] | None]
) -> CompactionPlan:
    """A continued turn's plan with `turn_start_chunk_id` set to the chunk that holds the
    turn's user_input. `entry_extra(chunk_id)` gives an index entry's extra fields (None: no
    such entry); the entry of the chunk the synthetic event came from names that chunk in its
    `turn_start_chunk_id` (an older entry without it: that chunk itself is taken)."""
    if not plan.turn_continued or plan.turn_start_chunk_id is None:
        return plan
    extra = entry_extra(plan.turn_start_chunk_id)
    named = extra.get("turn_start_chunk_id") if extra is not None else None
    if not isinstance(named, str) or named == plan.turn_start_chunk_id:
        return plan
    notes = (*plan.notes[:-1], f"the turn's user_input is in chunk {named}", plan.notes[-1])
    return dataclasses.replace(plan, turn_start_chunk_id=named, notes=notes)
