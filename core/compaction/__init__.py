"""Pure compaction logic: the trigger, the cut, what a commit writes, the summaries and the
prompt. Nothing here opens a file, takes a lock or starts a thread (the stopwatch reads the
clock); the store and maintenance call it with data and write what it returns."""
