"""Replays each corpus transcript into a fresh memory root and measures what compaction kept.

The replay itself is `core.transcripts.replay.replay` (the agent's loop: append, let the trigger
run a pass, model call, record the prompt size). The harness hooks in before every model call
(prompt size) and after every pass (what summary.md names now), then inspects the files at the end:
ids across events.jsonl and chunk files, tool pairs, chunk summaries and recall."""

from __future__ import annotations

import dataclasses
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.common import read_jsonl
from bench.quality import metrics as m
from bench.quality.real_corpus import SOURCES, RealSource, check_file, real_dir
from core.config import CompactionConfig
from core.errors import BadInputError
from core.maintenance.compaction_pass import PassResult
from core.manager import MemoryManager
from core.summarizer import Summarizer
from core.tokens import estimate_event_tokens, estimate_tokens
from core.transcripts.importers import FORMATS, load_transcript
from core.transcripts.replay import replay
from core.transcripts.transcript import ModelCall, Transcript

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
RECALL_SAMPLE = 150
"""Identifiers queried per transcript (an even spread over the sorted candidates)."""


def settings(window: int, keep_recent: int) -> CompactionConfig:
    """Realistic settings: reserve a quarter of the window, compress at 80 %, keep a quarter to
    a third of the window verbatim; every other key at its default."""
    return CompactionConfig(
        context_window=window,
        reserve_tokens=window // 4,
        compress_at_percent=80.0,
        keep_recent_tokens=keep_recent,
    )


GENERATED = "generated"
REAL = "real"
GROUPS = (REAL, GENERATED)


@dataclass(frozen=True)
class CorpusEntry:
    name: str
    file: str
    fmt: str
    config: CompactionConfig
    quick: bool = False
    group: str = GENERATED
    """`generated` (bench/quality/corpus/, written by this project) or `real` (real_corpus.py)."""
    max_calls: int | None = None
    """Replay only the first N model calls (a prefix of whole events; None: all of them)."""

    @property
    def source(self) -> RealSource | None:
        return SOURCES.get(self.file) if self.group == REAL else None


CORPUS: tuple[CorpusEntry, ...] = (
    CorpusEntry("pi-coding", "pi-coding-session.jsonl", "pi", settings(65536, 20000)),
    # The same session in a 32k window: twice the passes, so older chunks fold into the
    # Rolling Summary and the "after every pass" checks see it.
    CorpusEntry("pi-coding-32k", "pi-coding-session.jsonl", "pi", settings(32768, 10000)),
    CorpusEntry(
        "swe-marshmallow",
        "swe-marshmallow-timedelta.traj.json",
        "mini-swe-agent",
        settings(32768, 10000),
        quick=True,
    ),
    CorpusEntry(
        "swe-sqlfluff",
        "swe-sqlfluff-nested-fix.traj.json",
        "mini-swe-agent",
        settings(32768, 10000),
    ),
    CorpusEntry(
        "swe-pydicom", "swe-pydicom-json-dict.traj.json", "mini-swe-agent", settings(32768, 10000)
    ),
    CorpusEntry("device-control", "device-control-android.json", "openai", settings(32768, 10000)),
    CorpusEntry("cjk-shop", "cjk-shop-session.json", "openai", settings(32768, 10000), quick=True),
)

REAL_CORPUS: tuple[CorpusEntry, ...] = (
    # pi on Claude Sonnet 4.5: the provider counts ~1.35 tokens per estimated token and sends
    # ~1.6k tokens of system prompt and tools; the session reached 178k tokens.
    CorpusEntry("real-pi", "pi-large-session.jsonl", "pi", settings(65536, 20000), group=REAL),
    # The same session at the window the issue measured Claude Code sessions at.
    CorpusEntry(
        "real-pi-100k", "pi-large-session.jsonl", "pi", settings(100_000, 25000), group=REAL
    ),
    CorpusEntry(
        "real-swe-chat",
        "swe-deepseek-chat-django-11001.traj.json",
        "mini-swe-agent",
        settings(32768, 10000),
        group=REAL,
    ),
    # A reasoning model: no assistant text; its reasoning is resent but not in the trajectory,
    # so the provider counts ~1.6 tokens per estimated token.
    CorpusEntry(
        "real-swe-reasoner",
        "swe-deepseek-reasoner-marshmallow-1343.traj.json",
        "mini-swe-agent",
        settings(32768, 10000),
        group=REAL,
    ),
    CorpusEntry(
        "real-swe-toolcalls",
        "swe-deepseek-v4-flash-astropy-12907.traj.json",
        "mini-swe-agent",
        settings(32768, 10000),
        group=REAL,
    ),
    # tau-bench's tool-calling agent (GPT-4o) with a simulated customer: 9 requests in 62
    # messages, no usage figures (the count rule applies); a small window so it compacts.
    CorpusEntry(
        "real-tau-airline",
        "tau-bench-gpt-4o-airline-record-183.json",
        "openai",
        dataclasses.replace(settings(8192, 2000), count_compress_after_events=40),
        group=REAL,
    ),
    # The same agent; its log gives a later tool call the id of an answered one (the importer
    # pairs them in order).
    CorpusEntry(
        "real-tau-airline-3",
        "tau-bench-gpt-4o-airline-record-3.json",
        "openai",
        dataclasses.replace(settings(8192, 2000), count_compress_after_events=40),
        group=REAL,
    ),
    # Claude Code: ~15k tokens of system prompt and tools that are not events; at 32k that
    # fixed part alone is most of the budget (skipped where core.transcripts.importers lacks the
    # format).
    CorpusEntry(
        "real-claude-code",
        "claude-code-todo-app.jsonl",
        "claude-code",
        settings(32768, 10000),
        group=REAL,
    ),
)
ALL_CORPUS: tuple[CorpusEntry, ...] = CORPUS + REAL_CORPUS


def with_ids(transcript: Transcript, stem: str) -> tuple[Transcript, list[str]]:
    """A copy whose every event carries a stable id `<stem>-<n:05d>`, and the ids in order."""
    ids: list[str] = []

    def tag(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for e in events:
            new = dict(e)
            new["id"] = f"{stem}-{len(ids):05d}"
            ids.append(new["id"])
            out.append(new)
        return out

    calls = [
        ModelCall(inputs=tag(c.inputs), outputs=tag(c.outputs), prompt_tokens=c.prompt_tokens)
        for c in transcript.calls
    ]
    trailing = tag(transcript.trailing)
    return dataclasses.replace(transcript, calls=calls, trailing=trailing), ids


def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def read_index(session: Path) -> list[dict[str, Any]]:
    path = session / "chunks" / "index.yaml"
    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    chunks = data.get("chunks") or []
    return [c for c in chunks if isinstance(c, dict)]


@dataclass
class Report:
    """One transcript's figures (None: nothing to measure, e.g. no request was compacted)."""

    name: str
    format: str
    group: str = GENERATED
    skipped: str | None = None
    """Why the transcript was not replayed (file absent, other bytes, format not importable)."""
    events: int = 0
    calls: int = 0
    passes: int = 0
    compactions: int = 0
    passes_per_100_calls: float = 0.0
    median_events_per_pass: float | None = None
    known_sizes: bool = False
    events_lost: int = 0
    events_doubled: int = 0
    events_unexpected: int = 0
    tool_pairs_split: int = 0
    count_triggered_known_sizes: int = 0
    max_prompt_ratio: float = 0.0
    requests_named_min: float | None = None
    requests_named_final: float | None = None
    requests_compacted: int = 0
    paths_named_min: float | None = None
    paths_named_final: float | None = None
    paths_edited: int = 0
    identifiers_kept: float | None = None
    identifiers_total: int = 0
    summaries: int = 0
    summaries_over_budget: int = 0
    max_summary_tokens_seen: int = 0
    nested_summaries: int = 0
    noise_in_summary: int = 0
    summary_md_tokens_max: int = 0
    recall_queries: int = 0
    recall_hit1: float | None = None
    recall_hit5: float | None = None
    back_to_back_passes: int = 0
    """Passes at consecutive model calls (a pass before call i and another before call i+1)."""
    passes_grew_prompt: int = 0
    """Compacting passes after which the prompt (hot window + summary.md, estimated) was not
    smaller than before."""
    calibration_samples: int = 0
    calibration_error_median: float | None = None
    """|predicted − recorded| / recorded over the recorded prompt sizes, where predicted is the
    trigger's prompt size (status().prompt_tokens) just before the figure is recorded."""
    calibration_error_p90: float | None = None
    calibration_error_after_pass_median: float | None = None
    """The same over the first figure recorded after each pass only: where a reset that leaves
    out the provider's fixed part or ratio shows (and a pass storm starts)."""
    calibration_error_after_pass_p90: float | None = None
    seconds: float = 0.0
    examples: dict[str, list[str]] = field(default_factory=dict)
    calibration_errors: list[float] = field(default_factory=list, repr=False)
    """Every sample (for the pooled median and p90; not in the JSON)."""
    calibration_errors_after_pass: list[float] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        del out["calibration_errors"], out["calibration_errors_after_pass"]
        for k, v in out.items():
            if isinstance(v, float):
                out[k] = round(v, 4)
        return out


class Tracker:
    """The hooks replay calls, and the end-of-run inspection."""

    def __init__(self, root: Path, config: CompactionConfig, report: Report) -> None:
        self.root = root
        self.session = root / "session"
        self.config = config
        self.report = report
        self.window = config.context_window
        self.budget = self.window - config.effective_reserve(self.window)
        self.requests: list[str] = []
        self.paths: list[str] = []
        self.seen_chunks: set[str] = set()
        self.nested: set[str] = set()
        self.compacted_counts: list[int] = []
        self.missing_requests: list[str] = []
        self.missing_paths: list[str] = []
        self.pass_pending = False
        self.pass_calls: list[int] = []
        self.grew: list[str] = []
        self.calibration_errors: list[float] = []
        self.calibration_errors_after_pass: list[float] = []
        self.passed_since_figure = False
        self.recall_misses: list[str] = []

    def prompt_now(self) -> int:
        """The prompt our memory gives the model, estimated: hot window + summary.md."""
        hot = sum(estimate_event_tokens(e) for e in read_jsonl(self.session / "events.jsonl"))
        return hot + estimate_tokens(read_text(self.session / "summary.md"))

    # -- hooks --

    def before_call(self, i: int, _call: ModelCall) -> None:
        r = self.prompt_now() / self.budget
        self.report.max_prompt_ratio = max(self.report.max_prompt_ratio, r)
        if self.pass_pending:
            self.pass_pending = False
            if self.pass_calls and self.pass_calls[-1] == i - 1:
                self.report.back_to_back_passes += 1
            self.pass_calls.append(i)

    def around_pass(self, before: int, result: PassResult) -> None:
        """Called by MeasuredManager.save for every pass the trigger asked for (before
        `after_pass`), with the prompt estimated just before it."""
        self.pass_pending = True
        self.passed_since_figure = True
        if result.compacted:
            after = self.prompt_now()
            if after >= before:
                self.report.passes_grew_prompt += 1
                self.grew.append(f"{before}→{after}")

    def recorded(self, predicted: int | None, figure: int) -> None:
        if predicted is not None and figure > 0:
            error = abs(predicted - figure) / figure
            self.calibration_errors.append(error)
            if self.passed_since_figure:
                self.calibration_errors_after_pass.append(error)
        self.passed_since_figure = False

    def after_pass(self, result: PassResult) -> None:
        rep = self.report
        trig = result.trigger.trigger if result.trigger is not None else None
        if trig == "count" and rep.known_sizes:
            rep.count_triggered_known_sizes += 1
        if not result.compacted:
            return
        self.compacted_counts.append(result.compacted_event_count)
        index = read_index(self.session)
        for entry in index:
            cid = str(entry.get("chunk_id"))
            if cid in self.seen_chunks:
                continue
            self.seen_chunks.add(cid)
            for e in read_jsonl(self.session / "chunks" / f"{cid}.jsonl"):
                if m.is_request(e):
                    self.requests.append(m.request_key(e))
                for p in m.edited_paths(e):
                    if p not in self.paths:
                        self.paths.append(p)
        summary_md = read_text(self.session / "summary.md")
        rep.summary_md_tokens_max = max(rep.summary_md_tokens_max, estimate_tokens(summary_md))
        req = m.named_fraction(self.requests, summary_md)
        if req is not None:
            rep.requests_named_min = min(req, rep.requests_named_min or 1.0)
            rep.requests_named_final = req
            hay = m.collapse(summary_md)
            self.missing_requests = [k for k in self.requests if m.collapse(k) not in hay]
        paths = m.named_fraction(self.paths, summary_md)
        if paths is not None:
            rep.paths_named_min = min(paths, rep.paths_named_min or 1.0)
            rep.paths_named_final = paths
            self.missing_paths = [p for p in self.paths if p not in summary_md]
        rep.requests_compacted = len(self.requests)
        rep.paths_edited = len(self.paths)
        summaries = {str(e.get("chunk_id")): str(e.get("summary") or "") for e in index}
        labels = set(m.SUMMARY_LABELS) | m.learned_labels(summaries.values())
        for cid, s in summaries.items():
            if m.nested_in_chunk_summary(s, labels):
                self.nested.add(f"chunk {cid}")
        for line in m.nested_rolling(summary_md, labels):
            self.nested.add(f"rolling: {line.strip()[:160]}")

    # -- the end --

    def finish(self, mm: MemoryManager, expected_ids: list[str]) -> None:
        rep = self.report
        if self.compacted_counts:
            rep.median_events_per_pass = float(statistics.median(self.compacted_counts))
        index = read_index(self.session)
        hot = read_jsonl(self.session / "events.jsonl")
        chunks = {
            str(e.get("chunk_id")): read_jsonl(
                self.session / "chunks" / f"{e.get('chunk_id')}.jsonl"
            )
            for e in index
        }
        located = [str(e.get("id")) for e in hot if not m.is_synthetic(e)]
        for evs in chunks.values():
            located.extend(str(e.get("id")) for e in evs if not m.is_synthetic(e))
        ids = m.check_ids(expected_ids, located)
        rep.events_lost = len(ids.lost)
        rep.events_doubled = len(ids.doubled)
        rep.events_unexpected = len(ids.unexpected)
        places: dict[str, list[dict[str, Any]]] = {"hot window": hot}
        places.update(chunks)
        split = m.split_tool_pairs(places)
        rep.tool_pairs_split = len(split)
        summaries = {str(e.get("chunk_id")): str(e.get("summary") or "") for e in index}
        rep.summaries = len(summaries)
        over = m.over_budget(summaries, self.config.summarizer.max_summary_tokens)
        rep.summaries_over_budget = len(over)
        rep.max_summary_tokens_seen = max(
            (estimate_tokens(s) for s in summaries.values()), default=0
        )
        rep.nested_summaries = len(self.nested)
        summary_md = read_text(self.session / "summary.md")
        rep.noise_in_summary = m.noise_count(summary_md)
        said: set[str] = set()
        for evs in chunks.values():
            for e in evs:
                said |= m.said_identifiers(e)
        rep.identifiers_total = len(said)
        rep.identifiers_kept = m.kept_fraction(said, summary_md)
        self.recall(mm, chunks)
        errors = sorted(self.calibration_errors)
        rep.calibration_errors = errors
        rep.calibration_samples = len(errors)
        if errors:
            rep.calibration_error_median = float(statistics.median(errors))
            rep.calibration_error_p90 = m.percentile(errors, 0.9)
        after = sorted(self.calibration_errors_after_pass)
        rep.calibration_errors_after_pass = after
        rep.calibration_error_after_pass_median = m.percentile(after, 0.5)
        rep.calibration_error_after_pass_p90 = m.percentile(after, 0.9)
        rep.examples = {
            "grew_prompt": self.grew[:5],
            "requests_missing": self.missing_requests[:5],
            "paths_missing": self.missing_paths[:5],
            "identifiers_missing": sorted(i for i in said if i not in summary_md)[:10],
            "nested": sorted(self.nested)[:3],
            "over_budget": over[:5],
            "lost": ids.lost[:5],
            "doubled": ids.doubled[:5],
            "split": split[:5],
            "recall_misses": self.recall_misses[:10],
        }

    def recall(self, mm: MemoryManager, chunks: dict[str, list[dict[str, Any]]]) -> None:
        unique = m.unique_identifiers(chunks)
        names = sorted(unique)
        if len(names) > RECALL_SAMPLE:
            step = len(names) / RECALL_SAMPLE
            names = [names[int(i * step)] for i in range(RECALL_SAMPLE)]
        hit1 = hit5 = 0
        misses: list[str] = []
        for ident in names:
            got = [h.chunk_id for h in mm.recall(ident, limit=5).results]
            first = bool(got) and got[0] == unique[ident]
            hit1 += first
            hit5 += unique[ident] in got
            if not first:
                misses.append(ident)
        self.recall_misses = misses
        self.report.recall_queries = len(names)
        self.report.recall_hit1 = m.ratio(hit1, len(names))
        self.report.recall_hit5 = m.ratio(hit5, len(names))


class MeasuredManager(MemoryManager):
    """A MemoryManager that tells the tracker the prompt before each pass and the trigger's
    prediction before each recorded prompt size (replay calls `save` and
    `record_prompt_tokens`; nothing else changes)."""

    tracker: Tracker | None = None

    def save(self, *args: Any, **kwargs: Any) -> PassResult:
        tracker = self.tracker
        before = tracker.prompt_now() if tracker is not None else 0
        result = super().save(*args, **kwargs)
        fired = result.trigger is not None and result.trigger.should_compress
        if tracker is not None and (fired or result.compacted):
            tracker.around_pass(before, result)
        return result

    def record_prompt_tokens(self, n: int, *args: Any, **kwargs: Any) -> None:
        if self.tracker is not None:
            self.tracker.recorded(self.status().prompt_tokens, int(n))
        super().record_prompt_tokens(n, *args, **kwargs)


def skip_reason(entry: CorpusEntry, directory: Path) -> str | None:
    """Why a real transcript cannot be replayed here (None: it can)."""
    source = entry.source
    if source is None:
        return None
    if entry.fmt not in FORMATS:
        return (
            f"format {entry.fmt!r} is not importable yet "
            f"(core.transcripts.importers reads {FORMATS})"
        )
    return check_file(directory / entry.file, source)


def entry_dir(entry: CorpusEntry, corpus_dir: Path, real: Path | None) -> Path:
    return real_dir(real) if entry.group == REAL else corpus_dir


def run_entry(
    entry: CorpusEntry,
    corpus_dir: Path = CORPUS_DIR,
    *,
    summarizer: Summarizer | None = None,
    real: Path | None = None,
) -> Report:
    """Replay one transcript into a fresh temporary memory root and measure it (with the
    configured summarizer unless one is given: the tests pass a bad one to see figures drop).
    A real transcript that is absent, or in a format not importable yet, is reported skipped."""
    start = time.perf_counter()
    report = Report(name=entry.name, format=entry.fmt, group=entry.group)
    directory = entry_dir(entry, corpus_dir, real)
    report.skipped = skip_reason(entry, directory)
    if report.skipped is not None:
        return report
    try:
        loaded = load_transcript(directory / entry.file, entry.fmt)
    except BadInputError as exc:
        if entry.group != REAL:
            raise  # the generated corpus always imports (a test checks it)
        report.skipped = f"does not import: {exc}"
        return report
    if entry.max_calls is not None:
        loaded = dataclasses.replace(loaded, calls=loaded.calls[: entry.max_calls], trailing=[])
    transcript, ids = with_ids(loaded, entry.name)
    report.known_sizes = any(c.prompt_tokens is not None for c in transcript.calls)
    tmp = Path(tempfile.mkdtemp(prefix="quality-"))
    try:
        root = tmp / "memory"
        mm = MeasuredManager(root, entry.config, summarizer=summarizer)
        try:
            tracker = Tracker(root, entry.config, report)
            mm.tracker = tracker
            stats = replay(
                transcript, mm, before_call=tracker.before_call, after_pass=tracker.after_pass
            )
            report.events = stats.events_appended
            report.calls = stats.calls
            report.passes = stats.passes
            report.compactions = stats.compactions
            report.passes_per_100_calls = 100.0 * stats.passes / max(1, stats.calls)
            tracker.finish(mm, ids)
        finally:
            mm.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report.seconds = round(time.perf_counter() - start, 2)
    return report


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def overall(reports: Sequence[Report]) -> dict[str, Any]:
    """Counts add up; the prompt ratio is the largest; `_min` figures the smallest; fractions
    are pooled (weighted by what each transcript had to name)."""

    def pooled(value: str, weight: str) -> float | None:
        num = sum(
            (getattr(r, value) or 0.0) * getattr(r, weight)
            for r in reports
            if getattr(r, value) is not None
        )
        den = sum(getattr(r, weight) for r in reports if getattr(r, value) is not None)
        return round(num / den, 4) if den else None

    def smallest(value: str) -> float | None:
        vals = [getattr(r, value) for r in reports if getattr(r, value) is not None]
        return round(min(vals), 4) if vals else None

    skipped = [r for r in reports if r.skipped is not None]
    reports = [r for r in reports if r.skipped is None]
    errors = [x for r in reports for x in r.calibration_errors]
    after = [x for r in reports for x in r.calibration_errors_after_pass]
    return {
        "transcripts": len(reports),
        "skipped": len(skipped),
        "events": sum(r.events for r in reports),
        "calls": sum(r.calls for r in reports),
        "passes": sum(r.passes for r in reports),
        "compactions": sum(r.compactions for r in reports),
        "passes_per_100_calls": round(
            100.0 * sum(r.passes for r in reports) / max(1, sum(r.calls for r in reports)), 2
        ),
        "events_lost": sum(r.events_lost for r in reports),
        "events_doubled": sum(r.events_doubled for r in reports),
        "events_unexpected": sum(r.events_unexpected for r in reports),
        "tool_pairs_split": sum(r.tool_pairs_split for r in reports),
        "count_triggered_known_sizes": sum(r.count_triggered_known_sizes for r in reports),
        "max_prompt_ratio": round(max((r.max_prompt_ratio for r in reports), default=0.0), 4),
        "requests_named_min": smallest("requests_named_min"),
        "requests_named_final": pooled("requests_named_final", "requests_compacted"),
        "paths_named_min": smallest("paths_named_min"),
        "paths_named_final": pooled("paths_named_final", "paths_edited"),
        "identifiers_kept": pooled("identifiers_kept", "identifiers_total"),
        "summaries": sum(r.summaries for r in reports),
        "summaries_over_budget": sum(r.summaries_over_budget for r in reports),
        "max_summary_tokens_seen": max((r.max_summary_tokens_seen for r in reports), default=0),
        "nested_summaries": sum(r.nested_summaries for r in reports),
        "noise_in_summary": sum(r.noise_in_summary for r in reports),
        "summary_md_tokens_max": max((r.summary_md_tokens_max for r in reports), default=0),
        "recall_queries": sum(r.recall_queries for r in reports),
        "recall_hit1": pooled("recall_hit1", "recall_queries"),
        "recall_hit5": pooled("recall_hit5", "recall_queries"),
        "recall_hit1_min": smallest("recall_hit1"),
        "back_to_back_passes": sum(r.back_to_back_passes for r in reports),
        "passes_grew_prompt": sum(r.passes_grew_prompt for r in reports),
        "calibration_samples": sum(r.calibration_samples for r in reports),
        "calibration_error_median": _rounded(m.percentile(errors, 0.5)),
        "calibration_error_p90": _rounded(m.percentile(errors, 0.9)),
        "calibration_error_after_pass_median": _rounded(m.percentile(after, 0.5)),
        "calibration_error_after_pass_p90": _rounded(m.percentile(after, 0.9)),
        "seconds": round(sum(r.seconds for r in reports), 1),
    }


@dataclass(frozen=True)
class Target:
    key: str
    op: str  # "==", "<=", ">="
    value: float
    text: str

    def met(self, got: float | None) -> bool | None:
        if got is None:
            return None
        if self.op == "==":
            return got == self.value
        if self.op == "<=":
            return got <= self.value
        return got >= self.value


TARGETS: tuple[Target, ...] = (
    Target("events_lost", "==", 0, "0"),
    Target("events_doubled", "==", 0, "0"),
    Target("tool_pairs_split", "==", 0, "0"),
    Target("count_triggered_known_sizes", "==", 0, "0"),
    Target("max_prompt_ratio", "<=", 1.02, "≤ 1.02"),
    Target("requests_named_min", ">=", 0.95, "≥ 95 %"),
    Target("requests_named_final", ">=", 0.95, "≥ 95 %"),
    Target("paths_named_min", ">=", 0.95, "≥ 95 %"),
    Target("paths_named_final", ">=", 0.95, "≥ 95 %"),
    Target("identifiers_kept", ">=", 0.50, "≥ 50 %"),
    Target("summaries_over_budget", "==", 0, "0"),
    Target("nested_summaries", "==", 0, "0"),
    Target("recall_hit1", ">=", 0.95, "≥ 0.95"),
    Target("recall_hit5", ">=", 0.99, "≥ 0.99"),
    Target("recall_hit1_min", ">=", 0.95, "≥ 0.95"),
    Target("back_to_back_passes", "==", 0, "0"),
    Target("passes_grew_prompt", "==", 0, "0"),
)


def verdicts(total: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        t.key: {"target": t.text, "value": total.get(t.key), "met": t.met(total.get(t.key))}
        for t in TARGETS
    }


def run(
    entries: Sequence[CorpusEntry],
    corpus_dir: Path = CORPUS_DIR,
    log: Callable[[str], None] | None = None,
    *,
    real: Path | None = None,
) -> dict[str, Any]:
    """Every entry, then the overall figures and each target's verdict: over every transcript
    (`overall`, `targets`) and per group, real and generated apart (`groups`)."""
    reports = []
    for entry in entries:
        if log is not None:
            log(f"quality: {entry.name} …")
        report = run_entry(entry, corpus_dir, real=real)
        if report.skipped is not None and log is not None:
            log(f"quality: {entry.name} skipped: {report.skipped}")
        reports.append(report)
    total = overall(reports)
    groups = {}
    for group in GROUPS:
        members = [r for r in reports if r.group == group]
        if members:
            g = overall(members)
            groups[group] = {
                "transcripts": [r.name for r in members if r.skipped is None],
                "skipped": {r.name: r.skipped for r in members if r.skipped is not None},
                "overall": g,
                "targets": verdicts(g),
            }
    return {
        "transcripts": {r.name: r.to_json() for r in reports if r.skipped is None},
        "skipped": {r.name: r.skipped for r in reports if r.skipped is not None},
        "overall": total,
        "targets": verdicts(total),
        "groups": groups,
        "settings": {
            e.name: {
                "group": e.group,
                "file": e.file,
                "format": e.fmt,
                "max_calls": e.max_calls,
                "context_window": e.config.context_window,
                "reserve_tokens": e.config.reserve_tokens,
                "compress_at_percent": e.config.compress_at_percent,
                "keep_recent_tokens": e.config.keep_recent_tokens,
            }
            for e in entries
        },
    }
