"""index.yaml stays one readable YAML document whatever text a summary holds: written whole
or appended entry by entry, `read_index` gives back every summary exactly as written.

A summary ending in several newlines was emitted as a `|+` block scalar, after which the
YAML emitter closes the document with a `...` line; any entry after it (a whole write or an
append) made the file unreadable ("did not find expected <document start>")."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.index.format
from core.config import CompactionConfig
from core.index.catalog import append_index_entry, read_catalog, write_index
from core.index.format import ChunkEntry
from core.index.reader import read_index
from core.manager import MemoryManager
from core.store.paths import MemoryPaths

PIECES = [
    "\n",
    "\n\n",
    " ",
    "\t",
    "...",
    "---",
    "中文",
    "한국어",
    "a",
    "- x",
    ": ",
    "# h",
    "'",
    '"',
]

summaries = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
    st.sampled_from(
        ["a\n\n\n", "\n", "\n\n\n", "...\n", "---\n\n", "\n\nlead", "\t\n\n", "中\n\n"]
    ),
)


def entry(n: int, summary: str) -> ChunkEntry:
    return ChunkEntry(
        chunk_id=f"chunk_{n:04d}",
        created_at="2026-11-30T20:00:00Z",
        event_count=1,
        first_event_id=f"e{n}",
        last_event_id=f"e{n}",
        summary=summary,
    )


def read_summaries(paths: MemoryPaths) -> list[str]:
    return [e.summary for e in read_index(paths).entries]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(summaries, min_size=1, max_size=5))
def test_an_index_written_whole_reads_back_every_summary(texts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = MemoryPaths(Path(tmp) / "m")
        write_index(paths, [entry(n, t) for n, t in enumerate(texts, 1)])
        assert read_summaries(paths) == texts
        assert b"\n...\n" not in paths.index.read_bytes()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(summaries, min_size=2, max_size=5))
def test_an_index_appended_entry_by_entry_reads_back_every_summary(texts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = MemoryPaths(Path(tmp) / "m")
        write_index(paths, [entry(1, texts[0])])
        for n, text in enumerate(texts[1:], 2):
            catalog = read_catalog(paths)
            assert catalog.appendable
            append_index_entry(paths, catalog, entry(n, text))
            assert read_summaries(paths) == texts[:n]
        # The catalog answers as a fresh parse does.
        catalog = read_catalog(paths)
        assert [catalog.summary(i) for i in range(len(catalog))] == texts


class _OldDumper(yaml.SafeDumper):
    """The emitter as it was before the fix: every multi-line string a block scalar."""


def _old_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_OldDumper.add_representer(str, _old_str)

CONFIG: dict[str, Any] = {
    "count_compress_after_events": 8,
    "hot_window_events": 3,
    "keep_recent_tokens": 100_000,
}


def fill(mm: MemoryManager, start: int) -> None:
    for n in range(start, start + 3):
        mm.begin_run(f"turn {n}: check the sensor log")
        mm.append({"type": "tool_call", "name": "sh", "tool_call_id": f"k{n}"})
        mm.append({"type": "tool_result", "name": "sh", "tool_call_id": f"k{n}", "content": "ok"})
        mm.append({"type": "assistant_output", "content": f"noted {n}"})


def test_a_pass_after_an_index_closed_by_an_old_keep_chomped_summary_writes_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file an earlier version wrote ends in `...` after a `|+` summary: appending to it
    would break it, so the next pass writes the index whole and every summary survives."""
    mm = MemoryManager(tmp_path / "m", CompactionConfig(**CONFIG))
    for turn in range(2):
        fill(mm, turn * 3)
        assert mm.save().compacted
    entries = read_index(mm.paths).entries
    entries[-1].summary = "the last summary\n\n\n"
    entries[-1].cut_meta = None  # the summary is the file's last scalar
    entries[-1].extra = {}
    with monkeypatch.context() as patch:  # index.yaml and its catalog as the old writer left them
        patch.setattr(core.index.format, "_IndexDumper", _OldDumper)
        write_index(mm.paths, entries)
    assert mm.paths.index.read_bytes().endswith(b"\n...\n")
    assert not read_catalog(mm.paths).appendable
    fill(mm, 10)
    assert mm.save().compacted
    after = read_index(mm.paths).entries
    assert len(after) == len(entries) + 1
    assert after[len(entries) - 1].summary == "the last summary\n\n\n"
    assert read_catalog(mm.paths).appendable
    mm.close()
