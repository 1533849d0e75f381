"""The prose of docs/PERFORMANCE.md: how each figure is measured, and why a target is missed."""

from __future__ import annotations

METHOD: list[str] = [
    "## How each figure is measured",
    "",
    "See the docstring of each module in `bench/` for the details.",
    "",
]

ANALYSIS: dict[str, str] = {}
