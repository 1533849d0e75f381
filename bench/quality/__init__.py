"""The compaction quality harness (`python -m bench.quality`) and its corpus.

See docs/QUALITY.md.
"""
