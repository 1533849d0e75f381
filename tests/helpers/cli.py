"""Run `python -m inspector` as a real subprocess, the way scripts and other tools call it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.helpers.paths import REPO

if TYPE_CHECKING:
    from core.config import CompactionConfig

CLEARED_ENV = (
    "SESSION_MEMORY_DIR",
    "SESSION_INSPECTOR_CONFIG",
    "SESSION_MEMORY_FAULT",
    "NO_COLOR",
    "FORCE_COLOR",
    "TERM",
)


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a clean shell: no memory/config defaults, the repo importable."""
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env["COLUMNS"] = "120"
    env["PYTHONIOENCODING"] = "utf-8"
    if extra:
        env.update(extra)
    return env


def run_cli(
    args: Sequence[str | Path],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", *map(str, args)],
        cwd=cwd,
        env=cli_env(env),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )


def start_cli(args: Sequence[str | Path], *, cwd: Path = REPO) -> subprocess.Popen[str]:
    """`python -m inspector ARGS` started and left running (a long-lived command such as
    `follow`): stdin closed, stdout and stderr piped as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "inspector", *map(str, args)],
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start_python(args: Sequence[str | Path], *, cwd: Path = REPO) -> subprocess.Popen[str]:
    """`python ARGS` in the CLI's clean environment, left running with stdin and stdout as text
    pipes: the other side of a handshake (a lock holder, a stand-in agent)."""
    return subprocess.Popen(
        [sys.executable, *map(str, args)],
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def run_python(
    args: Sequence[str | Path], *, cwd: Path = REPO, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python ARGS` in the CLI's clean environment, run to the end, its output captured."""
    return subprocess.run(
        [sys.executable, *map(str, args)],
        cwd=cwd,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def cli_ok(root: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """`session-inspector --memory-dir ROOT ARGS` from the repo, which must exit 0."""
    proc = run_cli(["--memory-dir", root, *args], cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


def json_out(proc: subprocess.CompletedProcess[str]) -> Any:
    """The one JSON document on stdout (fails the test with stderr when there is none)."""
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def last_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines, f"no stderr (exit {proc.returncode}); stdout: {proc.stdout[:500]}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return lines[-1]


def write_config(path: Path, **section: Any) -> Path:
    """A small extraction.yaml (thresholds that compact a handful of events)."""
    import yaml

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"session_compaction": section}), encoding="utf-8")
    return path


def config_from_yaml(folder: Path, **section: Any) -> CompactionConfig:
    """`section` as a user's extraction.yaml gives it: written to `folder/c.yaml` (the same file
    the CLI would be handed) and loaded back through core.config."""
    from core.config import load_config

    return load_config(write_config(folder / "c.yaml", **section), folder).config


SMALL_CONFIG = {
    "context_window": 1000,
    "reserve_tokens": 100,
    "keep_recent_tokens": 40,
    "hot_window_events": 4,
    "count_compress_after_events": 6,
    "summary_max_chunks": 2,
    "lock_timeout_seconds": 0.5,
}
