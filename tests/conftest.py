"""Fixtures the test modules share, and each test's tier marker from its folder. Helpers that are
functions rather than fixtures live in tests/helpers/: a test module never imports from another
test module."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# Each folder is a tier and its marker (registered in pyproject.toml): `-m unit` is the same
# selection as `tests/unit`, and a test module outside every tier folder fails the layout guard.
TIERS = ("unit", "store", "cli", "tui", "bench", "reliability", "guards")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test with its tier, read from the folder its module sits in."""
    for item in items:
        parts = item.path.resolve().relative_to(TESTS).parts
        if len(parts) > 1 and parts[0] in TIERS:
            item.add_marker(getattr(pytest.mark, parts[0]))


@pytest.fixture
def basic(tmp_path: Path) -> Path:
    """`tmp_path/m`: a session with one compaction behind it, more turns after it and a recorded
    prompt of 3,300 tokens, so the next pass compacts
    (tests/helpers/tui_fixtures.py::build_basic)."""
    # Imported here, so a broken TUI import fails the TUI tests only.
    from tests.helpers.tui_fixtures import build_basic

    return build_basic(tmp_path / "m")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """`tmp_path/m` with markup, escapes, a 5 MB line, invalid UTF-8, a truncated last line, a
    hostile chunk id in the index and an empty summary.md (tui_fixtures.py::build_hostile)."""
    from tests.helpers.tui_fixtures import build_hostile

    return build_hostile(tmp_path / "m")
