"""The "scale" group (issue 14): does the cost of a pass, a command or a rotation grow with the
history a long-lived root has accumulated?

Every figure is taken on the cached long-lived root of `bench.scale_fixture` (10,000 chunks of
100 events and 100 archived sessions; 2,000 chunks with `--quick`) and, in the same run, on the
baseline root of 10 chunks and one archive; the growth curves add 100 and 1,000 chunks.

- pass: a copy of the root gets 300 new ~1 KB events (the count trigger fires), and
  `MemoryManager.save()` runs with a no-op summarizer, so only the pass's own work is timed;
  the first pass in the process warms caches as a live agent's would be, and the second one
  (after 300 more events) is timed.
- status / plan / prompt: the whole CLI command in a fresh process
  (`python -m inspector --memory-dir ROOT status`, …), wall time from spawn to exit, median of
  several (one untimed run first, so bytecode is compiled as in an installed package).
- rotate: `MemoryManager.rotate()` on a copy of the root, only the call timed.
- disk: index.yaml bytes per chunk; whether summary.md's token estimate is within
  `core.compaction.summaries.summary_md_bound` for the default config.

`BENCH_SCALE_CHUNKS=N` replaces the long-lived size (the smoke test uses 50); the keys keep
their names and the notes say which size was measured.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT, Outcome, make_events, median, python_env, scratch
from bench.scale_fixture import (
    FULL_CHUNKS,
    QUICK_CHUNKS,
    archives_for,
    cached_root,
    copy_root,
)
from bench.targets import GROUPS
from core.compaction.summaries import summary_md_bound
from core.config import CompactionConfig
from core.events import Event
from core.manager import MemoryManager
from core.tokens import estimate_tokens

BASELINE_CHUNKS = 10
NEW_EVENTS = 300
COMMANDS: dict[str, list[str]] = {
    "status": ["status"],
    "plan": ["plan"],
    "prompt": ["prompt", "--system", "You are a device agent.", "--task", "continue"],
}


class NoopSummarizer:
    """Returns at once: the pass is timed without any summarizer work."""

    name = "noop"

    def summarize(self, events: Sequence[Event], **_: Any) -> str:
        return f"{len(events)} events"


def main_size(quick: bool) -> int:
    """The long-lived root's chunk count for this run."""
    given = os.environ.get("BENCH_SCALE_CHUNKS")
    if given:
        return max(BASELINE_CHUNKS, int(given))
    return QUICK_CHUNKS if quick else FULL_CHUNKS


def curve_sizes(main: int, quick: bool) -> list[int]:
    """10, 100, 1,000 … up to and including the long-lived size (`quick`: 10 and that size)."""
    steps = (BASELINE_CHUNKS,) if quick else (BASELINE_CHUNKS, 100, 1_000)
    return [*(n for n in steps if n < main), main]


def _new_events(tag: str) -> list[Event]:
    events = make_events(NEW_EVENTS, prefix=tag)
    for event in events:
        event.pop("ts", None)  # stamped by the store, as a live agent's appends are
    return events


def timed_passes(root: Path, scratch_dir: Path, rep: int) -> tuple[float, float, dict[str, float]]:
    """(cold, warm) seconds of two passes on a copy of `root`: the first in this process, then
    one more after further appends (what a live agent pays per pass); and the warm pass's own
    timings (ms) with its recall.sqlite update."""
    copy = copy_root(root, scratch_dir / f"pass-{rep}")
    manager = MemoryManager(copy, CompactionConfig(), summarizer=NoopSummarizer())
    try:
        times: list[float] = []
        for k in range(2):
            manager.append_many(_new_events(f"sc{rep}x{k}"))
            start = time.perf_counter()
            result = manager.save()
            times.append(time.perf_counter() - start)
            if not result.compacted:
                raise RuntimeError(f"the pass did not compact: {result.reason}")
        parts = dict(result.timings_ms)
        parts["recall_update"] = manager.last_recall_index_ms or 0.0
    finally:
        manager.close()
        shutil.rmtree(copy, ignore_errors=True)
    return times[0], times[1], parts


def timed_rotate(root: Path, scratch_dir: Path, rep: int) -> float:
    """Seconds of one `MemoryManager.rotate()` on a copy of `root`."""
    copy = copy_root(root, scratch_dir / f"rotate-{rep}")
    manager = MemoryManager(copy, CompactionConfig(), summarizer=NoopSummarizer())
    try:
        start = time.perf_counter()
        result = manager.rotate()
        elapsed = time.perf_counter() - start
    finally:
        manager.close()
        shutil.rmtree(copy, ignore_errors=True)
    if result.archive_path is None:
        raise RuntimeError("the rotation archived nothing")
    return elapsed


def cold_command(root: Path, args: list[str]) -> float:
    """Wall seconds of `python -m inspector --memory-dir ROOT ARGS` in a fresh process."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "inspector", "--memory-dir", str(root), *args],
        cwd=ROOT,
        env=python_env(),
        capture_output=True,
        timeout=120,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        tail = (proc.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{args[0]} failed (exit {proc.returncode}): {tail}")
    return elapsed


def interpreter_ms(reps: int) -> float:
    """Median ms of `python -c pass`: the floor under every cold command on this machine."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=python_env(), check=True)
        times.append(time.perf_counter() - start)
    return median(times) * 1000


def cli_import_ms(reps: int) -> float:
    """Median ms of a fresh process that only imports the CLI (no command run)."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "import inspector.cli.commands"],
            cwd=ROOT,
            env=python_env(),
            check=True,
        )
        times.append(time.perf_counter() - start)
    return median(times) * 1000


def cold_commands(root: Path, reps: int) -> dict[str, float]:
    """Median ms of each command; the runs of the three commands are interleaved."""
    for args in COMMANDS.values():
        cold_command(root, args)  # compile bytecode, warm the page cache
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(reps):
        for name, args in COMMANDS.items():
            times[name].append(cold_command(root, args))
    return {name: median(t) * 1000 for name, t in times.items()}


def disk_figures(root: Path, n_chunks: int) -> dict[str, float]:
    """index.yaml bytes per chunk, summary.md's estimate against its bound."""
    session = root / "session"
    summary = (session / "summary.md").read_text(encoding="utf-8")
    tokens = estimate_tokens(summary)
    bound = summary_md_bound(CompactionConfig())
    return {
        "index_bytes": (session / "chunks" / "index.yaml").stat().st_size,
        "index_bytes_per_chunk": (session / "chunks" / "index.yaml").stat().st_size / n_chunks,
        "summary_md_tokens": tokens,
        "summary_md_bound": bound,
        "summary_md_within_bound": 1.0 if tokens <= bound else 0.0,
    }


def measure_passes(
    roots: dict[int, Path], scratch_dir: Path, reps: int
) -> dict[int, dict[str, Any]]:
    """Pass figures at every size; the sizes take turns within each repetition, so a slow
    spell of the shared machine falls on all of them rather than on one."""
    got: dict[int, list[tuple[float, float, dict[str, float]]]] = {n: [] for n in roots}
    for rep in range(reps):
        for n, root in roots.items():
            got[n].append(timed_passes(root, scratch_dir / f"{n}", rep))
    out: dict[int, dict[str, Any]] = {}
    for n, runs in got.items():
        parts = [p for _, _, p in runs]
        out[n] = {
            "pass_ms": median([w for _, w, _ in runs]) * 1000,
            "pass_first_ms": median([c for c, _, _ in runs]) * 1000,
            "pass_ms_all": [round(w * 1000, 1) for _, w, _ in runs],
            "pass_parts_ms": {
                k: round(median([p.get(k, 0.0) for p in parts]), 1) for k in sorted(parts[0])
            },
        }
    return out


def run(quick: bool) -> Outcome:
    out = Outcome()
    main = main_size(quick)
    pass_reps = 3 if quick else 5
    cmd_reps = 3 if quick else 7
    rotate_reps = 2 if quick else 3
    t = time.perf_counter()
    roots = {n: cached_root(n) for n in curve_sizes(main, quick)}
    build_s = time.perf_counter() - t
    curve: list[dict[str, Any]] = []
    rotate_ms: dict[int, float] = {}
    with scratch("scale") as tmp:
        passes = measure_passes(roots, tmp, pass_reps)
        for n, root in roots.items():
            commands = cold_commands(root, cmd_reps)
            curve.append(
                {
                    "chunks": n,
                    "archives": archives_for(n),
                    **passes[n],
                    **{f"{name}_cold_ms": ms for name, ms in commands.items()},
                }
            )
        for n in (BASELINE_CHUNKS, main):
            rotate_ms[n] = (
                median([timed_rotate(roots[n], tmp / f"r{n}", rep) for rep in range(rotate_reps)])
                * 1000
            )
    floor_ms = interpreter_ms(cmd_reps)
    import_ms = cli_import_ms(cmd_reps)
    big = curve[-1]
    base = curve[0]
    disk = disk_figures(roots[main], main)
    out.values["pass_ms_10k_chunks"] = big["pass_ms"]
    out.values["pass_ratio_10k_vs_10_chunks"] = big["pass_ms"] / base["pass_ms"]
    out.values["status_cold_ms_10k_chunks"] = big["status_cold_ms"]
    out.values["plan_cold_ms_10k_chunks"] = big["plan_cold_ms"]
    out.values["prompt_cold_ms_10k_chunks"] = big["prompt_cold_ms"]
    out.values["rotate_ms_10k_chunks"] = rotate_ms[main]
    out.values["index_bytes_per_chunk"] = disk["index_bytes_per_chunk"]
    out.values["summary_md_within_bound_10k"] = disk["summary_md_within_bound"]
    if main != FULL_CHUNKS:
        why = (
            "--quick" if quick and "BENCH_SCALE_CHUNKS" not in os.environ else "BENCH_SCALE_CHUNKS"
        )
        arch = archives_for(main)
        note = (
            f"measured at {main:,} chunks / {arch} archive{'s' if arch != 1 else ''} ({why}), "
            "not 10,000"
        )
        for key in GROUPS["scale"]:
            out.notes[key] = note
    out.details["scale"] = {
        "chunks": main,
        "archives": archives_for(main),
        "events_per_chunk": 100,
        "fixture_ready_s": round(build_s, 1),
        "python_c_pass_ms": round(floor_ms, 1),
        "import_inspector_cli_ms": round(import_ms, 1),
        "baseline": {
            "chunks": BASELINE_CHUNKS,
            "pass_ms": round(base["pass_ms"], 1),
            "status_cold_ms": round(base["status_cold_ms"], 1),
            "plan_cold_ms": round(base["plan_cold_ms"], 1),
            "prompt_cold_ms": round(base["prompt_cold_ms"], 1),
            "rotate_ms": round(rotate_ms[BASELINE_CHUNKS], 1),
        },
        "curve": [
            {k: (round(v, 1) if isinstance(v, float) else v) for k, v in row.items()}
            for row in curve
        ],
        "disk": disk,
        "reps": {"pass": pass_reps, "commands": cmd_reps, "rotate": rotate_reps},
    }
    return out
