"""Store tier: core with files and processes (the session store, chunks and index.yaml, the
recall index, the manager's flow, concurrency and crash recovery, the ledger, importers, replay
and follow)."""
