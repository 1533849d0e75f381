"""follow_lag_p95_ms: a line an agent writes to its log → its event in events.jsonl (issue 23).

`session-inspector follow` runs as its own process on a Codex rollout this process writes, one
line every `PACE_S` (a busy agent; every line written whole, as agents do). A reader thread
tails events.jsonl and stamps each event as it appears; the lag of a log line is the time from
its write to the arrival of its event (`meta.source.line` names the line). Only lines that
make an event are measured (`token_count` and the UI's `event_msg` copies make none). Both
stamps come from this process's monotonic clock. The default configuration (a 128k window)
runs no pass, so this is the cost of tailing, parsing and appending.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, Outcome

PACE_S = 0.02
DEADLINE_S = 30.0


def rollout_lines(turns: int) -> list[dict[str, Any]]:
    """A Codex rollout: per turn a request, a tool call, its output, a reply, token counts."""

    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "timestamp": "2026-12-01T10:00:00.000Z",
            "type": "response_item",
            "payload": payload,
        }

    lines: list[dict[str, Any]] = [
        {
            "timestamp": "2026-12-01T10:00:00.000Z",
            "type": "session_meta",
            "payload": {"id": "bench-follow", "cwd": "/src", "originator": "codex_cli_rs"},
        }
    ]
    total = 0
    for t in range(turns):
        request = {"type": "input_text", "text": f"turn {t}: run the tests in module {t}"}
        lines.append(item({"type": "message", "role": "user", "content": [request]}))
        args = json.dumps({"command": ["bash", "-lc", f"pytest tests/test_{t}.py -q"]})
        call = {"type": "function_call", "name": "shell", "arguments": args, "call_id": f"c{t}"}
        lines.append(item(call))
        total += 1000 + 40 * t
        usage = {"total_token_usage": {"total_tokens": total}}
        usage["last_token_usage"] = {"input_tokens": 900 + 40 * t, "total_tokens": 1000}
        count = {"type": "token_count", "info": usage}
        lines.append(
            {"timestamp": "2026-12-01T10:00:00.000Z", "type": "event_msg", "payload": count}
        )
        output = json.dumps({"output": f"{t} passed\n" * 20, "metadata": {"exit_code": 0}})
        lines.append(item({"type": "function_call_output", "call_id": f"c{t}", "output": output}))
        reply = {"type": "output_text", "text": f"All tests of module {t} pass."}
        lines.append(item({"type": "message", "role": "assistant", "content": [reply]}))
    return lines


class _Tail(threading.Thread):
    """Stamps each event of events.jsonl with its arrival time, by its source line."""

    def __init__(self, events: Path) -> None:
        super().__init__(daemon=True)
        self.events = events
        self.arrived: dict[int, float] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        offset = 0
        partial = b""
        while not self.stop.is_set():
            try:
                with self.events.open("rb") as f:
                    f.seek(offset)
                    data = f.read()
            except FileNotFoundError:
                data = b""
            now = time.monotonic()
            if data:
                offset += len(data)
                chunks = (partial + data).split(b"\n")
                partial = chunks.pop()
                for raw in chunks:
                    source = json.loads(raw).get("meta", {}).get("source", {})
                    self.arrived.setdefault(int(source.get("line", 0)), now)
            else:
                time.sleep(0.001)


def measure(turns: int) -> tuple[list[float], int]:
    lines = rollout_lines(turns)
    with tempfile.TemporaryDirectory(prefix="bench-follow-") as tmp:
        log = Path(tmp) / "rollout.jsonl"
        root = Path(tmp) / "memory"
        log.touch()
        proc = subprocess.Popen(
            [sys.executable, "-m", "inspector", "--memory-dir", str(root), "follow", str(log)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        tail = _Tail(root / "session" / "events.jsonl")
        tail.start()
        written: dict[int, float] = {}
        try:
            with log.open("ab") as out:
                for number, line in enumerate(lines, start=1):
                    out.write(json.dumps(line).encode() + b"\n")
                    out.flush()
                    written[number] = time.monotonic()
                    if number == 2:  # the first event: the follower is up (not measured)
                        deadline = time.monotonic() + DEADLINE_S
                        while 2 not in tail.arrived and time.monotonic() < deadline:
                            time.sleep(0.005)
                        if 2 not in tail.arrived:
                            raise RuntimeError("follow never wrote the first event")
                    time.sleep(PACE_S)  # the agent's pace, not synchronisation
            deadline = time.monotonic() + DEADLINE_S
            last = max(n for n, x in enumerate(lines, start=1) if x["type"] == "response_item")
            while last not in tail.arrived and time.monotonic() < deadline:
                time.sleep(0.005)
        finally:
            tail.stop.set()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=DEADLINE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        lags = [
            (tail.arrived[n] - written[n]) * 1000.0 for n in written if n > 2 and n in tail.arrived
        ]
        expected = sum(
            1 for n, x in enumerate(lines, start=1) if n > 2 and x["type"] == "response_item"
        )
        return lags, expected


def run(quick: bool) -> Outcome:
    out = Outcome()
    lags, expected = measure(60 if quick else 200)
    if len(lags) < expected:
        out.values["follow_lag_p95_ms"] = None
        out.notes["follow_lag_p95_ms"] = (
            f"only {len(lags)} of {expected} lines reached events.jsonl"
        )
        return out
    lags.sort()
    p95 = lags[min(len(lags) - 1, int(0.95 * len(lags)))]
    out.values["follow_lag_p95_ms"] = round(p95, 1)
    out.details["follow"] = {
        "lines_measured": len(lags),
        "lag_p50_ms": round(lags[len(lags) // 2], 1),
        "lag_max_ms": round(lags[-1], 1),
        "pace_ms": PACE_S * 1000,
    }
    return out
