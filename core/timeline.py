"""Compaction through time, read from the prompt ledger (core.store.ledger): any past prompt rebuilt
exactly, and one row per model call and per pass.

A past prompt is rebuilt from its `call` line: the system prompt, the task and summary.md from
their stored texts (`session/prompt_texts/<sha256>.txt`: summary.md versions are *kept*, not
re-rendered, so a later change of the renderer or a repair cannot change a past prompt), the hot
window from the events. Events are immutable and every appended event is in events.jsonl or in
exactly one chunk file, in the order the session appended them, apart from the pinned root,
which stays at the top of events.jsonl. So the window's events after the root are the `n`
events from `first` on in that order — chunk files in index order, from the first chunk made
after the call (the line names the index's chunk count and last chunk then), then events.jsonl
— and the root is found by its id. Every part is checked against the digest the line holds:
`exact` is true only when all four match.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.compaction.prompt import build_prompt_messages
from core.errors import BadInputError, IndexCorruptError, SessionMemoryError, StoreError
from core.events import Event, is_synthetic
from core.jsonl import parse_event_lines
from core.store.atomic import read_bytes_no_symlink
from core.store.ledger import (
    LEDGER_VERSION,
    LedgerRead,
    PromptLedger,
    append_line,
    event_digest,
    find_call,
    hot_digest,
    read_ledger,
    read_ledger_light,
    read_text,
    text_sha,
)
from core.store.paths import MemoryPaths
from core.tokens import estimate_event_tokens

if TYPE_CHECKING:
    from core.compaction.dropped import DroppedReport
    from core.config import CompactionConfig
    from core.maintenance.compaction_pass import PassResult
    from core.store.session_store import SessionStore


# --------------------------------------------------------------------------- writing a pass


def record_pass(store: SessionStore, ledger: PromptLedger, result: PassResult) -> None:
    """Append the `pass` line of a pass the trigger asked for (or a forced one): what it was
    given, what it did, and what it predicted the prompt would be after it."""
    plan = result.plan
    trigger = result.trigger
    obj: dict[str, Any] = {
        "kind": "pass",
        "v": LEDGER_VERSION,
        "at": _now(),
        "compacted": result.compacted,
        "chunk_id": result.chunk_id,
        "reason": result.reason,
        "trigger": trigger.trigger if trigger is not None else None,
        "forced": bool(trigger is not None and not trigger.should_compress),
        "path": plan.path if plan is not None else None,
        "prompt_before": trigger.prompt_tokens if trigger is not None else None,
        "prompt_before_source": trigger.prompt_tokens_source if trigger is not None else None,
        "events_before": result.events_before,
        "cut_index": plan.cut_index if plan is not None else None,
        "first_kept_event_id": plan.first_kept_event_id if plan is not None else None,
        "is_split_turn": bool(plan.is_split_turn) if plan is not None else False,
        "turn_start_event_id": plan.turn_start_event_id if plan is not None else None,
        "headroom_moves": getattr(plan, "headroom_moves", None),
        "compacted_event_count": result.compacted_event_count,
        "kept_event_count": result.kept_event_count,
        "summary_backend": result.summary_backend,
        "fallback": bool(result.summary_backend and result.summary_backend.endswith("fallback")),
        "duration_ms": round(result.timings_ms.get("total", 0.0), 3),
        "predicted_after": None,
        "summary_after": None,
    }
    if result.compacted:
        state = store.read_state()
        obj["predicted_after"] = state.last_prompt_tokens
        try:
            text = read_bytes_no_symlink(store.paths.summary).decode("utf-8", errors="replace")
        except OSError:
            text = ""
        if text.strip():
            sha, tokens = ledger.store_text(text)
            obj["summary_after"] = {"sha": sha, "tokens": tokens}
    append_line(store.paths, obj)


def _now() -> str:
    from core.events import now_ts

    return now_ts()


# --------------------------------------------------------------------------- rebuilding


@dataclass
class RebuiltPrompt:
    """One past prompt, rebuilt: the messages and what each part was then."""

    number: int
    call_id: str | None
    at: str | None
    model: str | None
    messages: list[dict[str, Any]]
    parts: dict[str, dict[str, Any]]
    estimate: int
    measured: int | None
    exact: bool
    problems: list[str] = field(default_factory=list)
    hot_event_ids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "call": self.number,
            "call_id": self.call_id,
            "at": self.at,
            "model": self.model,
            "exact": self.exact,
            "problems": list(self.problems),
            "parts": self.parts,
            "estimate": self.estimate,
            "measured": self.measured,
            "hot_event_ids": list(self.hot_event_ids),
            "messages": self.messages,
        }


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_NUMBERED_RE = re.compile(r"^chunk_(\d+)$")


class _EventSource:
    """The session's events in append order (pinned root and synthetic events aside), read
    lazily: chunk files in index order, then events.jsonl."""

    def __init__(self, paths: MemoryPaths) -> None:
        self.paths = paths
        self._hot: list[Event] | None = None
        self._ids: list[str] | None = None
        self._chunks: dict[str, list[Event]] = {}

    def chunk_ids(self) -> list[str]:
        """Every chunk id in index order (through the catalog; imported only when needed)."""
        if self._ids is None:
            from core.index.catalog import read_catalog

            try:
                self._ids = read_catalog(self.paths, write=False).chunk_ids()
            except (IndexCorruptError, StoreError):
                self._ids = []
        return self._ids

    def hot(self) -> list[Event]:
        if self._hot is None:
            try:
                data = read_bytes_no_symlink(self.paths.events)
            except FileNotFoundError:
                data = b""
            except OSError as exc:
                raise StoreError(f"cannot read {self.paths.events}: {exc.strerror}") from exc
            self._hot = parse_event_lines(data, final=False).events
        return self._hot

    def chunk(self, chunk_id: str) -> list[Event]:
        """A chunk file's events ([] when it cannot be read)."""
        got = self._chunks.get(chunk_id)
        if got is None:
            try:
                data = read_bytes_no_symlink(self.paths.chunk_file(chunk_id))
                got = parse_event_lines(data, final=True).events
            except (OSError, SessionMemoryError):
                got = []
            self._chunks[chunk_id] = got
        return got

    def numbered_after(self, chunks: int | None, last_chunk: str | None) -> list[str]:
        """The chunks made after a call, guessed without the index: `chunk_N+1`, `chunk_N+2`
        … after the call's last chunk, as long as their files exist (a pass names its chunk
        so; a guess that is wrong fails the digest check and the index is read instead)."""
        if last_chunk is None:
            if chunks:
                return []
            number, width = 0, 4
        else:
            match = _NUMBERED_RE.match(last_chunk)
            if match is None:
                return []
            number, width = int(match.group(1)), len(match.group(1))
        out: list[str] = []
        while True:
            number += 1
            name = f"chunk_{number:0{width}d}"
            if not self.paths.chunk_file(name).is_file():
                name = f"chunk_{number:04d}"
                if not self.paths.chunk_file(name).is_file():
                    return out
            out.append(name)

    def indexed_after(self, chunks: int | None, last_chunk: str | None) -> list[str]:
        """The chunks made after a call, by the index: those after the call's last chunk."""
        ids = self.chunk_ids()
        if (
            chunks is not None
            and 0 <= chunks <= len(ids)
            and (chunks == 0 or last_chunk is None or ids[chunks - 1] == last_chunk)
        ):
            return ids[chunks:]
        if last_chunk is not None and last_chunk in ids:
            return ids[ids.index(last_chunk) + 1 :]
        return ids

    def find(self, event_id: str, order: list[str]) -> Event | None:
        """The event with this id: in events.jsonl, else in the chunks of `order`."""
        for event in self.hot():
            if event.get("id") == event_id:
                return event
        for chunk_id in order:
            for event in self.chunk(chunk_id):
                if event.get("id") == event_id:
                    return event
        return None


def _window(
    source: _EventSource,
    order: list[str],
    first: str | None,
    last: str | None,
    n: int,
    pinned: list[tuple[int, str]],
) -> tuple[list[Event] | None, str | None]:
    """The window read with chunks in `order` (then events.jsonl): the `n` events from
    `first` on, the pinned ones put back at their places; or why it could not be."""
    pinned_ids = {eid for _, eid in pinned}
    events: list[Event] = []
    if n > 0 and first is not None:
        stream = (e for chunk_id in order for e in source.chunk(chunk_id))
        for event in itertools.chain(stream, source.hot()):
            eid = event.get("id")
            if eid in pinned_ids or is_synthetic(event):
                continue
            if not events and eid != first:
                continue
            events.append(event)
            if len(events) == n:
                break
        if len(events) != n:
            return None, f"only {len(events)} of the hot window's {n} events were found"
        if events[-1].get("id") != last:
            return None, "the hot window's events are not where the ledger says"
    for pos, eid in sorted(pinned):
        found = source.find(eid, order)
        if found is None:
            return None, f"the pinned event {eid} was not found"
        events.insert(min(max(pos, 0), len(events)), found)
    return events, None


def _hot_events(
    source: _EventSource, call: dict[str, Any], problems: list[str]
) -> list[Event] | None:
    """The call's hot window, checked against its digest: read with the chunks guessed by
    their numbers first, then in the index's order (from the call's last chunk on, then all)."""
    hot = _dict(call.get("hot"))
    summary = _dict(call.get("summary"))
    if hot.get("unresolvable"):
        problems.append("the hot window then held events without ids; they cannot be found")
        return None
    first, last, n = _str(hot.get("first")), _str(hot.get("last")), _int(hot.get("n")) or 0
    root, root_at = _str(hot.get("root")), _int(hot.get("root_at"))
    pinned: list[tuple[int, str]] = []
    if root is not None:
        pinned.append((root_at if root_at is not None else 0, root))
    for item in hot.get("synthetic") or ():
        if isinstance(item, list) and len(item) == 2 and isinstance(item[1], str):
            pos = _int(item[0])
            pinned.append((pos if pos is not None else 0, item[1]))
    chunks, last_chunk = _int(summary.get("chunks")), _str(summary.get("last_chunk"))
    want = hot.get("sha")
    tried: list[list[str]] = []
    why: str | None = None
    events: list[Event] | None = None
    for way in ("numbered", "indexed", "all"):
        if way == "numbered":
            order = source.numbered_after(chunks, last_chunk)
        elif way == "indexed":
            order = source.indexed_after(chunks, last_chunk)
        else:
            order = source.chunk_ids()
        if order in tried:
            continue
        tried.append(order)
        events, why = _window(source, order, first, last, n, pinned)
        if events is not None and hot_digest([event_digest(e) for e in events]) == want:
            return events
    if events is not None:
        problems.append("the hot window found differs from the one the call had")
        return events
    problems.append(why or "the hot window was not found")
    return None


def _text_part(
    paths: MemoryPaths, part: dict[str, Any], name: str, problems: list[str], current: str | None
) -> str | None:
    sha = _str(part.get("sha"))
    if sha is None:
        return None
    text = read_text(paths, sha)
    if text is None and current is not None and text_sha(current) == sha:
        text = current
    if text is None:
        problems.append(f"the {name} text {sha[:12]}… is no longer stored")
    return text


def rebuild_call(paths: MemoryPaths, spec: str) -> RebuiltPrompt:
    """The prompt of the call `spec` names (core.store.ledger.find_call: its number, -1 the latest,
    or its id), rebuilt and checked."""
    found = find_call(paths, spec)
    return rebuild(paths, found.number, found.call, found.measured)


def measured_for(read: LedgerRead, call_id: object) -> int | None:
    """The provider's figure for a call: the last `measured` line naming it."""
    figure = None
    for obj in read.lines:
        if obj.get("kind") == "measured" and obj.get("call") == call_id:
            figure = _int(obj.get("prompt_tokens"))
    return figure


def rebuild(
    paths: MemoryPaths,
    number: int,
    call: dict[str, Any],
    measured: int | None = None,
    source: _EventSource | None = None,
) -> RebuiltPrompt:
    """Rebuild one call's prompt from its ledger line (see the module docstring)."""
    problems: list[str] = []
    source = source or _EventSource(paths)
    system_part = _dict(call.get("system"))
    summary_part = _dict(call.get("summary"))
    task_part = _dict(call.get("task"))
    hot_part = _dict(call.get("hot"))
    system = _text_part(paths, system_part, "system prompt", problems, None)
    current_summary: str | None = None
    if summary_part.get("sha") is not None:
        try:
            current_summary = read_bytes_no_symlink(paths.summary).decode("utf-8", "replace")
        except OSError:
            current_summary = None
    summary = _text_part(paths, summary_part, "summary.md", problems, current_summary)
    task = _text_part(paths, task_part, "task", problems, None)
    before = len(problems)
    events = _hot_events(source, call, problems)
    hot_ok = events is not None and len(problems) == before
    hot_tokens = sum(estimate_event_tokens(e) for e in events) if events is not None else 0
    messages: list[dict[str, Any]] = []
    if system is not None and task is not None and events is not None:
        messages = build_prompt_messages(system, summary, events, task)
    cid = call.get("id")
    parts: dict[str, dict[str, Any]] = {
        "system": {"tokens": _int(system_part.get("tokens")), "found": system is not None},
        "summary": {
            "tokens": _int(summary_part.get("tokens")) or 0,
            "found": summary is not None or summary_part.get("sha") is None,
            "chunks": _int(summary_part.get("chunks")),
            "last_chunk": _str(summary_part.get("last_chunk")),
        },
        "hot": {
            "tokens": _int(hot_part.get("tokens")),
            "events": _hot_count(hot_part),
            "found": hot_ok,
            "tokens_rebuilt": hot_tokens if events is not None else None,
        },
        "task": {"tokens": _int(task_part.get("tokens")), "found": task is not None},
    }
    exact = not problems and bool(messages)
    return RebuiltPrompt(
        number=number,
        call_id=_str(cid),
        at=_str(call.get("at")),
        model=_str(call.get("model")),
        messages=messages,
        parts=parts,
        estimate=_int(call.get("tokens")) or 0,
        measured=measured,
        exact=exact,
        problems=problems,
        hot_event_ids=[e["id"] for e in events or [] if isinstance(e.get("id"), str)],
    )


# --------------------------------------------------------------------------- the timeline


def threshold_for(config: CompactionConfig, model: str | None) -> tuple[int, int]:
    """(window, T): T the smaller prompt size at which either token rule fires (contract §5)."""
    window = config.window_for(model)
    by_reserve = window - config.effective_reserve(window)
    by_percent = math.ceil(window * float(config.compress_at_percent) / 100.0)
    return window, min(by_reserve, by_percent)


@dataclass
class Timeline:
    rows: list[dict[str, Any]]
    window: int
    threshold: int
    calls: int
    passes: int
    bad_lines: int

    def to_json(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "threshold": self.threshold,
            "calls": self.calls,
            "passes": self.passes,
            "ledger_bad_lines": self.bad_lines,
            "rows": self.rows,
        }


def _hot_count(hot: dict[str, Any]) -> int:
    extra = len(hot.get("synthetic") or ()) if isinstance(hot.get("synthetic"), list) else 0
    return (_int(hot.get("n")) or 0) + (1 if hot.get("root") else 0) + extra


def _call_row(number: int, obj: dict[str, Any]) -> dict[str, Any]:
    """A call's row: the call line itself with its parts' figures added flat (no new dict:
    10,000 of them open a Timeline); a line not in the writer's layout is read key by key."""
    if obj.get("light"):
        obj.pop("_n", None)
        obj.update(call=number, estimate=obj["tokens"], measured=None)
        return obj
    try:
        summary, hot = obj["summary"], obj["hot"]
        tokens = obj["tokens"]
        hot_events = hot["n"] + (1 if hot["root"] else 0) + len(hot["synthetic"])
        obj.update(
            call=number,
            estimate=tokens,
            measured=None,
            system_tokens=obj["system"]["tokens"],
            summary_tokens=summary["tokens"],
            hot_tokens=hot["tokens"],
            task_tokens=obj["task"]["tokens"],
            hot_events=hot_events,
            chunks=summary["chunks"],
        )
        obj.pop("_n", None)
        if type(tokens) is int and type(hot_events) is int:
            return obj
    except (KeyError, TypeError):
        pass
    return _call_row_checked(number, obj)


def _call_row_checked(number: int, obj: dict[str, Any]) -> dict[str, Any]:
    summary = obj.get("summary")
    hot = obj.get("hot")
    system = obj.get("system")
    task = obj.get("task")
    summary = summary if type(summary) is dict else {}
    hot = hot if type(hot) is dict else {}
    synthetic = hot.get("synthetic")
    return {
        "kind": "call",
        "call": number,
        "id": _str(obj.get("id")),
        "at": _str(obj.get("at")),
        "model": _str(obj.get("model")),
        "estimate": _int(obj.get("tokens")) or 0,
        "measured": None,
        "system_tokens": _int(system.get("tokens")) if type(system) is dict else None,
        "summary_tokens": _int(summary.get("tokens")) or 0,
        "hot_tokens": _int(hot.get("tokens")),
        "task_tokens": _int(task.get("tokens")) if type(task) is dict else None,
        "hot_events": (_int(hot.get("n")) or 0)
        + (1 if hot.get("root") else 0)
        + (len(synthetic) if type(synthetic) is list else 0),
        "chunks": _int(summary.get("chunks")),
    }


_PASS_FIELDS = (
    "at",
    "compacted",
    "chunk_id",
    "reason",
    "trigger",
    "forced",
    "path",
    "prompt_before",
    "prompt_before_source",
    "predicted_after",
    "cut_index",
    "first_kept_event_id",
    "is_split_turn",
    "turn_start_event_id",
    "headroom_moves",
    "compacted_event_count",
    "kept_event_count",
    "summary_backend",
    "fallback",
    "duration_ms",
)


def _pass_row(obj: dict[str, Any], after_call: int) -> dict[str, Any]:
    row: dict[str, Any] = {"kind": "pass", "recorded": True, "after_call": after_call}
    for key in _PASS_FIELDS:
        row[key] = obj.get(key)
    summary_after = _dict(obj.get("summary_after"))
    row["summary_after_sha"] = _str(summary_after.get("sha"))
    row["measured_after"] = None
    return row


def _index_rows(paths: MemoryPaths) -> dict[str, dict[str, Any]]:
    """Per chunk id: what the index says of the pass that made it (cut_meta, backend)."""
    from core.index.catalog import read_catalog

    out: dict[str, dict[str, Any]] = {}
    try:
        catalog = read_catalog(paths, write=False)
    except (IndexCorruptError, StoreError):
        return out
    for i in range(len(catalog)):
        entry = catalog.entries[i]
        cut = entry.cut_meta or {}
        out[entry.chunk_id] = {
            "created_at": entry.created_at,
            "event_count": entry.event_count,
            "cut_meta": dict(cut),
            "summary_backend": entry.extra.get("summary_backend"),
        }
    return out


def build_timeline(
    paths: MemoryPaths,
    config: CompactionConfig,
    model: str | None = None,
    *,
    light: bool = False,
) -> Timeline:
    """One row per model call and per pass, in the order they happened. A pass row holds the
    prompt before it, the predicted and the measured (next provider figure) prompt after it,
    and `not_smaller` when the after is not below the before (a recorded figure before is
    compared with the measured one after, when there is one; an estimate with the prediction).
    Chunks the ledger has no pass line for (made before it existed, or by recovery) get a row
    from their index entry. `light` (the TUI's Timeline): a call row holds its number, id,
    time, estimate and provider figure only (`light: true`); its parts come with its rebuild."""
    read = read_ledger_light(paths) if light else read_ledger(paths)
    rows, last_model = _ledger_rows(read.lines, model)
    index = _index_rows(paths)
    seen = {r["chunk_id"] for r in rows if r["kind"] == "pass" and r.get("chunk_id")}
    extra = [_unrecorded_pass_row(c, info) for c, info in index.items() if c not in seen]
    if extra:
        rows = _merge_by_time(rows, extra)
    for row in rows:
        if row["kind"] == "pass":
            _judge_pass(row, index.get(row.get("chunk_id") or ""))
    passes = sum(1 for row in rows if row["kind"] == "pass")
    window, threshold = threshold_for(config, last_model)
    return Timeline(rows, window, threshold, read.call_count, passes, read.bad_lines)


def _ledger_rows(
    lines: list[dict[str, Any]], model: str | None
) -> tuple[list[dict[str, Any]], str | None]:
    """(rows, last model) from the ledger's lines in order: a row per call and per pass, each
    `measured` line's figure given to the call it names and, as its measured after, to every
    compacting pass since the previous figure. The last call's model (else `model`) picks the
    window the rows are drawn against."""
    rows: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    waiting: list[dict[str, Any]] = []
    calls = last_call = 0
    last_model = model
    for obj in lines:
        kind = obj.get("kind")
        if kind == "call":
            calls += 1
            row = _call_row(_int(obj.get("_n")) or calls, obj)
            last_call = int(row["call"])
            rows.append(row)
            if row["id"] is not None:
                by_id[row["id"]] = row
            if row.get("model"):
                last_model = row.get("model")
        elif kind == "measured":
            figure = _int(obj.get("prompt_tokens"))
            ref = obj.get("call")
            target = by_id.get(ref) if isinstance(ref, str) else None
            if target is not None:
                target["measured"] = figure
            for row in waiting:
                row["measured_after"] = figure
            waiting = []
        elif kind == "pass":
            row = _pass_row(obj, last_call)
            rows.append(row)
            if row["compacted"]:
                waiting.append(row)
    return rows, last_model


def _unrecorded_pass_row(chunk_id: str, info: dict[str, Any]) -> dict[str, Any]:
    """The row of a chunk the ledger has no pass line for (made before the ledger existed, or
    by recovery), from its index entry: what the pass recorded in cut_meta, nothing measured."""
    cut = info["cut_meta"]
    return {
        "kind": "pass",
        "recorded": False,
        "at": info["created_at"],
        "compacted": True,
        "chunk_id": chunk_id,
        "prompt_before": _int(cut.get("tokens_before")),
        "prompt_before_source": None,
        "predicted_after": _int(cut.get("kept_tokens_estimate")),
        "is_split_turn": bool(cut.get("is_split_turn")),
        "first_kept_event_id": cut.get("first_kept_event_id"),
        "turn_start_event_id": cut.get("turn_start_event_id"),
        "headroom_moves": cut.get("headroom_moves"),
        "summary_backend": info["summary_backend"],
        "fallback": str(info["summary_backend"] or "").endswith("fallback"),
        "measured_after": None,
    }


def _judge_pass(row: dict[str, Any], found: dict[str, Any] | None) -> None:
    """A pass row completed from its index entry (`found`: cut_meta, headroom moves) and
    judged: `not_smaller` when the prompt after is not below the prompt before. Like with like:
    a provider figure before is compared with the next one after, an estimate before with the
    pass's prediction."""
    if found is not None:
        cut = found["cut_meta"]
        row["cut_meta"] = cut
        if row.get("headroom_moves") is None and "headroom_moves" in cut:
            row["headroom_moves"] = cut["headroom_moves"]
    before = _int(row.get("prompt_before"))
    after = _int(row.get("measured_after"))
    if after is None or row.get("prompt_before_source") != "recorded":
        after = _int(row.get("predicted_after"))
    row["not_smaller"] = bool(
        row.get("compacted") and before is not None and after is not None and after >= before
    )


def _merge_by_time(rows: list[dict[str, Any]], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` (in ledger order) with `extra` (sorted by time) placed before the first row that
    happened after each; `after_call` set on the extra rows."""
    extra.sort(key=lambda r: str(r.get("at") or ""))
    out: list[dict[str, Any]] = []
    calls = 0
    k = 0
    for row in rows:
        at = str(row.get("at") or "")
        while k < len(extra) and str(extra[k].get("at") or "") < at:
            extra[k]["after_call"] = calls
            out.append(extra[k])
            k += 1
        if row["kind"] == "call":
            calls = int(row["call"])
        out.append(row)
    for row in extra[k:]:
        row["after_call"] = calls
        out.append(row)
    return out


def summary_text(paths: MemoryPaths, sha: str | None) -> str | None:
    """A kept summary.md version (None: no version, or not stored)."""
    return read_text(paths, sha) if sha else None


__all__ = [
    "Moment",
    "RebuiltPrompt",
    "Timeline",
    "build_timeline",
    "dropped_for_chunk",
    "materialize_moment",
    "measured_for",
    "rebuild",
    "rebuild_call",
    "record_pass",
    "summary_text",
    "threshold_for",
]


# --------------------------------------------------------------------------- what a pass dropped


def dropped_for_chunk(paths: MemoryPaths, chunk_id: str) -> DroppedReport:
    """The facts of `chunk_id` that what followed its pass did not carry: summary.md as the
    pass left it (its kept version) and the hot window of the first call after the pass,
    rebuilt. Without a ledger record: the current summary.md, and the events of the next
    chunk (or of events.jsonl when the chunk is the last)."""
    from core.compaction.dropped import dropped_for, event_texts
    from core.index.chunk_files import read_chunk_events
    from core.store.paths import validate_chunk_id

    validate_chunk_id(chunk_id)
    source = _EventSource(paths)
    ids = source.chunk_ids()
    if chunk_id not in ids:
        raise BadInputError(
            f"no chunk {chunk_id!r} in the index of this session"
            + (f" (it has {ids[0]} … {ids[-1]})" if ids else " (it has no chunk yet)")
        )
    try:
        events = read_chunk_events(paths, chunk_id)[0]
    except OSError as exc:
        raise StoreError(f"cannot read chunk {chunk_id}: {exc.strerror or exc}") from exc
    read = read_ledger(paths)
    sources: dict[str, Any] = {}
    summary: str | None = None
    hot: list[Event] | None = None
    seen_pass = False
    calls = 0
    for obj in read.lines:
        kind = obj.get("kind")
        if kind == "call":
            calls = _int(obj.get("_n")) or calls + 1
        if kind == "pass" and obj.get("chunk_id") == chunk_id:
            seen_pass = True
            after = _dict(obj.get("summary_after"))
            sha = _str(after.get("sha"))
            summary = read_text(paths, sha) if sha else None
            if summary is not None:
                sources["summary"] = "summary.md as the pass left it"
        elif kind == "call" and seen_pass:
            problems: list[str] = []
            hot = _hot_events(source, obj, problems)
            if hot is not None:
                sources["hot_window"] = f"the hot window of call {calls}, the first after the pass"
            break
    if summary is None:
        try:
            summary = read_bytes_no_symlink(paths.summary).decode("utf-8", "replace")
        except OSError:
            summary = ""
        sources["summary"] = "the current summary.md (no kept version of the pass's)"
    if hot is None:
        pos = ids.index(chunk_id)
        if pos + 1 < len(ids):
            hot = source.chunk(ids[pos + 1])
            sources["hot_window"] = f"the events of the next chunk, {ids[pos + 1]}"
        else:
            hot = source.hot()
            sources["hot_window"] = "the current events.jsonl"
    report = dropped_for(chunk_id, events, [summary, *(event_texts(e) for e in hot)])
    report.sources = sources
    return report


# --------------------------------------------------------------------------- a past moment


@dataclass
class Moment:
    """A past model call of a session, laid out as a session folder of its own (read-only
    viewing: the TUI's time travel)."""

    root: Path
    """A memory root holding `session/` as it was at the call."""
    number: int
    call_id: str | None
    at: str | None
    exact: bool
    problems: list[str]

    @property
    def session(self) -> Path:
        return self.root / "session"


def materialize_moment(paths: MemoryPaths, spec: str, dest: Path) -> Moment:
    """Lay out, under the new folder `dest`, the session as it was at the call `spec` names:
    events.jsonl is that call's hot window (rebuilt), summary.md the version it was given, and
    chunks/ the chunks the index held then (their files linked, index.yaml cut to them), so
    every view of the session can be shown as it was. Nothing of `paths` is changed."""
    from core.compaction.state import SessionState
    from core.index.catalog import read_catalog
    from core.index.format import render_index
    from core.jsonl import stored_events_bytes
    from core.store.atomic import atomic_write_bytes

    found = find_call(paths, spec)
    call = found.call
    rebuilt = rebuild(paths, found.number, call, found.measured)
    problems = list(rebuilt.problems)
    session = dest / "session"
    chunks_dir = session / "chunks"
    chunks_dir.mkdir(parents=True)
    source = _EventSource(paths)
    events = _hot_events(source, call, []) or []
    atomic_write_bytes(session / "events.jsonl", stored_events_bytes(events, "moment event"))
    summary_part = _dict(call.get("summary"))
    sha = _str(summary_part.get("sha"))
    if sha is not None:
        text = read_text(paths, sha)
        if text is not None:
            atomic_write_bytes(session / "summary.md", text.encode("utf-8", "surrogatepass"))
    count = _int(summary_part.get("chunks")) or 0
    if count:
        catalog = read_catalog(paths, write=False)
        ids = catalog.chunk_ids()
        count = min(count, len(ids))
        for chunk_id in ids[:count]:
            src = paths.chunk_file(chunk_id)
            target = chunks_dir / src.name
            try:
                os.link(src, target)
            except OSError:
                try:
                    atomic_write_bytes(target, read_bytes_no_symlink(src), sync_folder=False)
                except OSError:
                    problems.append(f"chunk {chunk_id} could not be read")
        if catalog.appendable and count:
            end = catalog.entries[count - 1].end
            fd = os.open(paths.index, os.O_RDONLY)
            try:
                index = os.pread(fd, end, 0)
            finally:
                os.close(fd)
        else:
            index = render_index([catalog.chunk_entry(i) for i in range(count)]).encode("utf-8")
        atomic_write_bytes(chunks_dir / "index.yaml", index)
    state = SessionState.fresh()
    state.session_id = f"call-{found.number}"
    state.created_at = _str(call.get("at")) or state.created_at
    state.model = _str(call.get("model"))
    if found.measured is not None:
        state.last_prompt_tokens = found.measured
        state.prompt_tokens_source = "recorded"
        state.prompt_tokens_after_event_id = events[-1].get("id") if events else None
        state.prompt_tokens_anchored = True
        state.counters["prompt_tokens_recorded"] = 1
    data = json.dumps(state.to_json(), ensure_ascii=False, indent=2) + "\n"
    atomic_write_bytes(session / "state.json", data.encode("utf-8"))
    return Moment(
        dest, found.number, _str(call.get("id")), _str(call.get("at")), rebuilt.exact, problems
    )
