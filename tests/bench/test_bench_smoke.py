"""`python -m bench --quick --json` runs from a checkout and reports every key of issue 7.

No timing is asserted (timings live in the benchmark, never in pass/fail tests): each key must be
present, and be a number, or null with a note that says why (e.g. the peer is not installed).
"""

from __future__ import annotations

import math

import pytest

from bench.targets import KEYS
from tests.helpers.bench import ROOT, run_bench_quick


@pytest.mark.extended
def test_quick_json_reports_every_key() -> None:
    # The smoke test checks the keys, not the scale (the scale keys are measured on 50 chunks).
    doc = run_bench_quick()
    missing = [k for k in KEYS if k not in doc]
    assert not missing, f"keys missing from the JSON: {missing}"
    for key in KEYS:
        value = doc[key]
        if value is None:
            assert doc["notes"].get(key), f"{key} is null without a reason"
        else:
            assert isinstance(value, int | float) and math.isfinite(value), (key, value)
            assert value >= 0, (key, value)
        assert doc["results"][key] == value
    assert set(doc["targets_met"]) == set(KEYS)
    assert doc["machine"]["nproc"] >= 1
    assert not (ROOT / "docs" / "PERFORMANCE.md.tmp").exists()
