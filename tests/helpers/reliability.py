"""Helpers shared by the reliability tests: a seeded memory root and the CLI as a subprocess."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

from core.manager import MemoryManager
from tests.helpers.cli import REPO, cli_env
from tests.helpers.memory import SMALL, fill, small_config


def write_small_config(root: Path) -> Path:
    """SMALL as `root/../config/memory/extraction.yaml`, where the CLI finds it by itself."""
    path = root.parent / "config" / "memory" / "extraction.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"session_compaction": SMALL}), encoding="utf-8")
    return path


def seeded_root(root: Path, turns: int = 6) -> tuple[MemoryManager, list[str]]:
    """A session with one indexed chunk and a few hot turns (and SMALL as the CLI's config);
    returns the manager and the appended ids."""
    write_small_config(root)
    mm = MemoryManager(root, small_config())
    ids: list[str] = []
    for n in range(turns):
        ids.append(mm.begin_run(f"turn {n}: open the camera app, error code E{n}")["id"])
        ids.append(mm.append({"type": "assistant_output", "content": f"recorded E{n}"})["id"])
    result = mm.save()
    assert result.compacted, result.reason
    for n in range(turns, turns + 3):
        ids.append(mm.begin_run(f"turn {n}: open the camera app, error code E{n}")["id"])
    return mm, ids


def closed_seeded_root(tmp_path: Path) -> Path:
    """`tmp_path/memory` seeded as `seeded_root` does, its manager closed: the root as a
    command run afterwards finds it."""
    root = tmp_path / "memory"
    mm, _ids = seeded_root(root)
    mm.close()
    return root


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def error_line(self) -> str:
        lines = self.stderr.strip().splitlines()
        return lines[-1] if lines else ""


def run_cli(
    root: Path, *args: str, stdin: str | None = None, timeout: float = 120, **env: str
) -> CliRun:
    """`python -m inspector --memory-dir ROOT ARGS…` in its own process."""
    proc = subprocess.run(
        [sys.executable, "-m", "inspector", "--memory-dir", str(root), *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        cwd=REPO,
        env=cli_env(env),
        timeout=timeout,
    )
    return CliRun(proc.returncode, proc.stdout, proc.stderr)


READ_ONLY_COMMANDS = ("status", "plan", "recall", "prompt")


def run_each(root: Path, commands: list[str]) -> list[tuple[str, CliRun]]:
    """Run each command (split on spaces): the read-only ones (status, plan, recall, prompt)
    side by side, then the others one after another in order."""
    reading = [c for c in commands if c.split()[0] in READ_ONLY_COMMANDS]
    writing = [c for c in commands if c.split()[0] not in READ_ONLY_COMMANDS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = list(pool.map(lambda c: run_cli(root, *c.split()), reading))
    out = list(zip(reading, runs, strict=True))
    out += [(c, run_cli(root, *c.split())) for c in writing]
    return out


def assert_clean_failure(run: CliRun, code: int, *names: str) -> None:
    """Exit `code`, no traceback, last stderr line `error: …` naming each of `names`."""
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == code, (run.returncode, run.stderr)
    line = run.error_line
    assert line.startswith("error: "), run.stderr
    for name in names:
        assert name in line, (name, line)


def three_chunks(root: Path) -> tuple[MemoryManager, list[str]]:
    """Three compactions (three indexed chunks) and three hot turns after them; the ids."""
    mm = MemoryManager(root, small_config())
    ids: list[str] = []
    for start in (0, 3, 6):
        ids += fill(mm, 3, start=start)
        assert mm.save().compacted
    ids += fill(mm, 3, start=20)
    return mm, ids
