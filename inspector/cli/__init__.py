"""The command line: `session-inspector` and its subcommands (commands.py), their text and
JSON output, and the commands that run beside the TUI (follow, serve, docs_samples).

Nothing here imports Textual at import time; `tui` and `demo` import the TUI when they start it.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The console script `session-inspector` (`inspector.cli:main`): see `commands.main`."""
    from inspector.cli.commands import main as run

    return run(argv)
