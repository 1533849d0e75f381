"""Unit tier: pure core (compaction, planner, trigger, tokens, events, summaries, summarizer,
ranking, the index scanner, redaction) on values built in memory; `python -m pytest tests/unit`
is the inner loop and runs in seconds."""
