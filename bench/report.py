"""docs/PERFORMANCE.md from a full run's JSON document."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from bench.targets import TARGETS

COMMAND = "python -m bench            # full run, writes this file (--quick: < 2 min, no file)"


def fmt(value: float | None) -> str:
    """A figure with as many digits as tell (the console table and this report agree)."""
    if value is None:
        return "null"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 0.1:
        return f"{value:.2f}"
    return f"{value:.4f}"


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
        lines.append(f"| `{t.key}` | {fmt(value)} | {t.target_text} | {mark} | {t.what} |")
    lines.append("")
    if doc["notes"]:
        lines += ["Notes:", ""]
        lines += [f"- `{k}`: {v}" for k, v in doc["notes"].items()]
        lines.append("")
    from bench.report_text import ANALYSIS, METHOD

    lines += METHOD
    lines += scale_section(doc["details"])
    lines += profile_section(doc["details"])
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


def _ms(value: Any) -> str:
    return "—" if value is None else f"{value:,.0f}"


def scale_section(details: dict[str, Any]) -> list[str]:
    """The growth curves of the scale group: pass and cold commands against chunk count."""
    scale = details.get("scale")
    if not scale:
        return []
    from bench.report_text import SCALE_TEXT

    lines = ["## Long-lived roots: growth with history (issue 14)", "", *SCALE_TEXT]
    lines += [
        "| chunks | archives | pass (ms) | first pass (ms) | status (ms) | plan (ms) "
        "| prompt (ms) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in scale["curve"]:
        lines.append(
            f"| {row['chunks']:,} | {row['archives']} | {_ms(row['pass_ms'])} "
            f"| {_ms(row['pass_first_ms'])} | {_ms(row['status_cold_ms'])} "
            f"| {_ms(row['plan_cold_ms'])} | {_ms(row['prompt_cold_ms'])} |"
        )
    base = scale["baseline"]
    disk = scale["disk"]
    lines += [
        "",
        f"Same run: `python -c pass` takes {_ms(scale.get('python_c_pass_ms'))} ms and a process "
        f"that only imports `inspector.cli` {_ms(scale.get('import_inspector_cli_ms'))} ms (the "
        "floor under every cold command); `rotate` takes "
        f"{_ms(base['rotate_ms'])} ms at {base['chunks']} chunks. At {scale['chunks']:,} chunks "
        f"index.yaml is {disk['index_bytes'] / 1e6:.1f} MB ({disk['index_bytes_per_chunk']:,.0f} "
        f"bytes per chunk) and summary.md {disk['summary_md_tokens']:,} estimated tokens "
        f"against its bound of {disk['summary_md_bound']:,}.",
        "",
    ]
    return lines


def profile_section(details: dict[str, Any]) -> list[str]:
    """cProfile of one project turn at 10k messages (the peer group's details)."""
    profile = (details.get("peer") or {}).get("profile_10k")
    if not profile:
        return []
    from bench.report_text import PROFILE_TEXT

    lines = [
        f"## Where a turn's time goes ({profile['messages']:,} messages)",
        "",
        *PROFILE_TEXT,
        f"Profiled: {profile['turns']} turns, {profile['turn_ms_profiled']} ms per turn under "
        f"the profiler, {profile['passes']} passes.",
        "",
    ]
    for title, key in (
        ("Calling thread", "caller_thread"),
        ("Maintenance thread (the passes)", "maintenance_threads"),
    ):
        lines += [
            f"{title}, ms per turn:",
            "",
            "| function | cumulative | own | calls |",
            "|---|---:|---:|---:|",
        ]
        lines += [
            f"| `{r['function']}` | {r['cum_ms']:.3f} | {r['own_ms']:.3f} | {r['calls']:g} |"
            for r in profile[key]
        ]
        lines.append("")
    return lines
