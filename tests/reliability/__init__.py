"""Reliability and security suite (issue 6): crashes, kills, disk errors, concurrency, hostile
input. `python -m pytest tests/reliability` runs the bounded versions; `-m slow` the full ones."""
