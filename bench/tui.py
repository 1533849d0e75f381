"""tui_first_paint_s_100k, tui_append_to_screen_ms_p95, tui_loop_lag_p95_ms, tui_rss_mb_100k.

Each figure comes from a fresh child process (`bench.tui_child`) running the real app headless
with the real watcher on a 100k-event session of ~1 KB events:
- first paint: from `create_app(...)` to the first frame that draws the newest event's row;
- RSS: VmRSS one second after that frame (the peak, VmHWM, is in the details);
- append → screen: another process appends one event through `MemoryManager.append`; from the
  start of that call to the frame that draws its row; p95 over the samples;
- loop lag: an asyncio heartbeat every 20 ms in the app's loop records how late it wakes while
  another process appends 1,000 events/s (10 s; 3 s with --quick); p95 of the lateness;
- Summary tab, 1 MB (`bench.tui_summary_child render`): the app on the Summary tab; a new 1 MB
  summary.md replaces the old one (`os.replace`); from that replace to the frame that draws its
  first line; the median of the repeats after one warm-up;
- scale (`bench.tui_scale_child`, issue 14): the app on `bench.scale_fixture`'s long-lived root
  (10k chunks + 100 archived sessions; 2k + 20 with --quick): first paint, then the Chunks and
  the Archive tab each opened once, to the first frame drawing a row of its table (the
  median of 3 fresh processes; 1 with --quick);
- Summary tab key latency (`bench.tui_summary_child keys`): the app on the Summary tab while
  another process appends runs and forces a pass every 0.25 s; a key every 50 ms; from posting
  the key to its action running; p95.
"""

from __future__ import annotations

from bench.common import Outcome, percentile, run_child, scratch, session_bytes, write_session
from bench.tui_child import newest_id


def run(quick: bool) -> Outcome:
    out = Outcome()
    data = session_bytes(100_000, "big")
    newest = f"big-{100_000 - 1:07d}"
    with scratch("tui") as root:
        write_session(root, data)
        paint = run_child(["bench.tui_child", "paint", str(root), newest], timeout=180)
        out.values["tui_first_paint_s_100k"] = paint["first_paint_s"]
        out.values["tui_rss_mb_100k"] = paint["rss_mb"]
        samples = 15 if quick else 60
        live = run_child(["bench.tui_child", "live", str(root), str(samples)], timeout=300)
        lat = live["latencies_s"]
        out.values["tui_append_to_screen_ms_p95"] = percentile(lat, 95) * 1000
        seconds = 3.0 if quick else 10.0
        lag = run_child(["bench.tui_child", "lag", str(root), "1000", str(seconds)], timeout=300)
        lags = lag["lags_s"]
        out.values["tui_loop_lag_p95_ms"] = percentile(lags, 95) * 1000
    repeats = 3 if quick else 7
    with scratch("tui-summary") as folder:
        render = run_child(
            ["bench.tui_summary_child", "render", str(folder / "render"), str(repeats + 1)],
            timeout=300,
        )
        keys = run_child(
            ["bench.tui_summary_child", "keys", str(folder / "keys"), str(seconds)],
            timeout=300,
        )
    renders = render["render_s"][1:]
    out.values["tui_summary_render_ms_1mb"] = percentile(renders, 50) * 1000
    key_lat = keys["latencies_s"]
    out.values["tui_summary_key_latency_p95_ms"] = percentile(key_lat, 95) * 1000
    out.details["tui_summary"] = {
        "summary_md_bytes": render["bytes"],
        "render_repeats": len(renders),
        "render_warmup_ms": round(render["render_s"][0] * 1000, 1),
        "render_max_ms": round(max(renders) * 1000, 1),
        "key_samples": len(key_lat),
        "key_p50_ms": round(percentile(key_lat, 50) * 1000, 1),
        "key_max_ms": round(max(key_lat) * 1000, 1) if key_lat else None,
        "passes_meanwhile": keys["passes"],
        "summary_rows_at_end": keys["rows"],
        "notes": sorted({*render["notes"], *keys["notes"]}),
    }
    out.details["tui"] = {
        "events": 100_000,
        "first_paint_since_process_start_s": round(paint["since_process_start_s"], 3),
        "hwm_mb": paint["hwm_mb"],
        "append_to_screen_samples": len(lat),
        "append_to_screen_p50_ms": round(percentile(lat, 50) * 1000, 1),
        "append_to_screen_max_ms": round(max(lat) * 1000, 1),
        "lag_seconds": seconds,
        "lag_samples": len(lags),
        "lag_max_ms": round(max(lags) * 1000, 1) if lags else None,
        "lag_appended": lag["appended"],
        "lag_last_row_on_screen_after_s": round(lag["caught_up_after_s"], 3),
        "notes": sorted({*paint["notes"], *live["notes"], *lag["notes"]}),
    }
    out.merge(run_scale(quick))
    return out


def run_scale(quick: bool) -> Outcome:
    """tui_first_paint_s_10k_chunks, tui_chunks_tab_ms_10k, tui_archive_tab_ms_100_sessions."""
    from bench.scale_fixture import ensure_scale_root

    out = Outcome()
    root = ensure_scale_root(quick)
    newest = newest_id(str(root))
    runs = [
        run_child(["bench.tui_scale_child", str(root), newest], timeout=600)
        for _ in range(1 if quick else 3)
    ]

    def median(key: str) -> float:
        return percentile([r[key] for r in runs], 50)

    out.values["tui_first_paint_s_10k_chunks"] = median("first_paint_s")
    out.values["tui_chunks_tab_ms_10k"] = median("chunks_tab_ms")
    out.values["tui_archive_tab_ms_100_sessions"] = median("archive_tab_ms")
    out.details["tui_scale"] = {
        "chunks": runs[0]["chunks_rows"],
        "archives": runs[0]["archive_rows"],
        "quick_root": quick,
        "runs": len(runs),
        "first_paint_s": [round(r["first_paint_s"], 3) for r in runs],
        "chunks_tab_ms": [round(r["chunks_tab_ms"], 1) for r in runs],
        "archive_tab_ms": [round(r["archive_tab_ms"], 1) for r in runs],
        "chunks_first_page_rows": runs[0]["chunks_first_rows"],
        "chunks_all_rows_ms": round(median("chunks_all_rows_ms"), 1),
        "archive_all_rows_ms": round(median("archive_all_rows_ms"), 1),
    }
    return out
