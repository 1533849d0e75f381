"""Fixed memory roots for the TUI tests, built with the real core (store, manager, compaction).

Every id and timestamp on screen is fixed so snapshots do not change from run to run: events
carry their own `id`/`ts`, the session id and created_at are set through the store, and what a
compaction stamps (the synthetic event, the index's created_at) is rewritten through core's
own writers afterwards. Hostile roots add what only a broken or malicious writer produces, by
writing bytes directly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from core.compaction.state import SessionState
from core.config import CompactionConfig
from core.index.catalog import write_index
from core.index.reader import read_index
from core.manager import MemoryManager

FIXED_SESSION = "s-20260101T100000Z-f1x3d0"
FIXED_CREATED = "2026-01-01T10:00:00.000Z"

CONFIG = CompactionConfig(
    context_window=4000,
    reserve_tokens=600,
    compress_at_percent=80,
    count_compress_after_events=30,
    keep_recent_tokens=120,
    hot_window_events=8,
)

MARKUP = "[@click=app.quit]click me[/] [bold red]not bold[/] [link=https://x.test]l[/link] [/]"
ANSI = "red:\x1b[31mRED\x1b[0m title:\x1b]0;pwned\x07 bell:\x07 nul:\x00 bidi:\u202eevil"


def write_config_beside(root: Path) -> Path:
    """CONFIG as `M/../config/memory/extraction.yaml`, so the CLI run on `root` agrees."""
    path = root.resolve().parent / "config" / "memory" / "extraction.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = (
        "context_window",
        "reserve_tokens",
        "compress_at_percent",
        "count_compress_after_events",
        "keep_recent_tokens",
        "hot_window_events",
    )
    body = "".join(f"  {k}: {getattr(CONFIG, k)}\n" for k in keys)
    path.write_text("session_compaction:\n" + body, encoding="utf-8")
    return path


def ts(i: int) -> str:
    return f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}.000Z"


def ev(i: int, etype: str, content: Any, **extra: Any) -> dict[str, Any]:
    role = {
        "user_input": "user",
        "assistant_output": "assistant",
        "tool_call": "assistant",
        "tool_result": "tool",
        "system_event": "system",
        "screen_context": "system",
    }.get(etype, "system")
    return {
        "id": f"ev_{i:04d}",
        "type": etype,
        "role": role,
        "content": content,
        "ts": ts(i),
        **extra,
    }


def conversation(start: int = 0) -> list[dict[str, Any]]:
    """One multi-turn conversation with tool pairs, ambient context, CJK and a screenshot."""
    i = start
    out = [
        ev(i + 0, "user_input", "Book a table for two at 7pm near the office."),
        ev(i + 1, "assistant_output", "Looking up restaurants near the office now."),
        ev(
            i + 2,
            "tool_call",
            None,
            name="search",
            tool_call_id=f"call_{i + 2}",
            arguments={"q": "restaurants near office", "limit": 3},
        ),
        ev(
            i + 3,
            "tool_result",
            "Trattoria Roma; Sushi Ko; Le Petit Bistro",
            name="search",
            tool_call_id=f"call_{i + 2}",
        ),
        ev(i + 4, "screen_context", "screen: maps app showing three pins"),
        ev(i + 5, "user_input", "Make it Italian. 请确认预订时间。"),
        ev(i + 6, "assistant_output", "Checking Trattoria Roma for 19:00."),
        ev(i + 7, "tool_call", None, name="screenshot", tool_call_id=f"call_{i + 7}", arguments={}),
        ev(
            i + 8,
            "tool_result",
            {"data": "iVBORw0KGgo" * 40, "width": 1080, "height": 2400, "format": "png"},
            name="screenshot",
            tool_call_id=f"call_{i + 7}",
        ),
        ev(i + 9, "system_event", "reminder: confirm bookings with the user"),
        ev(i + 10, "assistant_output", "Booked Trattoria Roma at 19:00 for two. 已确认。"),
        ev(i + 11, "user_input", "Thanks! Remind me tomorrow at 9."),
        ev(i + 12, "assistant_output", "I will remind you tomorrow at 09:00."),
    ]
    return out


def _fix_session(manager: MemoryManager, session_id: str = FIXED_SESSION) -> None:
    def apply(state: SessionState) -> None:
        state.session_id = session_id
        state.created_at = FIXED_CREATED
        state.run_started_at = None
        state.last_event_at = None

    manager.store.update_state(apply)


def _fix_compaction_stamps(manager: MemoryManager) -> None:
    """Fixed created_at in the index, fixed id/ts for the synthetic event (real core writers)."""
    entries = read_index(manager.paths).entries
    for n, entry in enumerate(entries):
        entry.created_at = f"2026-01-01T11:00:{n:02d}Z"
    write_index(manager.paths, entries)
    with manager.store.lock():
        events = manager.store.read_events(locked=True).events
        for n, event in enumerate(events):
            if not re.fullmatch(r"ev_\d{4}", str(event.get("id", ""))):
                event["id"] = f"ev_syn{n:03d}"
                event["ts"] = ts(500 + n)
        manager.store.replace_events(events)
    from core.maintenance.recovery import write_summaries

    with manager.store.lock():
        write_summaries(manager.store, manager.config, read_index(manager.paths).entries)


def build_basic(root: Path, *, compact: bool = True, prompt_tokens: int = 3300) -> Path:
    """A session with one compaction behind it (a split turn when the planner cuts inside a
    turn), more turns after it, and a recorded prompt size that makes the next pass compact."""
    write_config_beside(root)
    manager = MemoryManager(root, CONFIG)
    manager.append_many(conversation(0))
    if compact:
        manager.save(force=True)
        _fix_compaction_stamps(manager)
    manager.append_many(conversation(100))
    manager.record_prompt_tokens(prompt_tokens, model="demo-model")
    _fix_session(manager)
    return root


def long_turn(start: int = 0) -> list[dict[str, Any]]:
    """A short first turn, then one long tool-heavy turn: a cut by tokens lands inside it."""
    i = start
    out = [
        ev(i, "user_input", "Tidy my phone's storage and tell me what you removed."),
        ev(i + 1, "assistant_output", "I will look at storage first."),
        ev(i + 2, "user_input", "Also clear the camera cache. 相机缓存也清一下。"),
    ]
    n = i + 3
    for k, path in enumerate(("/sdcard/DCIM", "/sdcard/Download", "/sdcard/Android", "/data")):
        call = f"call_{n}"
        out.append(ev(n, "tool_call", None, name="du", tool_call_id=call, arguments={"p": path}))
        out.append(
            ev(
                n + 1,
                "tool_result",
                f"{path}: {k + 2}.{k}G in {120 * (k + 1)} files",
                name="du",
                tool_call_id=call,
            )
        )
        out.append(
            ev(n + 2, "assistant_output", f"{path} holds {k + 2}.{k} GB; checking the next.")
        )
        n += 3
    out.append(ev(n, "assistant_output", "Camera cache cleared: 1.4 GB freed. 已清理。"))
    return out


def build_split_first(root: Path) -> Path:
    """A session whose first compaction is a split turn: the pinned root, then the synthetic
    split-turn event, then the rest of the long turn."""
    write_config_beside(root)
    manager = MemoryManager(root, CONFIG)
    manager.append_many(long_turn(0))
    result = manager.save(force=True)
    assert result.compacted and result.is_split_turn, result.reason
    _fix_compaction_stamps(manager)
    manager.record_prompt_tokens(900, model="demo-model")
    _fix_session(manager)
    return root


def build_with_archive(root: Path) -> Path:
    """build_basic, rotated into session_archive/, then a fresh session with a few events."""
    build_basic(root)
    manager = MemoryManager(root, CONFIG)
    manager.rotate()
    manager.append_many(conversation(200)[:5])
    _fix_session(manager, "s-20260102T100000Z-n3w000")
    return root


def build_big(root: Path, n: int) -> Path:
    """n events written in one append (the real store), for load-time measurements."""
    manager = MemoryManager(root, CONFIG)
    block = conversation(0)
    events = []
    for i in range(n):
        e = dict(block[i % len(block)])
        e["id"] = f"ev_{i:06d}"
        e["ts"] = ts(i % 3600)
        if "tool_call_id" in e:
            e["tool_call_id"] = f"{e['tool_call_id']}_{i // len(block)}"
        events.append(e)
    manager.append_many(events)
    _fix_session(manager)
    return root


HOSTILE_CHUNK_IDS = ("../../etc/passwd", "[@click=app.quit]boom[/]", "\x1b[31mred")


def build_hostile(root: Path) -> Path:
    """Markup, escapes, a 5 MB line, invalid UTF-8, a truncated last line, a hostile chunk id
    in the index and an empty summary.md."""
    manager = MemoryManager(root, CONFIG)
    manager.append_many(
        [
            ev(0, "user_input", MARKUP),
            ev(1, "assistant_output", ANSI),
            ev(2, MARKUP, "type field is markup", role="[b]role[/b]"),
            ev(3, "assistant_output", "x" * (5 * 1024 * 1024)),
            {
                "id": "[@click=app.quit]id[/]",
                "type": "system_event",
                "role": "system",
                "content": {"k": MARKUP},
                "ts": "[red]not a time[/red]",
            },
        ]
    )
    _fix_session(manager)
    events = manager.paths.events
    with events.open("ab") as fh:
        fh.write(b'{"id": "bad-utf8", "type": "user_input", "content": "\xff\xfe\xc3("}\n')
        fh.write(b"this is not json [@click=app.quit]q[/]\n")
        fh.write(b'{"id": "ev_trunc", "type": "user_input", "content": "half a li')
    chunks = manager.paths.chunks_dir
    chunks.mkdir(parents=True, exist_ok=True)
    manager.paths.index.write_text(
        "version: 1\nchunks:\n"
        + "".join(
            f"  - chunk_id: {json.dumps(cid)}\n"
            f'    created_at: "2026-01-01T11:00:00Z"\n'
            f"    event_count: 1\n"
            f"    summary: {json.dumps(MARKUP + ' ' + ANSI)}\n"
            for cid in HOSTILE_CHUNK_IDS
        ),
        encoding="utf-8",
    )
    manager.paths.summary.write_text("", encoding="utf-8")
    return root
