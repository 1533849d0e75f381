"""tui_first_paint_s_100k, tui_append_to_screen_ms_p95, tui_loop_lag_p95_ms, tui_rss_mb_100k.

Each figure comes from a fresh child process (`bench.tui_child`) running the real app headless
with the real watcher on a 100k-event session of ~1 KB events:
- first paint: from `create_app(...)` to the first frame that draws the newest event's row;
- RSS: VmRSS one second after that frame (the peak, VmHWM, is in the details);
- append → screen: another process appends one event through `MemoryManager.append`; from the
  start of that call to the frame that draws its row; p95 over the samples;
- loop lag: an asyncio heartbeat every 20 ms in the app's loop records how late it wakes while
  another process appends 1,000 events/s (10 s; 3 s with --quick); p95 of the lateness.
"""

from __future__ import annotations

from bench.common import Outcome, percentile, run_child, scratch, session_bytes, write_session


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
    return out
