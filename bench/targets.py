"""Every figure `python -m bench` reports, in order, with its target (issue 7)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    key: str
    what: str
    unit: str
    op: str | None  # "<=", ">=" or None (reported, no target)
    limit: float | None

    def met(self, value: float | None) -> bool | None:
        if self.op is None or self.limit is None or value is None:
            return None
        return value <= self.limit if self.op == "<=" else value >= self.limit

    @property
    def target_text(self) -> str:
        if self.op is None or self.limit is None:
            return "—"
        op = "≤" if self.op == "<=" else "≥"
        return f"{op} {self.limit:g} {self.unit}".rstrip()


TARGETS: tuple[Target, ...] = (
    Target(
        "append_p99_ms_during_pass",
        "append p99 from a 2nd process during a pass with a 1 s summarizer",
        "ms",
        "<=",
        10,
    ),
    Target(
        "append_p99_ratio_vs_locked",
        "that p99 / p99 with a pass that holds the lock while summarizing",
        "",
        "<=",
        0.02,
    ),
    Target("lock_hold_p99_ms_10k", "session-lock hold of a pass, 10k hot window", "ms", "<=", 50),
    Target("pass_ms_1k", "one pass, no-op summarizer, 1k × 1 KB events", "ms", None, None),
    Target("pass_ms_10k", "one pass, no-op summarizer, 10k × 1 KB events", "ms", None, None),
    Target("pass_ms_100k", "one pass, no-op summarizer, 100k × 1 KB events", "ms", None, None),
    Target("pass_ratio_vs_io_1k", "pass / read+parse+serialize+write+fsync, 1k", "", "<=", 1.5),
    Target("pass_ratio_vs_io_10k", "pass / read+parse+serialize+write+fsync, 10k", "", "<=", 1.5),
    Target("pass_ratio_vs_io_100k", "pass / read+parse+serialize+write+fsync, 100k", "", "<=", 1.5),
    Target("pass_growth_100k_over_10k", "pass_ms_100k / pass_ms_10k", "", "<=", 12),
    Target("append_us_p50_100k", "one append, 100k-event hot window", "µs", "<=", 500),
    Target("estimate_mb_s", "estimate_tokens on mixed English/CJK text", "MB/s", ">=", 50),
    Target(
        "recall_p50_ms_1k_chunks", "recall query, 1,000 chunks / 100k events, warm", "ms", "<=", 50
    ),
    Target("recall_hit1", "recall: the one chunk first (quality corpus)", "", ">=", 0.95),
    Target("recall_hit5", "recall: the one chunk in the first five", "", ">=", 0.99),
    Target("recall_cold_ms_1k_chunks", "recall in a fresh process, 1,000 chunks", "ms", "<=", 50),
    Target(
        "recall_cold_ms_10k_chunks", "recall in a fresh process, 10,000 chunks", "ms", "<=", 200
    ),
    Target(
        "recall_p50_ms_10k_chunks", "recall query, 10,000 chunks / 1M events, warm", "ms", "<=", 10
    ),
    Target(
        "recall_index_share_of_pass", "recall.sqlite update / the pass's own time", "", "<=", 0.2
    ),
    Target("recall_index_size_ratio", "recall.sqlite size / chunk files' size", "", "<=", 1),
    Target(
        "tui_first_paint_s_100k", "TUI start → first frame with the newest of 100k", "s", "<=", 1.5
    ),
    Target(
        "tui_append_to_screen_ms_p95", "append by another process → row on screen", "ms", "<=", 250
    ),
    Target(
        "tui_loop_lag_p95_ms", "event-loop lag while 1,000 events/s are appended", "ms", "<=", 100
    ),
    Target("tui_rss_mb_100k", "TUI resident memory, 100k session open", "MB", "<=", 300),
    Target(
        "tui_summary_render_ms_1mb", "new 1 MB summary.md → on the Summary tab", "ms", "<=", 200
    ),
    Target(
        "tui_summary_key_latency_p95_ms",
        "key latency on the Summary tab while passes run",
        "ms",
        "<=",
        100,
    ),
    Target(
        "tui_first_paint_s_10k_chunks",
        "TUI start → first frame with the newest row, 10k chunks + 100 archives",
        "s",
        "<=",
        1.5,
    ),
    Target(
        "tui_chunks_tab_ms_10k", "Chunks tab opened → rows on screen, 10k chunks", "ms", "<=", 300
    ),
    Target(
        "tui_archive_tab_ms_100_sessions",
        "Archive tab opened → rows on screen, 100 archived sessions",
        "ms",
        "<=",
        300,
    ),
    Target("peer_turn_ratio_100", "per-turn overhead / peer's, 100 messages", "", None, None),
    Target("peer_turn_ratio_1k", "per-turn overhead / peer's, 1,000 messages", "", None, None),
    Target("peer_turn_ratio_10k", "per-turn overhead / peer's, 10,000 messages", "", None, None),
    Target(
        "pass_ms_10k_chunks", "one pass, no-op summarizer, root of 10k chunks", "ms", None, None
    ),
    Target(
        "pass_ratio_10k_vs_10_chunks", "that pass / the same at 10 chunks, 1 archive", "", "<=", 1.5
    ),
    Target(
        "status_cold_ms_10k_chunks",
        "`status`, fresh process, 10k chunks, 100 archives",
        "ms",
        "<=",
        250,
    ),
    Target("plan_cold_ms_10k_chunks", "`plan`, fresh process, 10k chunks", "ms", "<=", 250),
    Target("prompt_cold_ms_10k_chunks", "`prompt`, fresh process, 10k chunks", "ms", "<=", 250),
    Target("rotate_ms_10k_chunks", "`rotate` of a session of 10k chunks", "ms", "<=", 500),
    Target("index_bytes_per_chunk", "index.yaml bytes per chunk at 10k chunks", "B", None, None),
    Target("summary_md_within_bound_10k", "1 if summary.md ≤ summary_md_bound at 10k", "", ">=", 1),
    Target(
        "ledger_append_us_p50",
        "prompt-ledger line: build_prompt p50 with it − without it",
        "µs",
        "<=",
        50,
    ),
    Target(
        "prompt_rebuild_cold_ms_10k_chunks",
        "`prompt --at N`, fresh process, past call of a 10k-chunk session",
        "ms",
        "<=",
        250,
    ),
    Target(
        "timeline_open_ms_10k_calls",
        "timeline read (the Timeline's rows), 10k calls / 1k passes",
        "ms",
        "<=",
        300,
    ),
    Target(
        "follow_lag_p95_ms", "`follow`: agent log line written → its event stored", "ms", "<=", 250
    ),
)

KEYS: tuple[str, ...] = tuple(t.key for t in TARGETS)
BY_KEY: dict[str, Target] = {t.key: t for t in TARGETS}

GROUPS: dict[str, tuple[str, ...]] = {
    "follow": ("follow_lag_p95_ms",),
    "estimate": ("estimate_mb_s",),
    "appends": ("append_us_p50_100k",),
    "passes": (
        "pass_ms_1k",
        "pass_ms_10k",
        "pass_ms_100k",
        "pass_ratio_vs_io_1k",
        "pass_ratio_vs_io_10k",
        "pass_ratio_vs_io_100k",
        "pass_growth_100k_over_10k",
    ),
    "locking": ("append_p99_ms_during_pass", "append_p99_ratio_vs_locked", "lock_hold_p99_ms_10k"),
    "recall": (
        "recall_p50_ms_1k_chunks",
        "recall_hit1",
        "recall_hit5",
        "recall_cold_ms_1k_chunks",
        "recall_cold_ms_10k_chunks",
        "recall_p50_ms_10k_chunks",
        "recall_index_share_of_pass",
        "recall_index_size_ratio",
    ),
    "tui": (
        "tui_first_paint_s_100k",
        "tui_append_to_screen_ms_p95",
        "tui_loop_lag_p95_ms",
        "tui_rss_mb_100k",
        "tui_summary_render_ms_1mb",
        "tui_summary_key_latency_p95_ms",
        "tui_first_paint_s_10k_chunks",
        "tui_chunks_tab_ms_10k",
        "tui_archive_tab_ms_100_sessions",
    ),
    "peer": ("peer_turn_ratio_100", "peer_turn_ratio_1k", "peer_turn_ratio_10k"),
    "scale": (
        "pass_ms_10k_chunks",
        "pass_ratio_10k_vs_10_chunks",
        "status_cold_ms_10k_chunks",
        "plan_cold_ms_10k_chunks",
        "prompt_cold_ms_10k_chunks",
        "rotate_ms_10k_chunks",
        "index_bytes_per_chunk",
        "summary_md_within_bound_10k",
    ),
    "ledger": (
        "ledger_append_us_p50",
        "prompt_rebuild_cold_ms_10k_chunks",
        "timeline_open_ms_10k_calls",
    ),
}
"""The keys each group of `python -m bench` reports (`bench/<group>.py`), in run order: the
one list the runner, a group and its tests name them by."""
