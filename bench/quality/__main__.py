"""`python -m bench.quality [--quick] [--json] [--only NAMES]`: the compaction quality harness.

Replays the corpus the project ships (bench/quality/corpus/) and prints, per transcript and
overall, what compaction lost, split or kept, beside the issue's targets (met / not met).
Definitions and settings: docs/QUALITY.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bench.quality.harness import CORPUS, TARGETS, run

COLUMNS: tuple[tuple[str, str], ...] = (
    ("calls", "model calls"),
    ("passes", "passes"),
    ("passes_per_100_calls", "passes/100 calls"),
    ("median_events_per_pass", "events/pass (median)"),
    ("events_lost", "lost"),
    ("events_doubled", "doubled"),
    ("tool_pairs_split", "split"),
    ("count_triggered_known_sizes", "count-trig"),
    ("max_prompt_ratio", "max ratio"),
    ("requests_named_min", "req min"),
    ("requests_named_final", "req final"),
    ("paths_named_min", "paths min"),
    ("paths_named_final", "paths final"),
    ("identifiers_kept", "idents"),
    ("summaries_over_budget", "over budget"),
    ("nested_summaries", "nested"),
    ("noise_in_summary", "noise"),
    ("recall_hit1", "hit@1"),
    ("recall_hit5", "hit@5"),
)


def fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}" if value <= 1.5 else f"{value:.2f}"
    return str(value)


def table(doc: dict[str, Any]) -> str:
    """Metrics as rows, transcripts (and overall) as columns; then the targets."""
    names = list(doc["transcripts"])
    cols = [*names, "overall"]
    rows = [["metric", *cols]]
    for key, label in COLUMNS:
        row = [label]
        for name in names:
            row.append(fmt(doc["transcripts"][name].get(key)))
        row.append(fmt(doc["overall"].get(key)))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.append("")
    lines.append("target                        wanted      overall   met")
    for t in TARGETS:
        got = doc["targets"][t.key]
        met = got["met"]
        verdict = "n/a" if met is None else ("met" if met else "NOT MET")
        lines.append(f"{t.key:<29} {t.text:<11} {fmt(got['value']):<9} {verdict}")
    return "\n".join(lines)


def markdown(doc: dict[str, Any]) -> str:
    """The same table in Markdown (docs/QUALITY.md holds one from a full run)."""
    names = list(doc["transcripts"])
    head = ["metric", *names, "overall", "target", "met"]
    by_key = {t.key: t for t in TARGETS}
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, _label in COLUMNS:
        cells = [f"`{key}`"]
        cells += [fmt(doc["transcripts"][n].get(key)) for n in names]
        cells.append(fmt(doc["overall"].get(key)))
        target = by_key.get(key)
        if target is None:
            cells += ["", ""]
        else:
            met = doc["targets"][key]["met"]
            cells += [target.text, "n/a" if met is None else ("met" if met else "**not met**")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="two small transcripts only")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--markdown", action="store_true", help="the table in Markdown")
    parser.add_argument(
        "--only", default="", help="comma-separated transcript names (see the table's columns)"
    )
    args = parser.parse_args(argv)
    entries = [e for e in CORPUS if e.quick] if args.quick else list(CORPUS)
    if args.only:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = wanted - {e.name for e in CORPUS}
        if unknown:
            print(
                f"error: unknown transcript {', '.join(sorted(unknown))}; known: "
                f"{', '.join(e.name for e in CORPUS)}",
                file=sys.stderr,
            )
            return 2
        entries = [e for e in CORPUS if e.name in wanted]

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    doc = run(entries, log=log)
    if args.json:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    elif args.markdown:
        print(markdown(doc))
    else:
        print(table(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
