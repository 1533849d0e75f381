"""Planner invariants over random event streams (hypothesis).

Legality and tool pairs are checked against a naive reference written straight from contract §5,
not against the planner's own helpers, and the whole cut choice is compared with a naive
reference planner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.compaction.calibration import Calibration
from core.compaction.headroom import Headroom
from core.compaction.planner import CompactionPlan, legal_cuts, plan_compaction
from core.events import CutClass, Event, cut_class, is_ambient, is_synthetic

TYPES = [
    "user_input",
    "assistant_output",
    "role_output",
    "tool_call",
    "tool_call",
    "tool_result",
    "tool_result",
    "system_event",
    "screen_context",
    "custom",
]
ROLES = ["user", "assistant", "tool", "system", "robot", None]
CALL_IDS = ["A", "B", "C", None]


@dataclass(frozen=True)
class Cfg:
    keep_recent_tokens: int
    hot_window_events: int


@st.composite
def event_st(draw: st.DrawFn) -> Event:
    etype = draw(st.sampled_from(TYPES))
    event: Event = {"type": etype, "content": "x"}
    role = draw(st.sampled_from(ROLES))
    if role is not None:
        event["role"] = role
    if etype in ("tool_call", "tool_result"):
        tcid = draw(st.sampled_from(CALL_IDS))
        if tcid is not None:
            event["tool_call_id"] = tcid
    if etype == "system_event" and draw(st.booleans()):
        event["meta"] = {"synthetic": "split_turn_prefix", "chunk_id": "chunk_0001"}
    return event


@st.composite
def case_st(draw: st.DrawFn) -> tuple[list[Event], list[int], Cfg]:
    size = draw(st.integers(0, 40))
    raw = draw(st.lists(event_st(), min_size=size, max_size=size))
    events = [{**e, "id": f"e{i}"} for i, e in enumerate(raw)]
    tokens = draw(st.lists(st.integers(0, 60), min_size=len(events), max_size=len(events)))
    cfg = Cfg(draw(st.integers(1, 300)), draw(st.integers(1, 20)))
    return events, tokens, cfg


def boundary(e: Event) -> bool:
    return cut_class(e) is CutClass.BOUNDARY


def tool_pairs(events: list[Event]) -> list[tuple[int, int]]:
    """(call, its first later result with the same id) for every call that has one."""
    pairs = []
    for j, e in enumerate(events):
        if e.get("type") == "tool_call" and e.get("tool_call_id"):
            for k in range(j + 1, len(events)):
                r = events[k]
                if r.get("type") == "tool_result" and r.get("tool_call_id") == e["tool_call_id"]:
                    pairs.append((j, k))
                    break
    return pairs


def ref_legal(events: list[Event]) -> list[bool]:
    n = len(events)
    legal = [cut_class(e) is not CutClass.FORBIDDEN for e in events]
    paired = dict(tool_pairs(events))
    for j, e in enumerate(events):
        if e.get("type") != "tool_call" or not e.get("tool_call_id"):
            continue
        if j in paired:
            last = paired[j]
        else:
            nxt = next((b for b in range(j + 1, n) if boundary(events[b])), n)
            last = nxt - 1
        for c in range(j + 1, last + 1):
            legal[c] = False
    return legal


def ref_plan(events: list[Event], tokens: list[int], cfg: Cfg) -> tuple[Any, ...]:
    """(path, cut, is_split, turn_start) by the letter of contract §5, quadratic and plain."""
    n = len(events)
    legal = ref_legal(events)
    root = next((i for i, e in enumerate(events) if boundary(e)), None)

    def pull(c: int) -> int:
        while c > 0 and is_ambient(events[c - 1]):
            c -= 1
        return c

    def compacts(c: int) -> int:
        return len([i for i in range(c) if not (root is not None and i == root)])

    def settle(start: int) -> int | None:
        for c in [start] + [c for c in range(start + 1, n) if legal[c]]:
            if compacts(pull(c)) > 0:
                return pull(c)
        return None

    path, cut = None, None
    total, cand = 0, None
    for i in range(n - 1, -1, -1):
        total += tokens[i]
        if total >= cfg.keep_recent_tokens:
            cand = i
            break
    if cand is not None:
        snap = next((c for c in range(cand, n) if legal[c]), None)
        if snap is not None and (cut := settle(snap)) is not None:
            path = "token"
    if cut is None:
        target = n - cfg.hot_window_events
        if target > 0:
            back = [c for c in range(min(target, n - 1) + 1) if legal[c]]
            start = back[-1] if back else next((c for c in range(n) if legal[c]), None)
            if start is not None and (cut := settle(start)) is not None:
                path = "count"
    if cut is None:
        return None, None, False, None
    f = next(i for i in range(cut, n) if not is_ambient(events[i]))
    if boundary(events[f]) or not any(boundary(e) for e in events[:f]):
        return path, cut, False, None
    # Turn start (contract §5, 2026-12-01): an earlier pass's synthetic event after the turn's
    # last boundary stands for that turn's compacted start.
    s = max(i for i in range(cut) if boundary(events[i]) or is_synthetic(events[i]))
    if not boundary(events[s]):
        return path, cut, True, s
    if s == root and cut == s + 1:
        return path, cut, False, None
    return path, cut, True, s


@settings(max_examples=400, deadline=None)
@given(case_st())
def test_plan_matches_the_reference_reading_of_the_contract(
    case: tuple[list[Event], list[int], Cfg],
) -> None:
    events, tokens, cfg = case
    p = plan_compaction(events, cfg, tokens=tokens)
    assert legal_cuts(events) == ref_legal(events)
    assert (p.path, p.cut_index, p.is_split_turn, p.turn_start_index) == ref_plan(
        events, tokens, cfg
    )


@settings(max_examples=400, deadline=None)
@given(case_st())
def test_plan_invariants(case: tuple[list[Event], list[int], Cfg]) -> None:
    events, tokens, cfg = case
    n = len(events)
    p = plan_compaction(events, cfg, tokens=tokens)
    compacted, kept = p.compacted_indices(), p.kept_indices()

    # Everything exactly once, in order: compacted ascending; kept = pinned root, then c..n-1.
    assert sorted(compacted + kept) == list(range(n))
    assert compacted == sorted(compacted)
    ids = p.compacted_event_ids(events) + p.kept_event_ids(events)
    assert sorted(ids, key=str) == sorted((e["id"] for e in events), key=str)
    assert p.tokens_before == sum(tokens)
    assert p.kept_tokens_estimate == sum(tokens[i] for i in kept)
    assert p.compacted_tokens + p.kept_tokens_estimate == p.tokens_before

    if p.root_index is not None:
        assert p.root_index not in compacted
        assert p.root_index not in p.history_indices()
        assert p.root_index not in p.prefix_indices()

    if not p.useful:
        assert p.cut_index is None and p.path is None
        assert p.reason
        assert compacted == [] and kept == list(range(n))
        return

    c = p.cut_index
    assert c is not None and 0 < c < n
    assert len(compacted) >= 1 and len(kept) >= 1
    assert kept[len(kept) - (n - c) :] == list(range(c, n))
    assert p.first_kept_event_id == events[c]["id"]
    if p.pinned_root_index is not None:
        assert kept[0] == p.pinned_root_index == p.root_index
        assert p.pinned_root_index < c
    else:
        assert p.root_index is None or p.root_index >= c

    # The hot window opens on a legal cut, or on leading context directly before one.
    f = c
    while is_ambient(events[f]):
        f += 1
    assert ref_legal(events)[f]
    assert p.pulled_in == ((c, f) if f > c else None)
    assert not is_ambient(events[c - 1])

    # No tool pair is separated.
    kept_set = set(kept)
    for j, k in tool_pairs(events):
        assert (j in kept_set) == (k in kept_set), (j, k)

    # Summary ranges cover exactly the compacted events.
    assert p.history_indices() + p.prefix_indices() == compacted
    if p.is_split_turn:
        s = p.turn_start_index
        assert s is not None and s < c
        if p.turn_continued:  # an earlier pass's synthetic event stands for the turn's start
            assert is_synthetic(events[s])
            named = events[s]["meta"].get("turn_start_event_id")
            assert p.turn_start_event_id == (named or events[s]["id"])
        else:
            assert cut_class(events[s]) is CutClass.BOUNDARY
            assert p.turn_start_event_id == events[s]["id"]
        assert cut_class(events[f]) is CutClass.SPLIT


@settings(max_examples=100, deadline=None)
@given(case_st())
def test_same_input_same_plan(case: tuple[list[Event], list[int], Cfg]) -> None:
    events, tokens, cfg = case
    first: CompactionPlan = plan_compaction(events, cfg, tokens=tokens)
    again = plan_compaction([dict(e) for e in events], cfg, tokens=list(tokens))
    assert first == again
    assert first.to_json(events) == again.to_json(events)


@settings(max_examples=200, deadline=None)
@given(case_st(), st.integers(min_value=0, max_value=40))
def test_headroom_moves_the_cut_forward_to_legal_cuts_only(
    case: tuple[list[Event], list[int], Cfg], limit: int
) -> None:
    """Contract §5 Headroom: the cut only moves forward, to legal cuts (leading context pulled
    in again), never past the last one; the plan keeps every invariant of a plan without it."""
    events, tokens, cfg = case
    plain = plan_compaction(events, cfg, tokens=tokens)
    hr = Headroom(
        calibration=Calibration(overhead=0, ratio=1.0, samples=2),
        threshold=limit,
        headroom_percent=0,
        window=100,
        summary_tokens=0,
        max_summary_tokens=1,
    )
    p = plan_compaction(events, cfg, tokens=tokens, headroom=hr)
    assert p.useful == plain.useful
    if not p.useful:
        return
    assert p.cut_index is not None and plain.cut_index is not None
    assert p.cut_index >= plain.cut_index
    if p.cut_index != plain.cut_index:
        assert p.headroom_moves > 0
    f = p.cut_index
    while is_ambient(events[f]):
        f += 1
    assert ref_legal(events)[f]
    assert p.pulled_in == ((p.cut_index, f) if f > p.cut_index else None)
    assert p.predicted_after_tokens is not None
    if p.predicted_after_tokens > limit:  # it stopped: no legal cut lies further on
        assert not any(ref_legal(events)[f + 1 :])
    kept = p.kept_indices()
    assert sorted(p.compacted_indices() + kept) == list(range(len(events)))
    assert p.history_indices() + p.prefix_indices() == p.compacted_indices()
