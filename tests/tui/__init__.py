"""TUI tier: the inspector under Textual's Pilot, its read models and widgets, the snapshots
(`__snapshots__/`, keyed by module name) and tmux end to end."""
