"""The cut-point planner (contract §5): one test per rule, on small hand-built streams.

Every event costs 10 tokens unless a test says otherwise, so token arithmetic is exact.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import pytest

from core.compaction.planner import (
    CompactionPlan,
    CutStatus,
    cut_statuses,
    legal_cuts,
    plan_compaction,
    tool_spans,
)
from core.config import CompactionConfig
from core.events import Event
from core.tokens import estimate_event_tokens

COST = 10


@dataclass(frozen=True)
class Cfg:
    keep_recent_tokens: int = 1_000_000
    hot_window_events: int = 1_000_000


def u(text: str = "do it") -> Event:
    return {"type": "user_input", "role": "user", "content": text}


def a(text: str = "ok") -> Event:
    return {"type": "assistant_output", "role": "assistant", "content": text}


def ro() -> Event:
    return {"type": "role_output", "role": "assistant", "content": "role"}


def call(tcid: str | None) -> Event:
    event: Event = {"type": "tool_call", "role": "assistant", "name": "ls", "content": None}
    if tcid is not None:
        event["tool_call_id"] = tcid
    return event


def res(tcid: str) -> Event:
    return {"type": "tool_result", "role": "tool", "tool_call_id": tcid, "content": "out"}


def sys() -> Event:
    return {"type": "system_event", "role": "system", "content": "note"}


def screen() -> Event:
    return {"type": "screen_context", "role": "system", "content": "screen"}


def unk(role: str) -> Event:
    return {"type": "custom_thing", "role": role, "content": "?"}


def synth() -> Event:
    return {
        "type": "system_event",
        "role": "system",
        "content": "earlier prefix summary",
        "meta": {"synthetic": "split_turn_prefix", "chunk_id": "chunk_0001"},
    }


def stream(*events: Event) -> list[Event]:
    """Copies with ids e0, e1, ... so ids and indices read alike in failures."""
    return [{**e, "id": f"e{i}"} for i, e in enumerate(events)]


def plan(
    events: list[Event], *, keep: int = 1_000_000, hot: int = 1_000_000, costs: Any = None
) -> CompactionPlan:
    tokens = costs if costs is not None else [COST] * len(events)
    return plan_compaction(events, Cfg(keep, hot), tokens=tokens)


def keep_last(k: int) -> int:
    """keep_recent_tokens whose candidate index is n - k at COST per event."""
    return k * COST


def check_partition(p: CompactionPlan) -> None:
    both = sorted(p.compacted_indices() + p.kept_indices())
    assert both == list(range(p.n_events))


# --- legality -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "legal"),
    [
        (u(), True),
        (a(), True),
        (ro(), True),
        (call("x"), True),
        (call(None), True),
        (res("x"), False),
        (sys(), False),
        (screen(), False),
        (unk("user"), True),
        (unk("assistant"), True),
        (unk("tool"), False),
        (unk("system"), False),
        (unk("robot"), False),
    ],
)
def test_cut_class_decides_legality(event: Event, legal: bool) -> None:
    assert legal_cuts([event]) == [legal]


def test_tool_pair_makes_cuts_between_call_and_result_illegal() -> None:
    events = stream(u(), call("A"), a(), a(), res("A"), a())
    assert cut_statuses(events) == [
        CutStatus.LEGAL,
        CutStatus.LEGAL,  # cutting at the call keeps call and result together
        CutStatus.TOOL_PAIR,
        CutStatus.TOOL_PAIR,
        CutStatus.FORBIDDEN,
        CutStatus.LEGAL,
    ]


def test_parallel_tool_calls_cut_at_second_call_is_illegal() -> None:
    events = stream(u(), call("A"), call("B"), res("A"), res("B"), a())
    assert legal_cuts(events) == [True, True, False, False, False, True]
    assert cut_statuses(events)[2] is CutStatus.TOOL_PAIR


def test_unanswered_call_blocks_until_next_turn_boundary() -> None:
    events = stream(u(), call("A"), a(), a(), u(), a())
    assert legal_cuts(events) == [True, True, False, False, True, True]
    spans = tool_spans(events)
    assert [(s.call_index, s.result_index, s.last_blocked) for s in spans] == [(1, None, 3)]


def test_unanswered_call_with_no_later_boundary_blocks_to_the_end() -> None:
    events = stream(u(), a(), call("A"), a(), a())
    assert legal_cuts(events) == [True, True, True, False, False]


def test_result_after_a_boundary_still_pairs_with_its_call() -> None:
    events = stream(u(), call("A"), a(), u(), a(), res("A"), a())
    assert legal_cuts(events) == [True, True, False, False, False, False, True]


def test_tool_call_without_id_and_orphan_result_impose_nothing() -> None:
    events = stream(u(), call(None), a(), res("zzz"), a())
    assert legal_cuts(events) == [True, True, True, False, True]


def test_reused_tool_call_id_pairs_each_call_with_its_first_later_result() -> None:
    events = stream(u(), call("A"), res("A"), a(), call("A"), res("A"), a())
    assert legal_cuts(events) == [True, True, False, True, True, False, True]


# --- token path -----------------------------------------------------------------------------


def test_token_path_candidate_is_first_index_where_sum_reaches_keep() -> None:
    events = stream(u(), a(), a(), a(), a(), a())
    exact = plan(events, keep=30)
    assert exact.token_path.candidate_index == 3
    assert exact.token_path.candidate_tokens == 30
    assert exact.cut_index == 3
    one_more = plan(events, keep=31)
    assert one_more.token_path.candidate_index == 2
    assert one_more.cut_index == 2
    assert one_more.path == "token"


@pytest.mark.parametrize(
    ("at_candidate", "expected_cut", "split"),
    [
        (u(), 3, False),
        (a(), 3, True),
        (ro(), 3, True),
        (call(None), 3, True),
        (call("Q"), 3, True),
        (res("Q"), 4, True),
        (sys(), 3, True),  # snaps to 4, then 3 is pulled in as leading context
        (screen(), 3, True),
        (unk("user"), 3, False),
        (unk("assistant"), 3, True),
        (unk("tool"), 4, True),
    ],
)
def test_every_event_class_at_the_candidate_cut(
    at_candidate: Event, expected_cut: int, split: bool
) -> None:
    events = stream(u(), a(), u(), at_candidate, a(), a())
    p = plan(events, keep=keep_last(3))
    assert p.token_path.candidate_index == 3
    assert p.cut_index == expected_cut
    assert p.is_split_turn is split
    check_partition(p)
    if split:
        assert p.turn_start_index == 2
        assert p.turn_start_event_id == "e2"


def test_all_events_fit_token_path_gives_nothing_and_count_path_decides() -> None:
    events = stream(u(), a(), a(), u(), a(), a())
    p = plan(events, keep=1000, hot=2)
    assert p.token_path.cut_index is None
    assert p.token_path.reason == "all 6 events (60 tokens) fit in keep_recent_tokens 1000"
    assert p.count_path.considered
    assert p.path == "count"
    assert p.count_path.candidate_index == 4
    assert p.cut_index == 4


def test_count_path_not_considered_when_token_path_cuts() -> None:
    p = plan(stream(u(), a(), a(), a()), keep=keep_last(2), hot=1)
    assert p.path == "token"
    assert not p.count_path.considered
    assert p.count_path.cut_index is None


def test_trailing_tool_results_larger_than_budget_fall_back_to_count() -> None:
    events = stream(u(), a(), a(), call("X"), call("Y"), res("X"), res("Y"))
    p = plan(events, keep=100, hot=4, costs=[10, 10, 10, 10, 10, 200, 300])
    assert p.token_path.candidate_index == 6
    assert p.token_path.cut_index is None
    assert p.token_path.reason == (
        "no legal cut at or after index 6: event 6 is tool_result (forbidden)"
    )
    assert p.path == "count"
    assert p.count_path.candidate_index == 3
    assert p.cut_index == 3
    assert p.kept_tokens_estimate == 10 + 10 + 10 + 200 + 300


def test_no_legal_cut_reason_names_runs_of_events() -> None:
    events = stream(u(), a(), call("X"), a(), res("X"), sys())
    p = plan(events, keep=30)
    assert p.token_path.candidate_index == 3
    assert p.token_path.reason == (
        "no legal cut at or after index 3: event 3 is assistant_output "
        "(separates tool_call 2 from its tool_result 4); event 4 is tool_result (forbidden); "
        "event 5 is system_event (forbidden)"
    )


# --- count path -----------------------------------------------------------------------------


def test_count_path_snaps_to_last_legal_cut_at_or_before_target() -> None:
    events = stream(u(), a(), call("A"), res("A"), sys(), a(), a())
    p = plan(events, hot=3)  # target 4 (system_event) -> 2 (tool_call)
    assert p.count_path.candidate_index == 4
    assert p.count_path.snapped_index == 2
    assert p.cut_index == 2
    assert p.path == "count"


def test_count_target_not_positive_gives_no_count_cut() -> None:
    events = stream(u(), a(), a())
    p = plan(events, hot=3)
    assert not p.useful
    assert p.count_path.candidate_index == 0
    assert p.count_path.reason is not None
    assert "≤ 0" in p.count_path.reason
    assert p.reason is not None and p.reason.startswith("token path: all 3 events")


def test_count_path_with_no_legal_cut_before_target_advances_from_start() -> None:
    events = stream(res("A"), sys(), res("B"), a(), a(), a())
    p = plan(events, hot=4)  # target 2: nothing legal in 0..2
    assert p.count_path.snapped_index is None
    first = p.count_path.advanced[0]
    assert first.from_cut is None
    assert first.to_cut == 3
    assert p.cut_index == 3
    assert p.compacted_indices() == [0, 1, 2]
    assert p.root_index is None


# --- leading context ------------------------------------------------------------------------


def test_leading_context_pulls_several_ambient_events_into_hot_window() -> None:
    events = stream(u(), a(), a(), sys(), screen(), sys(), a(), a())
    p = plan(events, keep=keep_last(2))  # candidate 6
    assert p.token_path.snapped_index == 6
    assert p.pulled_in == (3, 6)
    assert p.cut_index == 3
    assert p.first_kept_event_id == "e3"
    assert p.kept_indices() == [0, 3, 4, 5, 6, 7]
    assert p.compacted_indices() == [1, 2]
    assert any("pulled into the hot window" in line for line in p.notes)


def test_no_pull_in_when_event_before_cut_is_not_ambient() -> None:
    p = plan(stream(u(), sys(), a(), a()), keep=keep_last(1))
    assert p.pulled_in is None
    assert p.cut_index == 3


# --- root pin -------------------------------------------------------------------------------


def test_root_before_cut_is_pinned_and_never_compacted() -> None:
    events = stream(u("the task"), a(), u(), a(), a())
    p = plan(events, keep=keep_last(2))
    assert p.cut_index == 3
    assert p.root_index == 0
    assert p.pinned_root_index == 0
    assert p.pinned_root_event_id == "e0"
    assert p.compacted_indices() == [1, 2]
    assert p.kept_indices() == [0, 3, 4]
    assert p.kept_tokens_estimate == 30
    assert p.tokens_before == 50
    assert p.compacted_tokens == 20


def test_root_is_the_earliest_turn_boundary_even_when_not_first() -> None:
    events = stream(a(), sys(), unk("user"), a(), u(), a())
    p = plan(events, keep=keep_last(1))
    assert p.root_index == 2
    assert p.pinned_root_index == 2
    assert 2 not in p.compacted_indices()
    assert p.kept_indices()[0] == 2


def test_root_at_the_cut_is_kept_but_not_pinned() -> None:
    events = stream(a(), a(), u(), a())
    p = plan(events, keep=keep_last(2))
    assert p.cut_index == 2
    assert p.root_index == 2
    assert p.pinned_root_index is None
    assert p.first_kept_event_id == "e2"
    assert p.kept_indices() == [2, 3]


def test_no_turn_boundary_before_cut_means_no_root_pin_and_no_split_turn() -> None:
    events = stream(a(), call("A"), res("A"), a(), a(), u(), a())
    p = plan(events, keep=keep_last(4))  # candidate 3 (assistant_output)
    assert p.cut_index == 3
    assert p.root_index == 5
    assert p.pinned_root_index is None
    assert not p.is_split_turn
    assert p.compacted_indices() == [0, 1, 2]


def test_stream_without_any_turn_boundary_has_no_root() -> None:
    p = plan(stream(a(), a(), a()), keep=keep_last(1))
    assert p.root_index is None
    assert p.pinned_root_index is None
    assert p.compacted_indices() == [0, 1]


# --- advance --------------------------------------------------------------------------------


def test_advance_when_only_the_root_lies_before_the_cut() -> None:
    events = stream(u(), a(), a(), a(), a())
    p = plan(events, keep=keep_last(4))  # candidate 1: only the root before it
    assert p.token_path.snapped_index == 1
    (step,) = p.token_path.advanced
    assert (step.from_cut, step.pulled_to, step.to_cut) == (1, 1, 2)
    assert "pinned root" in step.why
    assert p.cut_index == 2
    assert p.compacted_indices() == [1]
    assert p.kept_indices() == [0, 2, 3, 4]


def test_advance_reapplies_leading_context_pull_in() -> None:
    events = stream(u(), sys(), a(), sys(), screen(), a(), a())
    p = plan(events, keep=keep_last(5))  # candidate 2 -> pulled to 1 -> nothing compacted
    steps = p.token_path.advanced
    assert [(s.from_cut, s.pulled_to, s.to_cut) for s in steps] == [(2, 1, 5)]
    assert p.pulled_in == (3, 5)
    assert p.cut_index == 3
    assert p.compacted_indices() == [1, 2]
    assert p.kept_indices() == [0, 3, 4, 5, 6]


def test_advance_skips_a_cut_whose_pull_in_reaches_the_start() -> None:
    events = stream(sys(), screen(), a(), a())
    p = plan(events, keep=keep_last(2))  # candidate 2 pulls to 0
    assert [(s.from_cut, s.pulled_to, s.to_cut) for s in p.token_path.advanced] == [(2, 0, 3)]
    assert p.cut_index == 3
    assert p.compacted_indices() == [0, 1, 2]


def test_advance_with_nothing_left_gives_no_cut_on_that_path() -> None:
    events = stream(u(), a(), res("Z"))
    p = plan(events, keep=keep_last(2), hot=2)  # candidate 1: only root; no legal cut after it
    assert p.token_path.cut_index is None
    assert p.token_path.reason is not None
    assert p.token_path.reason.startswith("no useful cut: the cut at 1 would compact nothing")
    assert p.token_path.advanced[-1].to_cut is None
    assert not p.useful
    assert p.cut_index is None
    assert p.compacted_indices() == []
    assert p.kept_indices() == [0, 1, 2]


def test_count_path_advances_past_the_root_too() -> None:
    events = stream(u(), a(), a(), a(), a())
    p = plan(events, hot=4)  # target 1: only the root before it
    assert p.path == "count"
    assert p.count_path.snapped_index == 1
    assert p.cut_index == 2
    assert p.compacted_indices() == [1]


# --- split turns ----------------------------------------------------------------------------


def test_split_turn_inside_a_later_turn_has_history_and_prefix() -> None:
    events = stream(u(), a(), u(), call("A"), res("A"), a(), a())
    p = plan(events, keep=keep_last(2))  # candidate 5
    assert p.cut_index == 5
    assert p.is_split_turn
    assert p.turn_start_index == 2
    assert p.turn_start_event_id == "e2"
    assert p.history == (0, 2)
    assert p.history_indices() == [1]
    assert p.prefix == (2, 5)
    assert p.prefix_indices() == [2, 3, 4]
    assert p.history_indices() + p.prefix_indices() == p.compacted_indices()


def test_root_as_turn_start_of_split_turn_with_events_between() -> None:
    events = stream(u(), a(), a(), a(), a())
    p = plan(events, keep=keep_last(2))  # cut 3 inside the root's own turn
    assert p.cut_index == 3
    assert p.is_split_turn
    assert p.turn_start_index == 0
    assert p.turn_start_event_id == "e0"
    assert p.pinned_root_index == 0
    assert p.history_indices() == []
    assert p.prefix_indices() == [1, 2]
    assert 0 not in p.prefix_indices()


def test_root_as_turn_start_with_nothing_between_is_not_a_split_turn() -> None:
    events = stream(a(), u(), a(), a())
    p = plan(events, keep=keep_last(2))  # cut 2: only the pinned root between turn start and cut
    assert p.cut_index == 2
    assert p.pinned_root_index == 1
    assert not p.is_split_turn
    assert p.turn_start_index is None
    assert p.prefix is None
    assert p.compacted_indices() == [0]
    assert p.history_indices() == [0]


def test_cut_on_a_turn_boundary_is_not_a_split_turn() -> None:
    p = plan(stream(u(), a(), u(), a()), keep=keep_last(2))
    assert p.cut_index == 2
    assert not p.is_split_turn
    assert p.history_indices() == p.compacted_indices() == [1]
    assert p.prefix_indices() == []


def test_pulled_in_context_before_a_turn_boundary_is_not_a_split_turn() -> None:
    p = plan(stream(u(), a(), sys(), u(), a()), keep=keep_last(2))
    assert p.cut_index == 2
    assert p.pulled_in == (2, 3)
    assert not p.is_split_turn


def test_split_turn_prefix_excludes_pulled_in_context() -> None:
    events = stream(u(), a(), u(), a(), screen(), a(), a())
    p = plan(events, keep=keep_last(2))  # candidate 5, pulled to 4
    assert p.cut_index == 4
    assert p.is_split_turn
    assert p.prefix_indices() == [2, 3]
    assert 4 in p.kept_indices()


def test_synthetic_prefix_event_after_root_stays_with_the_event_after_it() -> None:
    events = stream(u("task"), synth(), a(), a(), u(), a())
    p = plan(events, keep=keep_last(4))  # candidate 2 pulls the synthetic in: nothing to compact
    assert p.token_path.advanced[0].from_cut == 2
    assert p.token_path.advanced[0].pulled_to == 1
    assert p.cut_index == 3
    assert p.compacted_indices() == [1, 2]
    assert p.is_split_turn
    # Contract §5 Turn start (2026-12-01): the turn continues the one the synthetic event
    # stands for, never the pinned root; an older synthetic event without
    # meta.turn_start_event_id is named by its own id.
    assert p.turn_start_index == 1
    assert p.turn_continued
    assert p.turn_start_event_id == events[1]["id"]
    assert p.prefix_indices() == [1, 2]
    assert p.history_indices() == []
    assert any("earlier compaction" in line for line in p.notes)


def test_turn_start_compacted_by_an_earlier_pass_is_named_by_its_synthetic_event() -> None:
    syn = synth()
    syn["meta"] = {**syn["meta"], "turn_start_event_id": "ev-the-request"}
    events = stream(u("task"), syn, a(), a(), a(), a())
    p = plan(events, keep=keep_last(2))
    assert p.cut_index == 4
    assert p.is_split_turn and p.turn_continued
    assert p.turn_start_event_id == "ev-the-request"
    assert p.turn_start_event_id != p.pinned_root_event_id
    assert p.history_indices() == []
    assert p.prefix_indices() == [1, 2, 3]
    assert any("ev-the-request" in line and "earlier pass" in line for line in p.notes)


def test_synthetic_prefix_event_compacted_by_a_turn_boundary_cut() -> None:
    events = stream(u("task"), synth(), a(), a(), u(), a())
    p = plan(events, keep=keep_last(2))
    assert p.cut_index == 4
    assert not p.is_split_turn
    assert p.compacted_indices() == [1, 2, 3]
    assert p.kept_indices() == [0, 4, 5]


# --- degenerate streams and the plan object -------------------------------------------------


def test_empty_stream() -> None:
    p = plan([], keep=1, hot=1)
    assert not p.useful
    assert p.reason == "no events"
    assert p.compacted_indices() == []
    assert p.kept_indices() == []
    assert p.tokens_before == 0


def test_one_event_stream_never_compacts() -> None:
    p = plan(stream(u()), keep=1, hot=1)
    assert not p.useful
    assert p.kept_indices() == [0]
    assert p.reason is not None and "count path" in p.reason


def test_useful_plan_compacts_and_keeps_at_least_one_event() -> None:
    p = plan(stream(a(), a()), keep=1)
    assert p.cut_index == 1
    assert p.compacted_indices() == [0]
    assert p.kept_indices() == [1]


def test_to_json_carries_contract_plan_keys_and_round_trips() -> None:
    events = stream(u(), a(), u(), a(), a())
    p = plan(events, keep=keep_last(1))
    data = p.to_json(events)
    assert json.loads(json.dumps(data)) == data
    assert data["path"] == "token"
    assert data["cut_index"] == 4
    assert data["first_kept_event_id"] == "e4"
    assert data["pinned_root_event_id"] == "e0"
    assert data["is_split_turn"] is True
    assert data["turn_start_event_id"] == "e2"
    assert data["compacted_event_ids"] == ["e1", "e2", "e3"]
    assert data["kept_event_ids"] == ["e0", "e4"]
    assert data["reason"] is None
    assert data["token_path"]["candidate_index"] == 4
    assert data["count_path"]["considered"] is False


def test_events_without_ids_give_none_ids() -> None:
    events = [u(), a(), a()]
    p = plan(events, keep=keep_last(1))
    assert p.first_kept_event_id is None
    assert p.to_json(events)["kept_event_ids"] == [None, None]


def test_to_json_refuses_a_different_event_list() -> None:
    events = stream(u(), a(), a())
    p = plan(events, keep=keep_last(1))
    with pytest.raises(ValueError, match="re-plan"):
        p.to_json(events[:2])


def test_tokens_default_to_the_event_estimate() -> None:
    events = stream(u("x" * 400), a("y" * 40), a("z" * 40))
    costs = [estimate_event_tokens(e) for e in events]
    with_default = plan_compaction(events, Cfg(costs[2], 100))
    assert with_default == plan_compaction(events, Cfg(costs[2], 100), tokens=costs)
    assert with_default.tokens_before == sum(costs)
    assert with_default.token_path.candidate_index == 2
    assert with_default.kept_tokens_estimate == costs[0] + costs[2]


def test_tokens_of_the_wrong_length_are_refused() -> None:
    with pytest.raises(ValueError, match="2 estimates for 3 events"):
        plan_compaction(stream(u(), a(), a()), Cfg(), tokens=[1, 2])


def test_planning_does_not_mutate_events_and_is_deterministic() -> None:
    events = stream(u(), call("A"), call("B"), res("A"), res("B"), sys(), a(), u(), a())
    before = copy.deepcopy(events)
    first = plan(events, keep=keep_last(3))
    assert events == before
    assert plan(events, keep=keep_last(3)) == first


def test_accepts_the_real_compaction_config() -> None:
    events = stream(u(), a(), u(), a())
    p = plan_compaction(
        events, CompactionConfig(keep_recent_tokens=20, hot_window_events=1), tokens=[10] * 4
    )
    assert p.cut_index == 2
    assert p.keep_recent_tokens == 20


def test_notes_tell_the_story_in_order() -> None:
    events = stream(u(), a(), u(), a(), screen(), res("Q"), a(), a())
    p = plan(events, keep=keep_last(3))  # candidate 5 (tool_result) snaps to 6
    text = "\n".join(p.notes)
    assert text.index("token path") < text.index("root pinned") < text.index("split turn")
    assert "index 5 is not a legal cut (event 5 is tool_result (forbidden))" in text
    assert p.notes[-1].startswith("compacts 5 events")
