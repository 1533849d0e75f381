"""docs/ describes the whole project on its own (issue 13 item 8): every config key
(core/config.py), every CLI command (inspector/cli/commands.py) and every field of `status
--json` named in the code appears in the docs, and the README links the docs instead of files a
clone does not have."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path
from typing import Any

from core.config import CompactionConfig, SummarizerConfig
from core.manager import MemoryManager
from inspector.cli.commands import build_parser
from tests.helpers.paths import REPO


def docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md")))


def named(word: str, text: str) -> bool:
    """The word appears as a whole word (not inside a longer identifier)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def test_every_config_key_is_documented() -> None:
    text = docs_text()
    keys = [f.name for f in dataclasses.fields(CompactionConfig)]
    keys += [f.name for f in dataclasses.fields(SummarizerConfig)]
    missing = [key for key in keys if not named(key, text)]
    assert not missing, f"config keys not described in docs/: {missing}"


def test_every_cli_command_and_option_is_documented() -> None:
    text = docs_text()
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing: list[str] = []
    for command, sub in subparsers.choices.items():
        if not named(command, text):
            missing.append(command)
        for action in sub._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for option in action.option_strings:
                if option.startswith("--") and option != "--help" and not named(option, text):
                    missing.append(f"{command} {option}")
    assert not missing, f"CLI commands/options not described in docs/: {missing}"


def _keys(value: Any, prefix: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append(str(key))
            out += _keys(item, f"{prefix}{key}.")
    elif isinstance(value, list):
        for item in value[:1]:
            out += _keys(item, prefix)
    return out


def test_every_status_json_field_is_documented(tmp_path: Path) -> None:
    manager = MemoryManager(tmp_path / "m", CompactionConfig())
    manager.begin_run("hello")
    manager.record_prompt_tokens(1200)
    manager.commit_run("done")
    manager.save(force=True)
    manager.rotate()
    manager.begin_run("again")
    fields = set(_keys(manager.status().to_json()))
    manager.close()
    text = docs_text()
    missing = sorted(f for f in fields if not named(f, text))
    assert not missing, f"status --json fields not described in docs/: {missing}"


def test_readme_links_only_files_of_the_repository() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "../shared" not in readme
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if "://" in target:
            continue
        assert (REPO / target).exists(), f"README links {target}, which is not in the repository"
    assert "demo memory root" in readme  # what the demo really prints
    assert "export SESSION_MEMORY_DIR=… as the" not in readme
