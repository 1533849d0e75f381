"""The performance suite of issue 7: `python -m bench` (not part of the installed runtime).

One module per group (estimate, appends, passes, locking, recall, tui, peer); each `run(quick)`
returns an `Outcome` of figures measured against a baseline in the same run. See
docs/PERFORMANCE.md for the figures and how to reproduce them.
"""
