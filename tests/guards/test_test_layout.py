"""The test suite's own layout (issues 15, 21): a test module sits in the folder of its tier and
imports helpers from tests/helpers/ or fixtures from conftest.py, never from another test module,
so deleting or moving one test file cannot break another or run its tests twice."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from tests.conftest import TIERS
from tests.helpers.paths import REPO, TESTS


def _is_test_module(dotted: str) -> bool:
    return any(part.startswith("test_") for part in dotted.split("."))


def imported_test_modules(source: str) -> list[str]:
    """The test modules (a dotted part named test_*) that `source` imports, however spelled:
    `import tests.test_x`, `from tests.test_x import y`, `from tests import test_x`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if _is_test_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if _is_test_module(module):
                found.append(module)
            else:
                found += [f"{module}.{a.name}" for a in node.names if a.name.startswith("test_")]
    return found


def test_the_check_sees_every_spelling_of_a_test_module_import() -> None:
    source = (
        "import tests.test_a\n"
        "from tests.test_b import helper\n"
        "from tests import test_c\n"
        "from .test_d import x\n"
        "def f():\n"
        "    from tests.reliability.test_e import y\n"
        "from tests.helpers.tui import make\n"
        "import pytest\n"
    )
    assert imported_test_modules(source) == [
        "tests.test_a",
        "tests.test_b",
        "tests.test_c",
        "test_d",
        "tests.reliability.test_e",
    ]


def test_no_module_under_tests_imports_a_test_module() -> None:
    offenders = {
        str(path.relative_to(TESTS)): imported
        for path in sorted(TESTS.rglob("*.py"))
        if "__snapshots__" not in path.parts and path != Path(__file__).resolve()
        if (imported := imported_test_modules(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "move shared helpers to tests/helpers/ or tests/conftest.py"


def test_helper_modules_hold_no_tests() -> None:
    """A helper module with a test_ function would be silently not collected."""
    for path in sorted((TESTS / "helpers").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        assert not [n for n in names if n.startswith("test_")], path.name


def timed_property_tests(source: str) -> list[str]:
    """Functions decorated with Hypothesis's `@given` that keep its 200 ms per-example deadline:
    no `@settings(deadline=None)`, no `@settings(parent=…)` and no module-level profile
    (`PROFILE = settings.get_profile(…)`) as a decorator."""
    tree = ast.parse(source)
    profiles = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and "settings" in ast.unparse(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if any(isinstance(d, ast.Name) and d.id in profiles for d in node.decorator_list):
            continue
        calls = [d for d in node.decorator_list if isinstance(d, ast.Call)]
        names = [getattr(c.func, "id", getattr(c.func, "attr", "")) for c in calls]
        if "given" not in names:
            continue
        untimed = any(
            name == "settings"
            and any(
                (
                    k.arg == "deadline"
                    and isinstance(k.value, ast.Constant)
                    and k.value.value is None
                )
                or k.arg == "parent"
                for k in call.keywords
            )
            for name, call in zip(names, calls, strict=True)
        )
        if not untimed:
            found.append(node.name)
    return found


def test_the_deadline_check_tells_timed_from_untimed() -> None:
    source = (
        "@given(st.text())\ndef test_a(t): ...\n"
        "@settings(deadline=None)\n@given(st.text())\ndef test_b(t): ...\n"
        "@settings(parent=PROFILE)\n@given(st.text())\ndef test_c(t): ...\n"
        "@settings(max_examples=5)\n@given(st.text())\ndef test_d(t): ...\n"
        "P = settings.get_profile('ci')\n@P\n@given(st.text())\ndef test_e(t): ...\n"
    )
    assert timed_property_tests(source) == ["test_a", "test_d"]


def test_no_property_test_keeps_the_per_example_deadline() -> None:
    """A 200 ms per-example deadline fails on a loaded 2-core machine, not the code."""
    timed = {
        str(path.relative_to(TESTS)): names
        for path in sorted(TESTS.rglob("*.py"))
        if (names := timed_property_tests(path.read_text(encoding="utf-8")))
    }
    assert timed == {}


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__snapshots__" not in p.parts)


def test_every_test_module_sits_in_a_tier_folder() -> None:
    misplaced = [
        str(path.relative_to(TESTS))
        for path in _modules()
        if path.name.startswith("test_")
        if len(parts := path.relative_to(TESTS).parts) != 2 or parts[0] not in TIERS
    ]
    assert misplaced == [], f"move them into one of tests/{{{','.join(TIERS)}}}/"


def test_no_plain_helper_module_outside_tests_helpers() -> None:
    """tests/ holds conftest.py and the tier folders; a tier folder holds test modules only."""
    plain = [
        str(path.relative_to(TESTS))
        for path in _modules()
        if path.parent != TESTS / "helpers"
        if path.name not in ("__init__.py", "conftest.py") and not path.name.startswith("test_")
    ]
    assert plain == [], "move shared helpers to tests/helpers/"


def test_each_tier_is_a_registered_marker() -> None:
    pytest_config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    markers = pytest_config["tool"]["pytest"]["ini_options"]["markers"]
    registered = {
        m.split(":")[0] for m in markers if m.split(":", 1)[1].strip().startswith("tier ")
    }
    folders = {p.parent.name for p in TESTS.glob("*/test_*.py")}
    assert registered == set(TIERS) == folders


def test_conftest_marks_a_test_with_its_tier(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("guards") is not None
    assert [t for t in TIERS if request.node.get_closest_marker(t)] == ["guards"]
