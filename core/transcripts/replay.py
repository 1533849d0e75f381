"""Play an imported transcript into a MemoryManager the way its agent ran (issue 10, item 3).

`replay` appends call by call, lets the trigger run a pass before each model call and records
a prompt size for each call whose log has one, so a person can watch compaction happen on
their own session. `import_transcript` just appends everything, with no passes.

The size recorded for a call is *our* prompt's, not the provider's: the provider measured the
original agent's context, which our compaction has made smaller. Until our first compaction
(and while the original agent's own prompt never shrank) the two contexts are the same events,
and the provider's figure is recorded exactly. After that the replay records

    fixed + ratio × our_estimate

where our_estimate is summary.md plus the hot window (contract §3 estimates), `ratio` is how
many provider tokens the log shows per estimated token (the median, over consecutive calls
whose prompt grew, of the figure's growth over the estimate of the events appended between
them) and `fixed` is what the provider counted beyond the events at the first call (system
prompt, tool schemas): `first figure − ratio × estimate of the events before it`.

Why not `our_estimate + (figure − estimate of every original event)`: the tokenizer's
disagreement with the estimate (code often runs at a ratio of 1.2–1.4) is proportional to
content, so that difference grows with the whole original transcript, compacted events
included; on a long log the recorded size would climb until every call triggered a pass.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from core.compaction.state import MAX_PROMPT_TOKENS
from core.errors import SessionMemoryError, StoreError
from core.index.reader import read_index
from core.maintenance.compaction_pass import PassResult
from core.manager import MemoryManager
from core.store.atomic import read_bytes_no_symlink
from core.tokens import estimate_event_tokens, estimate_tokens
from core.transcripts.transcript import ModelCall, Transcript, check_transcript

REPLAY_SYSTEM_PROMPT = "You are the agent of this transcript (replayed by session-inspector)."
"""The system prompt a replay builds each call's prompt with (the log does not carry one)."""
REPLAY_TASK = "continue"
"""The task a replay builds each call's prompt with: the call's own inputs are in the hot
window already, so the prompt the ledger records is the memory's as the model would see it."""


class PartialImportError(SessionMemoryError):
    """A write failed after some of the transcript's events were stored (exit status 1). The
    message says exactly how many, and which, so a retry does not append them twice."""


@dataclass
class ReplayStats:
    """What a replay (or a plain import) did. `passes` counts the passes the trigger asked
    for; `compactions` those that compacted; the three triggers split `passes` by rule."""

    calls: int = 0
    events_appended: int = 0
    passes: int = 0
    compactions: int = 0
    count_triggered: int = 0
    token_triggered: int = 0
    forced: int = 0
    """Passes that compacted although the trigger did not fire (none in a plain replay)."""
    prompt_sizes_recorded: int = 0
    provider_ratio: float | None = None
    """Provider tokens per estimated token, as the log showed them (None: no figures)."""
    provider_fixed: int | None = None
    """What the provider counted beyond the events (system prompt, tools), estimated."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


RATIO_RANGE = (0.5, 4.0)
"""Bounds of the provider/estimate ratio (a log with odd figures cannot scale ours wildly)."""
MIN_GROWTH_ESTIMATE = 16
"""Calls whose appended events are estimated below this give no ratio sample (too noisy)."""
DROP_FRACTION = 0.1
"""A figure this much below the previous one means the original agent compacted itself."""


@dataclass
class ProviderScale:
    """How a log's prompt sizes relate to our estimates: figure ≈ fixed + ratio × estimate."""

    first: tuple[int, int] | None = None
    """(estimate of the original events, provider figure) at the first call with a figure."""
    last: tuple[int, int] | None = None
    samples: list[float] = field(default_factory=list)
    dropped: bool = False
    """The original agent's prompt shrank: its context is no longer every event."""

    def observe(self, original: int, figure: int) -> None:
        if self.first is None:
            self.first = (original, figure)
        if self.last is not None:
            grown, growth = original - self.last[0], figure - self.last[1]
            if growth < -DROP_FRACTION * self.last[1]:
                self.dropped = True
            elif growth > 0 and grown >= MIN_GROWTH_ESTIMATE:
                self.samples.append(growth / grown)
        self.last = (original, figure)

    @property
    def ratio(self) -> float:
        if not self.samples:
            return 1.0
        low, high = RATIO_RANGE
        return min(high, max(low, statistics.median(self.samples)))

    @property
    def fixed(self) -> int:
        if self.first is None:
            return 0
        return max(0, round(self.first[1] - self.ratio * self.first[0]))

    def ours(self, estimate: int) -> int:
        """The figure the provider would give for a prompt we estimate at `estimate`."""
        return self.fixed + round(self.ratio * estimate)


def replay(
    transcript: Transcript,
    mm: MemoryManager,
    *,
    before_call: Callable[[int, ModelCall], None] | None = None,
    after_pass: Callable[[PassResult], None] | None = None,
) -> ReplayStats:
    """For each model call: append its inputs, run a pass if the trigger says so, build the
    call's prompt (its line in the prompt ledger, session/prompts.jsonl), call
    `before_call(i, call)` (the prompt the model would get is measurable there), record the
    call's prompt size (see the module docstring), append its outputs. Then the trailing
    events and one more pass if needed. `after_pass` gets every pass the trigger asked for.

    Everything that can be checked is checked before the first append (the transcript's
    figures, the chunk index a pass needs); a failure after events were stored raises
    `PartialImportError` saying how many and which."""
    check_transcript(transcript)
    read_index(mm.paths)  # unreadable: IndexCorruptError now, not after the first appends
    stats = ReplayStats()
    try:
        return _replay(transcript, mm, stats, before_call, after_pass)
    except SessionMemoryError as exc:
        if not stats.events_appended:
            raise
        raise _partial(transcript, stats, exc) from exc


def _replay(
    transcript: Transcript,
    mm: MemoryManager,
    stats: ReplayStats,
    before_call: Callable[[int, ModelCall], None] | None,
    after_pass: Callable[[PassResult], None] | None,
) -> ReplayStats:
    scale = ProviderScale()
    original = 0
    """Estimate of every transcript event appended so far (the original agent's context)."""
    for i, call in enumerate(transcript.calls):
        original += _append(mm, call.inputs, stats)
        _maybe_pass(mm, stats, after_pass)
        mm.build_prompt(REPLAY_SYSTEM_PROMPT, REPLAY_TASK)  # the call's line in the prompt ledger
        if before_call is not None:
            before_call(i, call)
        if call.prompt_tokens is not None:
            scale.observe(original, call.prompt_tokens)
            if stats.compactions == 0 and not scale.dropped:
                mm.record_prompt_tokens(call.prompt_tokens)  # the same context: exact
            else:
                mm.record_prompt_tokens(min(MAX_PROMPT_TOKENS, scale.ours(prompt_estimate(mm))))
            stats.prompt_sizes_recorded += 1
        stats.calls += 1
        original += _append(mm, call.outputs, stats)
    if transcript.trailing:
        _append(mm, transcript.trailing, stats)
        _maybe_pass(mm, stats, after_pass)
    if scale.first is not None:
        stats.provider_ratio = round(scale.ratio, 3)
        stats.provider_fixed = scale.fixed
    return stats


def import_transcript(transcript: Transcript, mm: MemoryManager) -> ReplayStats:
    """Append every event in order, no passes, in one write (all or nothing: the store takes
    a failed append back); the last provider figure (if any) is then recorded anchored at the
    last event before its call's outputs, so the trigger adds what followed. When only that
    record fails, `PartialImportError` says the events are stored. Each model call of the log
    gets its line in the prompt ledger: the prompt this memory held at that call (no pass ran,
    so the hot window then was every event up to the call's inputs), built with
    REPLAY_SYSTEM_PROMPT and REPLAY_TASK as a replay's are."""
    check_transcript(transcript)
    stats = ReplayStats(calls=len(transcript.calls))
    last = max(
        (i for i, c in enumerate(transcript.calls) if c.prompt_tokens is not None), default=None
    )
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    ends: list[int] = []
    """Per call: how many transcript events the hot window held at it (through its inputs)."""
    seen = 0
    for i, call in enumerate(transcript.calls):
        target = before if last is not None and i <= last else after
        target.extend(call.inputs)
        ends.append(seen + len(call.inputs))
        seen += len(call.inputs) + len(call.outputs)
        (after if last is not None and i == last else target).extend(call.outputs)
    after.extend(transcript.trailing)
    base = mm.hot_events()
    split = last + 1 if last is not None else 0
    figure = transcript.calls[last].prompt_tokens if last is not None else None
    if figure is not None and not before:
        mm.record_prompt_tokens(figure)  # anchored at what the root held before: nothing new
        stats.prompt_sizes_recorded = 1
        figure = None
    stored = mm.append_many([*before, *after], where="transcript event") if after or before else []
    stats.events_appended = len(stored)
    _record_calls(mm, base, stored, ends[:split])
    if figure is not None:
        try:
            mm.record_prompt_tokens(figure, after_event_id=stored[len(before) - 1]["id"])
        except SessionMemoryError as exc:
            raise _partial(transcript, stats, exc) from exc
        stats.prompt_sizes_recorded = 1
    _record_calls(mm, base, stored, ends[split:])
    return stats


def _record_calls(
    mm: MemoryManager, base: list[dict[str, Any]], stored: list[dict[str, Any]], ends: list[int]
) -> None:
    """A prompt-ledger line per call whose window was `base` and the first `end` stored events
    (a ledger that cannot be written is a warning of the manager, never an import error)."""
    for end in ends:
        mm.record_call(REPLAY_SYSTEM_PROMPT, REPLAY_TASK, [*base, *stored[:end]])


def _partial(transcript: Transcript, stats: ReplayStats, exc: Exception) -> PartialImportError:
    total = transcript.event_count
    done = stats.events_appended
    which = "all" if done == total else f"the first {done:,}"
    return PartialImportError(
        f"{done:,} of {total:,} events of {transcript.source} were stored ({which}, in the "
        f"transcript's order: do not import it again into this root, or they are doubled), "
        f"but then: {exc}"
    )


def prompt_estimate(mm: MemoryManager) -> int:
    """Estimate of the prompt our memory gives the model now: summary.md plus the hot window
    (the same figure a pass resets the trigger's prompt size to, contract §5)."""
    snap = mm.store.read_events()
    total = sum(snap.tokens)
    summary = mm.paths.summary
    try:
        text = read_bytes_no_symlink(summary).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return total  # no compaction yet (summary.md exists from the first one on)
    except OSError as exc:
        raise StoreError(f"cannot read {summary}: {exc.strerror or exc}") from exc
    return total + estimate_tokens(text)


def _append(mm: MemoryManager, events: Sequence[dict[str, Any]], stats: ReplayStats) -> int:
    """Append (as the agent would, with `append_many`: no idle-gap rotation) and return the
    stored events' estimate (after screenshot scrubbing, as the hot window counts them: a
    base64 payload the store drops must not skew the provider/estimate ratio)."""
    if not events:
        return 0
    stored = mm.append_many(events, where="transcript event")
    stats.events_appended += len(events)
    return sum(estimate_event_tokens(e) for e in stored)


def _maybe_pass(
    mm: MemoryManager, stats: ReplayStats, after_pass: Callable[[PassResult], None] | None
) -> None:
    """One synchronous pass; `save` runs the trigger itself and returns at once when it does
    not fire (that is not counted as a pass)."""
    result = mm.save()
    fired = result.trigger is not None and result.trigger.should_compress
    if not fired and not result.compacted:
        return
    stats.passes += 1
    if result.compacted:
        stats.compactions += 1
    if not fired:
        stats.forced += 1
    elif result.trigger is not None and result.trigger.trigger == "count":
        stats.count_triggered += 1
    else:
        stats.token_triggered += 1
    if after_pass is not None:
        after_pass(result)
