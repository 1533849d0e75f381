"""Shared pieces of the benchmarks: synthetic events, timing, percentiles, machine facts.

Timings here are wall-clock on a shared machine; every figure that has a baseline is measured
in the same run as its baseline, so the ratios hold when the machine is noisy.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.events import Event  # noqa: E402

ENGLISH = (
    "The agent opened the settings page, found the network panel and reported the status. "
    "Tool call returned 200 OK with 3 results; the user asked for a summary of each one. "
    "It then checked the battery, read the error log at /var/log/app_main.log and retried. "
)
CHINESE = "用户要求整理今天的会议记录，并把待办事项发给项目组。助手打开了日历，确认时间后回复。"
WORDS = (
    "deploy",
    "staging",
    "rollback",
    "invoice",
    "kubernetes",
    "latency",
    "checkout",
    "refund",
    "migration",
    "cache",
    "postgres",
    "webhook",
    "parser",
    "retry",
    "budget",
    "quota",
    "tenant",
    "firmware",
    "sensor",
    "calendar",
)


@dataclass
class Outcome:
    """What one benchmark group measured: figures by key, and a note per key where needed."""

    values: dict[str, float | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def merge(self, other: Outcome) -> None:
        self.values.update(other.values)
        self.notes.update(other.notes)
        self.details.update(other.details)


def text_of_size(rng: random.Random, size: int, cjk: bool) -> str:
    """About `size` UTF-8 bytes of English (and some Chinese) with a few rare words."""
    parts: list[str] = []
    n = 0
    while n < size:
        piece = CHINESE if cjk and rng.random() < 0.35 else ENGLISH
        start = rng.randrange(0, 40)
        piece = piece[start:] + " " + rng.choice(WORDS) + " "
        parts.append(piece)
        n += len(piece.encode("utf-8"))
    text = "".join(parts)
    return text.encode("utf-8")[:size].decode("utf-8", errors="ignore")


_TURN = ("user_input", "tool_call", "tool_result", "assistant_output")
_ROLE = {"user_input": "user", "tool_call": "assistant", "tool_result": "tool"}


def make_events(n: int, *, prefix: str, size: int = 1000, seed: int = 7) -> list[Event]:
    """`n` events of about `size` bytes each as stored: turns of user_input, tool_call,
    tool_result, assistant_output; one in five carries Chinese text."""
    rng = random.Random(seed)
    pool = [text_of_size(rng, size - 170, cjk=(i % 5 == 0)) for i in range(64)]
    out: list[Event] = []
    for i in range(n):
        kind = _TURN[i % 4]
        text = pool[rng.randrange(len(pool))]
        event: Event = {
            "id": f"{prefix}-{i:07d}",
            "type": kind,
            "role": _ROLE.get(kind, "assistant"),
            "ts": "2026-11-29T17:45:43.123Z",
            "run_id": f"run-{i // 4}",
        }
        if kind == "tool_call":
            event["name"] = "read_file"
            event["tool_call_id"] = f"{prefix}-call-{i // 4}"
            event["arguments"] = {"path": "/srv/app/main.py", "note": text}
        elif kind == "tool_result":
            event["name"] = "read_file"
            event["tool_call_id"] = f"{prefix}-call-{i // 4}"
            event["content"] = text
        else:
            event["content"] = text
        out.append(event)
    return out


def events_bytes(events: Sequence[Event]) -> bytes:
    """events.jsonl bytes exactly as the store writes them."""
    from core.jsonl import serialize_event

    return b"".join(serialize_event(e) for e in events)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line of a .jsonl file as a dict, read with plain `json` rather than the project's
    parser (a checker must not share the code it checks); [] when the file does not exist.
    A corrupt line raises."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


@functools.lru_cache(maxsize=2)
def session_bytes(n: int, prefix: str) -> bytes:
    """events.jsonl bytes of `n` ~1 KB events, made once per run."""
    return events_bytes(make_events(n, prefix=prefix))


def write_session(root: Path, data: bytes) -> None:
    """A session whose events.jsonl holds `data` (state.json made by the real store)."""
    from core.store.session_store import SessionStore

    store = SessionStore(root)
    store.ensure_session()
    with open(store.paths.events, "ab") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())  # no setup writeback competing with what is timed next


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-p * len(ordered) // 100))))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


@contextlib.contextmanager
def scratch(name: str) -> Iterator[Path]:
    """A temporary folder under /tmp, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=f"bench-{name}-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def python_env() -> dict[str, str]:
    """Environment for child processes: the project importable, no fault injection, and
    bytecode written and read as an installed tool has it (a shell or CI that sets
    PYTHONDONTWRITEBYTECODE would make every "cold" figure a first-ever compile)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SESSION_MEMORY_FAULT", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_child(args: list[str], timeout: float) -> dict[str, Any]:
    """Run `python -m bench.<args>` and parse the one JSON line it prints last."""
    proc = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env=python_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{' '.join(args[:2])} failed (exit {proc.returncode}): {tail}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def filesystem_of(path: Path) -> str:
    """Type and device of the file system holding `path` (from /proc/mounts)."""
    best = ("", "unknown", "unknown")
    target = str(Path(path).resolve())
    with contextlib.suppress(OSError):
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) < 3:
                continue
            dev, mnt, fstype = parts[0], parts[1], parts[2]
            if (target == mnt or target.startswith(mnt.rstrip("/") + "/")) and len(mnt) > len(
                best[0]
            ):
                best = (mnt, fstype, dev)
    return f"{best[1]} ({best[2]} on {best[0] or '?'})"


def machine() -> dict[str, Any]:
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "filesystem_tmp": filesystem_of(Path("/tmp")),
    }


def rss_mb() -> float:
    """Resident set size of this process in MB (VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")
