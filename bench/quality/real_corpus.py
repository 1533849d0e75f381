"""Real agent sessions for `python -m bench.quality`: where each one comes from and how to find it.

The generated corpus (bench/quality/corpus/) is written by this project and is regular; these
transcripts were written by agents and people nobody here knows. Their files are not part of the
repository: each is a public file under a licence that allows redistribution, named below by
repository, commit and path, with the sha256 the harness checks before replaying it. Put them
(unchanged, under the names below) in the directory `--real-dir` names, or `$QUALITY_REAL_DIR`,
or bench/quality/corpus-real/ (git ignores its contents); docs/QUALITY.md says how.

A source whose format `core.transcripts.importers` cannot read (in a tree without that importer) or
that the importer refuses is reported as skipped, with the reason; it runs once the importer takes
it."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_REAL_DIR = Path(__file__).resolve().parent / "corpus-real"
ENV_REAL_DIR = "QUALITY_REAL_DIR"
SHARED_REAL_DIR = Path(__file__).resolve().parents[3] / "shared" / "quality-corpus-real"
"""Where a team that keeps the files beside its checkout (a `shared/` folder next to the
repository, as the project's own CI has) puts them; used when corpus-real/ holds none."""


@dataclass(frozen=True)
class RealSource:
    """Where a real transcript comes from (docs/QUALITY.md has the same table)."""

    repo: str
    commit: str
    path: str
    licence: str
    sha256: str
    agent: str
    """Which agent and model wrote it, in a few words."""


def real_dir(explicit: Path | None = None) -> Path:
    """`explicit`, else $QUALITY_REAL_DIR, else bench/quality/corpus-real/ (or, when that holds
    no file, ../shared/quality-corpus-real/ beside the checkout, where it exists)."""
    if explicit is not None:
        return explicit
    env = os.environ.get(ENV_REAL_DIR, "").strip()
    if env:
        return Path(env)
    has_files = DEFAULT_REAL_DIR.is_dir() and any(
        p.name != "README.md" for p in DEFAULT_REAL_DIR.iterdir()
    )
    if not has_files and SHARED_REAL_DIR.is_dir():
        return SHARED_REAL_DIR
    return DEFAULT_REAL_DIR


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_file(path: Path, source: RealSource) -> str | None:
    """None when `path` is the expected file; else a one-line reason it cannot be replayed."""
    if not path.is_file():
        return f"not present ({path}); see docs/QUALITY.md for its source"
    got = sha256_of(path)
    if got != source.sha256:
        return f"{path.name} has sha256 {got[:12]}…, expected {source.sha256[:12]}… (another file?)"
    return None


SWE_FORK_NOTE = (
    "MIT (LICENSE.md of SWE-agent/mini-swe-agent, carried by the contributor's commit: "
    "Copyright (c) 2025 Kilian A. Lieret and Carlos E. Jimenez)"
)

TAU_PATH = "historical_trajectories/gpt-4o-airline.json"
TAU_LICENCE = "MIT (Copyright (c) 2024 Sierra)"

SOURCES: dict[str, RealSource] = {
    "pi-large-session.jsonl": RealSource(
        repo="badlogic/pi-mono",
        commit="83378aad7e74a0e2bb8f37c007a9685fb4609d8a",
        path="packages/coding-agent/test/fixtures/large-session.jsonl",
        licence="MIT (Copyright (c) 2025 Mario Zechner)",
        sha256="cf73261911d2357108adc2d599751e0f19480e0af5a56e20c1e7a7e72aff41fe",
        agent="pi coding agent, Claude Sonnet 4.5 (one aborted GPT-5.1-codex call)",
    ),
    "swe-deepseek-chat-django-11001.traj.json": RealSource(
        repo="SWE-agent/mini-swe-agent",
        commit="3c7d1d7f8fb8630b187744215f67470b6755f60c",
        path="output/deepseek_bench1/django__django-11001/django__django-11001.traj.json",
        licence=SWE_FORK_NOTE,
        sha256="dac1e78240df474c6303efe27ce6e80dcbcc88d5d39a8bbacc9d08ebec5c61df",
        agent="mini-swe-agent 1.x (text actions), deepseek-chat",
    ),
    "swe-deepseek-reasoner-marshmallow-1343.traj.json": RealSource(
        repo="SWE-agent/mini-swe-agent",
        commit="ec0e8e849fea5b1619deb1753007201000904672",
        path=(
            "output/deepseek_reasoner_dev/marshmallow-code__marshmallow-1343/"
            "marshmallow-code__marshmallow-1343.traj.json"
        ),
        licence=SWE_FORK_NOTE,
        sha256="1277c94520c40592a8178dd7f2c1e93874098121ca8c6e37621442d0e8b9aa4d",
        agent="mini-swe-agent (tool calls), deepseek-reasoner: no assistant text at all",
    ),
    "swe-deepseek-v4-flash-astropy-12907.traj.json": RealSource(
        repo="SWE-agent/mini-swe-agent",
        commit="9c0e0e7784f6a45a9ab1c952639055e592577f58",
        path="eval/example_trajectories/astropy__astropy-12907.traj.json",
        licence=SWE_FORK_NOTE,
        sha256="3ab3fee88000f774ae386f6402264a2608ca9dae2c07420afd16112396a8854f",
        agent="mini-swe-agent 2.x (tool calls), deepseek-v4-flash",
    ),
    "tau-bench-gpt-4o-airline-record-183.json": RealSource(
        repo="sierra-research/tau-bench",
        commit="7362a1708d720a4d697d042f21fd8637ea144c3b",
        path=TAU_PATH + " (record 183's `traj`: its messages, unchanged)",
        licence=TAU_LICENCE,
        sha256="9f531bdb8922f65f418c380debb9e1c6587720a14c7f030d115748b337945a1d",
        agent="tau-bench tool-calling agent, GPT-4o, with a GPT-4o simulated customer",
    ),
    "tau-bench-gpt-4o-airline-record-3.json": RealSource(
        repo="sierra-research/tau-bench",
        commit="7362a1708d720a4d697d042f21fd8637ea144c3b",
        path=TAU_PATH + " (record 3's `traj`: its messages, unchanged)",
        licence=TAU_LICENCE,
        sha256="700fbb66950ab2bdbda79b0efb4acadee63ceb5b8fefceb7dad2cf7478ed1c66",
        agent="the same agent; its log reuses a tool call id (as 49 of the file's 200 do)",
    ),
    "claude-code-todo-app.jsonl": RealSource(
        repo="d-kimuson/claude-code-viewer",
        commit="9367cf006be9965c954e6cd36526f2195dce67ea",
        path=(
            "mock-global-claude-dir/projects/sample-project/"
            "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
        ),
        licence="MIT (Copyright (c) 2025 Claude Code Viewer)",
        sha256="8cce2fac5f598346c277e071e1a410a4f12b96dfde1581c9722d32b54dd613e6",
        agent="Claude Code 1.0.98 (paths anonymised to /path/to/Demo), Claude Sonnet 4",
    ),
}
