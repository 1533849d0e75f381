"""docs/PERFORMANCE.md from a full run's JSON document."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from bench.targets import TARGETS

COMMAND = "python -m bench            # full run, writes this file (--quick: < 2 min, no file)"


def _fmt(value: float | None) -> str:
    from bench.__main__ import fmt

    return fmt(value)


def write_report(doc: dict[str, Any], path: Path) -> Path:
    m = doc["machine"]
    peer = doc["details"].get("peer", {})
    lines: list[str] = [
        "# Performance",
        "",
        "Written by `python -m bench` (the suite in `bench/`, issue 7) on "
        f"{dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}. Every ratio is measured",
        "against its baseline in the same run, so it holds on a noisy shared machine; absolute",
        "figures move with the machine.",
        "",
        "Reproduce (from a checkout, with the `bench` extra for the peer):",
        "",
        "```",
        "pip install -e '.[bench]'",
        COMMAND,
        "python -m bench --quick --json",
        "```",
        "",
        "## Machine",
        "",
        f"- CPUs (nproc): {m['nproc']}; CPU: {m['cpu']}",
        f"- Python {m['python']} ({m['implementation']}); {m['platform']}",
        f"- File system of /tmp (where the data lives): {m['filesystem_tmp']}",
        f"- Peer: {peer.get('name', 'langmem')} {peer.get('version') or '(not installed)'}"
        + (f", langchain-core {peer['langchain_core']}" if peer.get("langchain_core") else ""),
        "",
        "## Figures",
        "",
        "| key | value | target | | what |",
        "|---|---:|---:|---|---|",
    ]
    for t in TARGETS:
        value = doc["results"].get(t.key)
        met = doc["targets_met"].get(t.key)
        mark = {True: "met", False: "**not met**", None: "—"}[met]
        lines.append(f"| `{t.key}` | {_fmt(value)} | {t.target_text} | {mark} | {t.what} |")
    lines.append("")
    if doc["notes"]:
        lines += ["Notes:", ""]
        lines += [f"- `{k}`: {v}" for k, v in doc["notes"].items()]
        lines.append("")
    from bench.report_text import ANALYSIS, METHOD

    lines += METHOD
    unmet = [t.key for t in TARGETS if doc["targets_met"].get(t.key) is False]
    lines += ["## Targets not met, and why", ""]
    if not unmet:
        lines += ["None in this run.", ""]
    for key in unmet:
        lines += [f"### `{key}`", "", ANALYSIS.get(key, "(no analysis written)"), ""]
    lines += [
        "## Details of this run",
        "",
        "```json",
    ]
    import json

    lines += json.dumps(doc["details"], indent=1, ensure_ascii=False).splitlines()
    lines += ["```", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
