"""The session's files: paths, atomic writes, the session lock, events.jsonl and state.json
(`SessionStore`), snapshots, the incremental reader, the prompt ledger and the crash tests'
fault points."""
