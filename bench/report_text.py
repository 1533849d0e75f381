"""The prose of docs/PERFORMANCE.md: how each figure is measured, and why a target is missed.

`ANALYSIS[key]` is printed under "Targets not met" only when that key missed its target in the
run that wrote the file; it says what costs the time and which design levers were tried.
"""

from __future__ import annotations

METHOD: list[str] = [
    "## How each figure is measured",
    "",
    "Data lives in fresh folders under /tmp, removed afterwards. Events are ~1 KB each (turns",
    "of user_input, tool_call, tool_result, assistant_output; one in five with Chinese text),",
    "written exactly as the store writes them. Each module of `bench/` says more in its",
    "docstring.",
    "",
    "- **append during a pass** (`bench/locking.py`, `bench/appender.py`): a second process",
    "  appends through `MemoryManager.append` on an open-loop Poisson schedule (500/s); each",
    "  latency is measured from the append's *intended* start, so an append that was due while",
    "  an earlier one waited counts its wait (no coordinated omission). Meanwhile this process",
    "  runs one pass over a 10k-event hot window with a summarizer that sleeps 1 s per call (a",
    "  split-turn cut makes two calls). p99 over the appends due while the pass ran. The",
    "  baseline is the same pass on the same store with the session lock held from start to",
    "  end (`with store.lock(): manager.save()`), i.e. a one-phase design.",
    "- **lock hold**: the session lock's process-level acquire/release is wrapped (a bench-only",
    "  patch of `core.store.locks.ProcessLock`); every hold of every pass is recorded, 10 passes",
    "  (3 with --quick) each over a fresh 10k-event window; p99 of the holds.",
    "- **pass** (`bench/passes.py`): `MemoryManager.save()` with a no-op summarizer on N events,",
    "  default config (count trigger, the token path keeps the newest ~20k tokens, so nearly all",
    "  N are compacted). Baseline on the same bytes in the same run: read events.jsonl,",
    "  `json.loads` every line, `json.dumps` every event (the store's options) and write +",
    "  fsync one file. The pass is timed without the recall.sqlite update `save()` runs after",
    "  the pass has committed (outside every lock; its cost against the pass is",
    "  `recall_index_share_of_pass`), so the figure stays the pass's own, as before recall's",
    "  index existed.",
    "  Medians over repetitions (1k: 9, 10k: 5, 100k: 3; quick: 5/3/1).",
    "- **append at 100k** (`bench/appends.py`): median of single `MemoryManager.append` calls on",
    "  a 100k-event (99 MB) events.jsonl.",
    "- **estimate** (`bench/estimate.py`): `estimate_tokens` over 400-character pieces of mixed",
    "  English/Chinese text (10 MB; 2 MB quick), best of three.",
    "- **recall** (`bench/recall.py`): hit@1/hit@5 replay the quality corpus",
    "  (bench/quality/corpus/) as `python -m bench.quality` does and query its identifiers that",
    "  occur in exactly one chunk's events (the same sample), beside the ranking before issue 11",
    "  (`bench/recall_baseline.py`) on the same chunks; the details add the same measure on the",
    "  1k fixture. Fixtures: 1,000 and 10,000 chunk files of 100 events (~600 bytes: a ~20k-word",
    "  vocabulary, paths, dotted and CamelCase names, ticket ids, Chinese) with an index.yaml;",
    "  the 10k one (1M events) is built once and cached under /tmp/bench-cache/. Cold: a fresh",
    "  process imports `core.recall.sqlite_index`, opens the root and answers one query through",
    "  `recall_once` (timed inside the child, interpreter start excluded; bytecode compiled",
    "  once, as an installed package has it), median over 16",
    "  queries (rare words, identifiers, a path, CamelCase, Chinese, two-word phrases), one",
    "  process each; baseline: the same through `MemoryManager` with the in-memory index (it",
    "  reads every chunk file). Warm: the same queries on one reused read-only manager, p50.",
    "  Index share of",
    "  a pass: passes of 2,000 ~1 KB events (no-op summarizer, 1,000 chunks already indexed)",
    "  timed without the index, then the index update they call for timed alone (index.yaml's",
    "  parse cache emptied before each). Size: recall.sqlite (+ WAL) over the chunk files.",
    "- **TUI** (`bench/tui.py`, `bench/tui_child.py`, `bench/tui_appender.py`): each figure in a",
    "  fresh process running `create_app(...)` headless (`App.run_test`, 160×48) with the real",
    '  watcher on a 100k-event session. A frame "shows" an event when `HotWindow.render_line`',
    "  draws that event's row (a bench-only wrapper). First paint: from `create_app` to the frame",
    "  with the newest event. RSS: VmRSS one second later. Append → screen: another process calls",
    "  `MemoryManager.append`; from the start of that call to the frame with the row",
    "  (time.monotonic is one clock for all processes). Loop lag: an asyncio heartbeat every",
    "  20 ms in the app's loop records how late it wakes while another process appends 1,000",
    "  events/s for 10 s (3 s with --quick).",
    "  Scale (`bench/tui_scale_child.py`, issue 14): the same app on the long-lived root of",
    "  `bench/scale_fixture.py` (10,000 chunks and 100 archived sessions; 2,000 and 20 with",
    "  --quick), first paint as above, then each tab opened once (`action_show_tab`) after the",
    "  start-up workers settled: from opening it to the first frame drawing a row of its table",
    "  (a bench-only `DataTable.render_line` wrapper); median of 3 fresh processes (1 with",
    "  --quick); the details give each run and the time until every row is in the table.",
    "- **peer** (`bench/peer.py`): per-turn memory-management overhead, model time excluded",
    "  (langchain's `FakeListChatModel` for the peer, a fixed-text summarizer for the project), at",
    "  sessions of 100, 1,000 and 10,000 messages of ~200 characters. Project turn: `begin_run`,",
    "  `commit_run` (schedules the background pass), `wait_for_maintenance`, `build_prompt`, all",
    "  on disk. Peer turn: append two messages to the in-memory list and call langmem's",
    "  `summarize_messages` with the running summary (what its docs run before each model call);",
    "  nothing is persisted. Thresholds make both summarize every ~80–120 messages. Ratio =",
    "  project / peer: above 1 means the project spends more per turn. The same group profiles",
    "  one project turn at 10,000 messages with cProfile (see the profile section below).",
    "- **scale** (`bench/scale.py`, fixture `bench/scale_fixture.py`): a long-lived root, see",
    "  the growth section below.",
    "",
    "## What changed to meet the targets",
    "",
    "- `core/maintenance/compaction_pass.py`, `core/store/session_store.py`: a pass holds the",
    "  session lock only to pin",
    "  events.jsonl (open at its size, parsed after the lock is released), to publish files it",
    "  staged and fsynced beforehand (renames), and to carry over the events appended meanwhile.",
    "  The prefix check is O(1): the pinned inode cannot be reused while open, plus a digest of",
    "  the snapshot's last 64 KiB. The chunk file is a hard link of the pending evidence, and",
    "  evidence and retained lines are copied verbatim from the snapshot (no second",
    "  serialization) when nothing needs scrubbing. The only fsync left under the lock is",
    "  state.json's own; the folders are fsynced through descriptors taken under the lock",
    "  after it is released, and the indexed evidence is deleted in a second short hold.",
    "- `core/index/reader.py`, `core/index/format.py`: index.yaml is parsed and emitted with",
    "  libyaml (`CSafeLoader` / `CSafeDumper`: the same documents and text, ~5x faster) and",
    "  parsed only when its bytes changed (digest-keyed cache); before, every pass, prompt and",
    "  status parsed it in pure Python, so a turn cost grew with the number of chunks.",
    "- `core/manager.py`, `core/recall/ranking.py`: a warm recall checks its cache key (a few",
    "  stats) before reading index.yaml; before, every query parsed the index (~340 ms at 1,000",
    "  chunks). The key no longer includes events.jsonl: before, every append made the next",
    "  recall re-read and re-tokenize every chunk (~5 s at 1,000 chunks); now the chunks' index",
    "  keeps each chunk's analysis and grows by the new chunk after a pass (copy-on-write",
    "  postings), and only the few pending documents depend on the hot window",
    "  (`after_append_max_ms` in the details). The tokenizer's compound regex backtracked into",
    "  every word; whole-text scans give the same terms about twice as fast (the cold build).",
    "  The index no longer holds every compacted event (and its search text) in memory: it",
    "  keeps term counts, and a search reads the events of the chunks it returns from their",
    "  files (`index_rss_mb`: 158 MB before, ~4 MB after, at 100k events; a warm query costs",
    "  ~3 ms instead of ~1 ms, against a 50 ms target).",
    "- `core/store/session_store.py`, `core/tokens.py`: one JSON decoder and encoder each,",
    "  built once;",
    "  `json.loads`/`json.dumps` with options built a new one (and its scanner) per call, a",
    "  fifth of a pass's parsing time and a little of every append.",
    "- `inspector/tui/plan_process.py`, `inspector/tui/hot_window_model.py`,",
    "  `inspector/tui/widgets/hot_window.py`",
    "  (`tui_loop_lag_p95_ms`, read 78-124 ms before): from 20k events on, the cut preview is",
    "  planned in a child process that is sent only the appended events (in a worker thread a",
    "  100k-event plan held the GIL against the event loop for ~0.3 s: with re-plans off the",
    "  p95 was ~30 ms); the rows a frame draws are built from one read of their span of",
    "  events.jsonl, not an open and a read per row (~0.7 ms a row on the UI thread); the hot",
    "  window looks its styles up once per frame. Alternating the two trees under the same",
    "  load: 174, 192, 116 ms before, 69, 66, 68 ms after. What is left is mostly Textual",
    "  redrawing the list, the header and the detail pane on every batch of appends.",
    "",
    "Not changed: appends were already O(1) (one O_APPEND write under the lock, no read of",
    "events.jsonl, no fsync), and `estimate_tokens` already had an ASCII fast path. The JSON",
    "library stays the standard `json` (no new runtime dependency).",
    "",
]

SCALE_TEXT: list[str] = [
    "The fixture (`bench/scale_fixture.py`) is a memory root as months of passes and rotations",
    "leave it, written with the project's own writers: an active session of 10,000 chunks of",
    "100 events (1M events: runs of a user request, read_file/shell/edit_file calls with paths",
    "and commands, results of a few hundred bytes to a few KB, the answer; one run in five in",
    "Chinese), each chunk summarized by the extractive summarizer, index.yaml, summary.md,",
    "summary_archive.md and recall.sqlite, a hot window of 60 events, and one archived session",
    "(10 chunks, closed by `rotate`) per 100 chunks of history: 100 archives at 10k. It is",
    "built once (several minutes) and cached under /tmp/bench-cache/ keyed by the generator",
    "version; `--quick` uses 2,000 chunks and says so in the notes. Each row below is its own",
    "root of that size (archives = chunks / 100, at least one); the 10-chunk row is the",
    "baseline of every ratio. Other benchmarks get the same root from",
    "`bench.scale_fixture.ensure_scale_root(quick)` (the TUI's scale figures use it);",
    "`BENCH_SCALE_CHUNKS=N python -m bench --only scale` measures a root of N chunks instead",
    "(the smoke test uses 50).",
    "",
    "- pass: a copy of the root (chunk files hard-linked, the rest copied) gets 300 new ~1 KB",
    "  events; `MemoryManager.save()` with a no-op summarizer runs twice (300 more events",
    "  between), and the second one is timed, as a live agent pays it (first pass: the",
    "  process's first, caches cold). It includes the recall.sqlite update `save()` makes.",
    "- status, plan, prompt: `python -m inspector --memory-dir ROOT status` (`plan`,",
    "  `prompt --system … --task …`) in a fresh process, spawn to exit, median of 7 (3 quick)",
    "  after one untimed run.",
    "- rotate: `MemoryManager.rotate()` on a copy of the root, only the call timed.",
    "",
]

PROFILE_TEXT: list[str] = [
    "One project turn of the peer comparison (`begin_run`, `commit_run`, waiting for the",
    "background pass, `build_prompt`) at a session of 10,000 messages, under cProfile: the",
    "calling thread and, separately, the maintenance threads that run the passes",
    "(`commit_run` starts one every turn; most find nothing to compact, one in ~40 messages",
    "compacts). Cumulative and own time are per turn; the profiler roughly doubles the time",
    "of Python-heavy code, so read the shares, not the absolute figures.",
    "",
    "How to read it: `commit_run` writes state.json atomically, fsyncs included",
    "(`_write_state_file`, `posix.fsync`: the durability the default `run` mode promises at",
    "the end of a run), starting a maintenance thread costs a few milliseconds",
    "(`threading.start`), and the wait for the pass is mostly lock acquisition (the session",
    "and maintenance locks, `filelock`), recovery checks and re-parsing the hot window",
    "(`read_pinned`, `parse_event_lines`), plus path checks (`ensure_inside_root`,",
    "`_resolved`). Nothing in the list reads the chunks, so the turn does not grow with",
    "history; the peer keeps its list in memory and writes nothing. Levers: one long-lived",
    "maintenance thread instead of one per turn, no pass at all while the trigger's running",
    "estimate cannot fire (no snapshot, no lock), the root's paths resolved once.",
    "",
]

_COLD_FLOOR = (
    "The root is not what costs the time: the same command on the 10-chunk baseline root "
    "takes nearly as long (see the growth table). The floor is the CLI's start: `python -c "
    "pass` is ~10–30 ms here, but every command imports `core.manager` and everything it "
    "reaches (core.index.catalog, core.compaction.summaries, "
    "core.maintenance.compaction_pass, core.store.session_store, core.recall.ranking, "
    "core.compaction.planner, yaml; `core.summarizer` brings urllib and http.client for its OpenAI "
    "backend): ~0.2–0.4 s of imports on this shared 2-core machine, more under load "
    "(`python -X importtime -m inspector … plan`). The demo scenarios and transcript formats "
    "are already loaded only when their command needs them. Levers, in core/ and "
    "inspector/cli/commands.py: import the summarizer's HTTP client, the planner, recall and the "
    "maintenance pass only where used, so `status`, `plan` and `prompt` import the store, "
    "the catalog and what they read; or a resident process for frequent callers."
)

ANALYSIS: dict[str, str] = {
    "pass_ratio_10k_vs_10_chunks": (
        "Most of the growth is not the pass but the recall.sqlite update that "
        "`MemoryManager.save()` runs after the pass commits (`recall_update` in "
        "`pass_parts_ms`): `PersistentRecallIndex.refresh` (core/recall/sqlite_index.py) "
        "stats every chunk file (two stats each, 20,000 at 10k chunks) and builds a map of every "
        "stored row on each update, ~0.19 s at 10k chunks against ~0.04 s at 10 (cProfile of one "
        "pass). It runs outside every lock, so appends and prompts do not wait for it, but a "
        "caller of `save()` does. The pass itself (`total`: index.yaml appended, summary.md "
        "rendered from the catalog) grows from ~14 to ~24 ms, mostly reading the catalog "
        "under the lock (`lock_read`, ~0.7 → ~5 ms) and staging the commit (~4 → ~6 ms); on "
        "its own that is a ratio of ~1.7. Levers: in core/recall/sqlite_index.py, after a pass the "
        "only new file is the new chunk, so check the chunks folder's and index.yaml's stat "
        "(or the catalog's entry count) rather than every file, and keep the stored rows' map "
        "in the process between updates; in the pass, read only the catalog's last line "
        "under the lock."
    ),
    "status_cold_ms_10k_chunks": _COLD_FLOOR
    + (
        " What grows with history is `list_archives`: it reads each archived session's "
        "catalog (100 at 10k), a few milliseconds each."
    ),
    "plan_cold_ms_10k_chunks": _COLD_FLOOR,
    "prompt_cold_ms_10k_chunks": _COLD_FLOOR,
    "rotate_ms_10k_chunks": (
        "A rotation is one rename plus recovery of the archive and a new session; a miss "
        "means the recovery read more of the archived session than its pending folder."
    ),
    "append_p99_ms_during_pass": (
        "The pass's own lock holds are a few milliseconds (see `lock_hold_10k` in the details); "
        "what remains is the disk: the commit's one fsync under the lock (state.json, which "
        "appends also write, so it is read, changed and written under the lock) and the "
        "renames; on this shared virtual disk an fsync sometimes takes tens of milliseconds, "
        "and an append that arrives during such a commit waits for it."
    ),
    "append_p99_ratio_vs_locked": (
        "Follows from `append_p99_ms_during_pass`: the locked baseline's p99 is the whole pass "
        "(about the summarizer's time), so the ratio misses only when the project's p99 does."
    ),
    "lock_hold_p99_ms_10k": (
        "The holds are renames plus one fsync (state.json). On this shared virtual disk an "
        "fsync normally takes 0.3–4 ms but occasionally tens of milliseconds; a hold that "
        "meets such an fsync misses."
    ),
    "pass_ratio_vs_io_1k": (
        "At 1k events (1 MB) the baseline is one read, one parse and one file written and "
        "fsynced, ~10 ms. A pass must, to stay crash-safe (contract §1, §8), write and fsync "
        "about six files (pending evidence and its sidecar, the sidecar again with the chunk id, "
        "the new events.jsonl, index.yaml, summary.md, state.json) and fsync three folders, "
        "plus plan the cut and estimate tokens. That fixed cost (~5–10 ms on this disk) is "
        "comparable to the whole baseline at 1k, so the ratio is ~1.6–1.9; it falls below 1.5 from "
        "~10k events on, where the cost per event dominates (the copy is verbatim, no second "
        "serialization). Meeting 1.5 at 1k would mean dropping fsyncs the contract requires."
    ),
    "pass_ratio_vs_io_10k": (
        "At 10k (10 MB) the baseline takes ~90 ms: read and parse (~60 ms), serialize (~25 ms), "
        "write and fsync. The pass skips the serialization (it copies the lines verbatim) but "
        "does work the baseline does not: the token estimate of every event (contract §3, "
        "~20 ms: `json.dumps` of every tool call's arguments), the planner over the whole "
        "window (~18 ms, ~2 µs an event) and the fixed cost of the crash-safe files (~10–15 ms, "
        "see the 1k note). That lands the ratio at ~1.5–1.65 depending on the disk. Levers not "
        "taken: a per-event token cache fed by the same process's appends (it helps a runtime "
        "that appends and compacts in one process, not a first pass over a file, which is what "
        "is measured); a faster planner (it is already one linear pass)."
    ),
    "pass_ratio_vs_io_100k": (
        "See the 10k note: token estimates and planning over the whole window are the cost "
        "beyond the baseline."
    ),
    "pass_growth_100k_over_10k": (
        "The pass is linear in the window (parse, token estimate, plan, one verbatim copy); a "
        "ratio above 12 comes from the fixed cost being a smaller share at 100k or from disk "
        "noise on the 100 MB fsync."
    ),
    "recall_p50_ms_1k_chunks": (
        "A warm query reads only the rows of its terms (the rarest first, a common word's rows "
        "only for chunks that can still reach the first places); a miss here means the index was "
        "rebuilt between queries (a file under chunks/ changed)."
    ),
    "recall_cold_ms_1k_chunks": (
        "A fresh process spends ~6-10 ms importing (`core.recall.sqlite_index` pulls in `re`, "
        "`sqlite3`, `unicodedata`, `heapq` and `contextlib`; no `typing`, `dataclasses`, "
        "`pathlib` or `json` at import); the query (open, a stat of every chunk file relative "
        "to the folder's descriptor, the rows of its terms, the returned chunk files read with "
        "only their candidate lines parsed) is ~10-20 ms, most of it reading the returned "
        "chunk files when the page cache does not hold them. On this shared 2-core machine the "
        "median moves between ~19 and ~35 ms with the load; a miss is load. The baseline (a "
        "new manager's in-memory index) takes seconds."
    ),
    "recall_p50_ms_10k_chunks": (
        "Common terms hold thousands of rows at 10,000 chunks; the scoring reads the rarest "
        "terms in full and a common term's rows only for chunks that can still reach the first "
        "places, each term bounded by its own maxima (counted with its rows in SQLite). The "
        "returned chunks' events stay cached (20,000 events, with their folded search texts). "
        "A query of only common words (the Chinese one) gets no pruning and sets the p90. The "
        "median moved between ~6 and ~11 ms with the load on this shared machine; a miss is "
        "load."
    ),
    "recall_index_share_of_pass": (
        "The update analyses every event of the new chunk in Python (tokenize, per-event BM25 "
        "weights: ~80-120 µs per 1 KB event here); index.yaml is not parsed (only the entries "
        "the pass appended), and re-reading the chunk file is ~5% of the update. A pass with a "
        "no-op summarizer only moves bytes (read, copy, fsync), so the update costs several "
        "passes (the figure above). Against a pass with the default (extractive) summarizer "
        "it is ~0.2 of the pass (see the details); with an LLM summarizer (seconds per call) a "
        "few percent. "
        "The update runs after the pass commits, outside every lock (on the maintenance thread "
        "for `request_maintenance`; at the end of a synchronous `save()`), so no append and no "
        "prompt waits for it. Reaching 0.2 against the no-op pass needs a compiled tokenizer "
        "(a native dependency) or deferring the analysis to the first recall."
    ),
    "tui_first_paint_s_10k_chunks": (
        "The hot window itself is small on this root; what competes with the first frame is "
        "start-up reading: the header's chunk count (core's index.catalog, ~20 ms; without it "
        "the `- chunk_id:` lines of a 40 MB index.yaml, ~0.2 s) and the archive listing (each "
        "archived session's rows read once, ~0.3 s for 100) in worker threads that share the "
        "GIL with the UI. A miss on this shared 2-core machine is load from other processes."
    ),
    "tui_chunks_tab_ms_10k": (
        "The tab shows the first 120 entries read from the start of index.yaml, then the whole "
        "index (~1 s for 40 MB in the inspector's scanner) is read in the worker and the table "
        "filled 1,000 rows per loop callback (`tui_scale.chunks_all_rows_ms`). A miss means the "
        "first page's frame waited for the GIL behind another worker (the start-up status or "
        "archive read); levers left: a first page from core's index.catalog, rows built from "
        "light entries with summaries read for the visible rows only."
    ),
    "tui_archive_tab_ms_100_sessions": (
        "Rows come from inspector.tui.archive_list: each archived session read once (line count "
        "of events.jsonl, its index, state.json, a folder walk, the first request) and cached by "
        "its files' stats, so opening the tab costs ~600 stats and a 100-row table. A miss is "
        "the first listing of never-seen archives (~0.3 s cold) or a loaded machine."
    ),
    "tui_first_paint_s_100k": (
        "Not in core: the inspector (inspector/tui/hot_window_model.py) reads and parses the "
        "whole events.jsonl through `core.store.reader.EventTail` before the first frame shows "
        "the newest rows. Parsing 100k ~1 KB lines with `json` alone takes about a second on this "
        "machine (see `read` in the pass timings), and the model then builds a row per event. "
        "The lever is the issue's: a byte-offset index so the virtual list parses only the "
        "visible rows (read the file's tail first, paint, index the rest in the background)."
    ),
    "tui_append_to_screen_ms_p95": (
        "Not in core (an append is ~0.2 ms, see `append_us_p50_100k`): the time is the "
        "watcher's debounce plus the app's work per change on a 100k-event window; with the "
        "loop busy (see `tui_loop_lag_p95_ms`) the frame that draws the new row comes late."
    ),
    "tui_loop_lag_p95_ms": (
        "Not in core. With the same appends, the lag on a 1k-event session is ~30 ms p95 and on "
        "the 100k-event one several times more, so the app's work per change grows with the "
        "window: each batch of appends re-plans the cut preview over every event (~0.2 s of "
        "CPU at 100k in a worker thread, which holds the GIL against the event loop) and "
        "refreshes views. Levers for inspector/: plan incrementally or at most every few "
        "hundred milliseconds while appends stream in, and keep per-event work off the loop."
    ),
    "tui_rss_mb_100k": (
        "Not in core: the inspector builds rows lazily but keeps every parsed event (a dict per "
        "~1 KB line, in the `core.store.reader.Record`s its model holds) for the whole 100k "
        "window, "
        "about 4× the file's 99 MB. A byte-offset index (offsets plus the few fields the list "
        "and the planner need: id, type, role, tokens, tool_call_id) with events parsed on "
        "demand for the visible or selected rows would keep this far below 300 MB."
    ),
}
