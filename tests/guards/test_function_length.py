"""No function in core/ is longer than 80 lines (issue 21): a pass, a planner step or a
ranking that grew back into one long function would hide its steps again. Every module under
core/, in every subpackage, is checked."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

ROOT = REPO
LIMIT = 80
COVERED = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "core").rglob("*.py"))


def long_functions(source: str, limit: int = LIMIT) -> list[str]:
    """`name (N lines)` for each function or method in `source` longer than `limit` lines,
    counted from its first decorator to its last line (nested functions count inside their
    parent and on their own)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno if node.end_lineno is not None else node.lineno
            if end - start + 1 > limit:
                found.append(f"{node.name} ({end - start + 1} lines)")
    return found


def test_the_check_finds_a_long_function_and_a_long_method() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(80))
    source = (
        f"def short():\n    return 1\n\n"
        f"@decorated\ndef long():\n{body}\n"
        f"class C:\n    async def method(self):\n"
        + "".join(f"        y{i} = {i}\n" for i in range(80))
    )
    assert long_functions(source) == ["long (82 lines)", "method (81 lines)"]
    assert long_functions("def f():\n" + body) == ["f (81 lines)"]
    assert long_functions("def f():\n" + body[: body.rindex("    x79")]) == []


def test_every_core_folder_is_covered() -> None:
    """The walk reaches the subpackages (a flat glob would see the top of core/ only)."""
    folders = {Path(module).parent.as_posix() for module in COVERED}
    expected = {"core"} | {
        path.parent.relative_to(ROOT).as_posix() for path in (ROOT / "core").glob("*/__init__.py")
    }
    assert expected <= folders
    assert {"core/compaction", "core/maintenance", "core/recall", "core/index"} <= folders


@pytest.mark.parametrize("module", COVERED)
def test_no_function_over_80_lines(module: str) -> None:
    assert long_functions((ROOT / module).read_text(encoding="utf-8")) == []
