"""A small memory setup the crash, recovery and reliability tests share: the config, the turns
they append and the child process that runs one command (optionally dying at a fault point)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from core.config import CompactionConfig
from core.manager import MemoryManager
from tests.helpers.mm_child_run import run_mm_child

SMALL: dict[str, Any] = {
    "count_compress_after_events": 8,
    "hot_window_events": 3,
    "keep_recent_tokens": 100_000,
    "summary_max_chunks": 2,
}
"""A pass every 8 events keeping 3: a few turns give a chunk, so crash tests stay quick."""


def small_config(**changes: Any) -> CompactionConfig:
    """SMALL with `changes` on top."""
    return CompactionConfig(**{**SMALL, **changes})


def run_child(root: Path, *args: str, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    """tests/helpers/mm_child.py on `root` with SMALL, dying at `fault` when one is given."""
    return run_mm_child(root, SMALL, *args, fault=fault)


def read_file_pair(n: int, path: str, content: str) -> list[dict[str, Any]]:
    """A `read_file` tool call of `path` (call id c<n>) and its result `content`."""
    common = {"name": "read_file", "tool_call_id": f"c{n}"}
    return [
        {"type": "tool_call", "role": "assistant", **common, "arguments": {"path": path}},
        {"type": "tool_result", "role": "tool", **common, "content": content},
    ]


def fill(mm: MemoryManager, turns: int, start: int = 0) -> list[str]:
    """`turns` complete turns (user input, tool call, tool result, answer), turn n carrying
    its own code E<n> so a test can tell which turns a summary or recall kept; returns the ids."""
    ids: list[str] = []
    for n in range(start, start + turns):
        ids.append(
            mm.begin_run(f"turn {n}: open the camera app and record the error code E{n}")["id"]
        )
        ids.append(
            mm.append(
                {
                    "type": "tool_call",
                    "name": "shell",
                    "tool_call_id": f"k{n}",
                    "arguments": {"n": n},
                }
            )["id"]
        )
        ids.append(
            mm.append(
                {
                    "type": "tool_result",
                    "name": "shell",
                    "tool_call_id": f"k{n}",
                    "content": f"E{n}",
                }
            )["id"]
        )
        ids.append(mm.append({"type": "assistant_output", "content": f"recorded E{n}"})["id"])
    return ids


def crashed_second_pass(root: Path, fault: str) -> tuple[MemoryManager, list[str]]:
    """One clean compaction, three more turns, then a pass in a child process that dies at
    `fault`, so the crash finds history already indexed; the manager and every appended id."""
    mm = MemoryManager(root, small_config())
    ids = fill(mm, 4)
    assert mm.save().compacted
    ids += fill(mm, 3, start=4)
    crashed = run_child(root, "save", fault=fault)
    assert crashed.returncode == 99, crashed.stderr
    return mm, ids
