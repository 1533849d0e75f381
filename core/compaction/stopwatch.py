"""A small stopwatch for the step timings a maintenance pass reports (`PassResult.timings_ms`).

`lap(step)` records the milliseconds since the previous lap (or since `restart()`), so a pass
times its steps one after another without carrying start times from function to function;
`total()` records the milliseconds since the stopwatch was made. Pure but for the clock.
"""

from __future__ import annotations

import time


class Stopwatch:
    """Step timings in milliseconds, by step name, in `timings` (the dict a result reports)."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._started = time.perf_counter()
        self._lap = self._started

    def restart(self) -> None:
        """Begin the next step now: what ran since the last lap is not counted in it."""
        self._lap = time.perf_counter()

    def lap(self, step: str) -> float:
        """Record the time since the last lap (or restart) as `step`, and begin the next."""
        now = time.perf_counter()
        elapsed = (now - self._lap) * 1000.0
        self.timings[step] = elapsed
        self._lap = now
        return elapsed

    def total(self) -> float:
        """Record the time since the stopwatch was made as `total`."""
        elapsed = (time.perf_counter() - self._started) * 1000.0
        self.timings["total"] = elapsed
        return elapsed
