"""Command line (contract §12). Placeholder until the CLI issue lands: it only prints help."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    print("usage: session-inspector [--memory-dir M] [--config PATH] COMMAND ...")
    if args and args[0] not in ("-h", "--help"):
        print(f"error: command {args[0]!r} is not implemented yet", file=sys.stderr)
        return 2
    return 0
