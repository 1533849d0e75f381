"""`python -m bench [--quick] [--json] [--only GROUPS] [--no-write]`: the performance suite.

Runs every group (each measures the project and its baseline in the same run), prints a table
of each figure with its target and whether it is met (or one JSON document with `--json`), and
on a full run (no `--quick`) writes docs/PERFORMANCE.md. A group that fails reports its keys as
null with the reason; no figure is ever made up.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback
from typing import Any

from bench.common import ROOT, Outcome, machine
from bench.report import fmt, write_report
from bench.targets import BY_KEY, GROUPS, KEYS, TARGETS


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_groups(names: list[str], quick: bool) -> tuple[Outcome, dict[str, float]]:
    total = Outcome()
    seconds: dict[str, float] = {}
    for name in names:
        start = time.perf_counter()
        log(f"bench: {name} …")
        try:
            module = importlib.import_module(f"bench.{name}")
            got: Outcome = module.run(quick)
        except Exception as exc:
            got = Outcome()
            reason = f"the {name} group failed: {type(exc).__name__}: {exc}"
            log(reason)
            log(traceback.format_exc(limit=3))
            for key in GROUPS[name]:
                got.values[key] = None
                got.notes[key] = reason
        seconds[name] = round(time.perf_counter() - start, 1)
        total.merge(got)
    return total, seconds


def met_text(met: bool | None) -> str:
    return {True: "met", False: "NOT met", None: "—"}[met]


def print_table(doc: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"python -m bench{' --quick' if doc['quick'] else ''}")
    table.add_column("key", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_column("target", justify="right")
    table.add_column("", no_wrap=True)
    table.add_column("what")
    for t in TARGETS:
        if t.key not in doc["results"]:
            continue
        value = doc["results"][t.key]
        met = doc["targets_met"].get(t.key)
        style = {True: "green", False: "bold red", None: "dim"}[met]
        table.add_row(t.key, fmt(value), t.target_text, f"[{style}]{met_text(met)}[/]", t.what)
    console = Console()
    console.print(table)
    for key, note in doc["notes"].items():
        console.print(f"[yellow]{key}[/]: {note}", markup=True, highlight=False)
    console.print(f"took {doc['elapsed_s']} s  {doc['group_seconds']}", highlight=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (< 2 minutes)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--only", help="comma-separated groups: " + ", ".join(GROUPS))
    parser.add_argument(
        "--no-write", action="store_true", help="do not write docs/PERFORMANCE.md (full run)"
    )
    args = parser.parse_args(argv)
    names = list(GROUPS)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in GROUPS]
        if unknown:
            parser.error(f"unknown group(s): {', '.join(unknown)}")
    start = time.perf_counter()
    outcome, seconds = run_groups(names, args.quick)
    wanted = [k for k in KEYS if any(k in GROUPS[n] for n in names)]
    results = {k: outcome.values.get(k) for k in wanted}
    doc: dict[str, Any] = {
        **results,
        "results": results,
        "targets_met": {k: BY_KEY[k].met(results[k]) for k in wanted},
        "notes": {k: v for k, v in outcome.notes.items() if k in wanted},
        "quick": args.quick,
        "machine": machine(),
        "details": outcome.details,
        "group_seconds": seconds,
        "elapsed_s": round(time.perf_counter() - start, 1),
    }
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=1))
    else:
        print_table(doc)
    if not args.quick and not args.no_write and names == list(GROUPS):
        path = write_report(doc, ROOT / "docs" / "PERFORMANCE.md")
        log(f"bench: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
