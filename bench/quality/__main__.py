"""`python -m bench.quality [--quick] [--json] [--only NAMES] [--group G] [--real-dir DIR]`.

The compaction quality harness: replays the generated corpus the project ships
(bench/quality/corpus/) and the real sessions found in the real-corpus directory
(bench/quality/real_corpus.py), and prints per transcript and per group (real, generated) what
compaction lost, split or kept, beside the issue's targets (met / not met).
Definitions and settings: docs/QUALITY.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.quality.harness import ALL_CORPUS, GROUPS, TARGETS, run

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
    ("back_to_back_passes", "back-to-back"),
    ("passes_grew_prompt", "grew prompt"),
    ("calibration_error_median", "calib err med"),
    ("calibration_error_p90", "calib err p90"),
    ("calibration_error_after_pass_median", "calib err after pass med"),
    ("calibration_error_after_pass_p90", "calib err after pass p90"),
)
OVERALL_ONLY: dict[str, str] = {"recall_hit1_min": "recall_hit1"}
"""Overall keys shown in the row of the per-transcript key they summarise."""


def fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}" if value <= 1.5 else f"{value:.2f}"
    return str(value)


def _cell(doc: dict[str, Any], name: str, key: str) -> str:
    return fmt(doc["transcripts"][name].get(key))


def table(doc: dict[str, Any]) -> str:
    """Per group (real, generated): metrics as rows, transcripts and the group's overall as
    columns, then the group's targets."""
    out: list[str] = []
    for group, g in doc["groups"].items():
        names = g["transcripts"]
        out.append(f"== {group} sessions ==")
        for name, why in g["skipped"].items():
            out.append(f"skipped {name}: {why}")
        if not names:
            out.append("")
            continue
        rows = [["metric", *names, "overall"]]
        for key, label in COLUMNS:
            rows.append([label, *(_cell(doc, n, key) for n in names), fmt(g["overall"].get(key))])
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        out.append("")
        out.append("target                        wanted      overall   met")
        for t in TARGETS:
            got = g["targets"][t.key]
            met = got["met"]
            verdict = "n/a" if met is None else ("met" if met else "NOT MET")
            out.append(f"{t.key:<29} {t.text:<11} {fmt(got['value']):<9} {verdict}")
        out.append("")
    return "\n".join(out).rstrip("\n")


def markdown(doc: dict[str, Any]) -> str:
    """The same tables in Markdown, one per group (docs/QUALITY.md holds them from a run)."""
    by_key = {t.key: t for t in TARGETS}
    out: list[str] = []
    for group, g in doc["groups"].items():
        names = g["transcripts"]
        if not names:
            continue
        head = ["metric", *names, "overall", "target", "met"]
        out += [f"**{group} sessions**", ""]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        keys = [k for k, _ in COLUMNS] + list(OVERALL_ONLY)
        for key in keys:
            cells = [f"`{key}`"]
            if key in OVERALL_ONLY:
                cells += [_cell(doc, n, OVERALL_ONLY[key]) for n in names]
            else:
                cells += [_cell(doc, n, key) for n in names]
            cells.append(fmt(g["overall"].get(key)))
            target = by_key.get(key)
            if target is None:
                cells += ["", ""]
            else:
                met = g["targets"][key]["met"]
                cells += [target.text, "n/a" if met is None else ("met" if met else "**not met**")]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="two small transcripts only")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--markdown", action="store_true", help="the tables in Markdown")
    parser.add_argument(
        "--only", default="", help="comma-separated transcript names (see the table's columns)"
    )
    parser.add_argument("--group", choices=GROUPS, help="only the real or the generated sessions")
    parser.add_argument(
        "--real-dir",
        type=Path,
        help="where the real sessions are (default: $QUALITY_REAL_DIR, else "
        "bench/quality/corpus-real/)",
    )
    args = parser.parse_args(argv)
    entries = [e for e in ALL_CORPUS if e.quick] if args.quick else list(ALL_CORPUS)
    if args.only:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = wanted - {e.name for e in ALL_CORPUS}
        if unknown:
            print(
                f"error: unknown transcript {', '.join(sorted(unknown))}; known: "
                f"{', '.join(e.name for e in ALL_CORPUS)}",
                file=sys.stderr,
            )
            return 2
        entries = [e for e in ALL_CORPUS if e.name in wanted]
    if args.group:
        entries = [e for e in entries if e.group == args.group]
    if args.real_dir is not None and not args.real_dir.is_dir():
        print(f"error: --real-dir {args.real_dir} is not a directory", file=sys.stderr)
        return 2

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    doc = run(entries, log=log, real=args.real_dir)
    if args.json:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    elif args.markdown:
        print(markdown(doc))
    else:
        print(table(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
