"""The shell around a pass: `CompactionPass` (pin, prepare, compact, append), recovery of what
a crashed pass left and `repair`, and rotation into `session_archive/`."""
