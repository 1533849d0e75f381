"""Recall over compacted history (contract §9), in three layers:

- `ranking`: tokenization and BM25 ranking over a `Corpus`, pure (no file is read);
- `sqlite_index`: `chunks/recall.sqlite`, a persistent `Corpus` kept in step with the chunk
  files, and `recall_once`, the cold path of an agent's recall tool;
- `service`: `RecallService`, a manager's recall (the active session, its pending evidence,
  the archives) and what it keeps between calls.

Nothing is imported here: `import core.recall.sqlite_index` in a fresh process (an agent's
recall tool) must not pay for more than it uses.
"""
