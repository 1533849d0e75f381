"""Arbitrary bytes as events.jsonl, index.yaml and summary.md (issue 6, "Untrusted text"): the
reader, the store, the index reader, the summary parser, the planner and MemoryManager's
status / plan / recall / prompt raise nothing but the project's typed errors
(core.errors.SessionMemoryError and its subclasses). Example counts stay modest so the suite
stays fast; raise them with HYPOTHESIS_PROFILE=reliability-long."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.compaction.planner import plan_compaction
from core.compaction.summaries import parse_summary_md
from core.errors import SessionMemoryError
from core.events import KNOWN_TYPES
from core.index.reader import read_index
from core.jsonl import parse_event_lines
from core.manager import MemoryManager
from core.store.paths import MemoryPaths
from core.store.reader import EventTail
from core.store.session_store import SessionStore
from tests.helpers.reliability import small_config

# Hypothesis over arbitrary files, ~5 s: CI runs it as its own step (-m extended).
pytestmark = pytest.mark.extended

settings.register_profile(
    "reliability",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "reliability-long",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "reliability"))

json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
TYPES = [*KNOWN_TYPES, "other"]
event_like = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.text(max_size=12), st.integers(), st.none()),
        "type": st.one_of(st.sampled_from(TYPES), json_value),
        "role": st.one_of(st.sampled_from(["user", "assistant", "tool", "system"]), json_value),
        "content": json_value,
        "tool_call_id": st.one_of(st.sampled_from(["k1", "k2"]), json_value),
        "name": json_value,
        "arguments": json_value,
        "meta": json_value,
    },
)
jsonl_line = st.one_of(
    event_like.map(lambda e: json.dumps(e).encode()),
    st.binary(max_size=80),
    st.sampled_from([b"NaN", b'{"a": Infinity}', b"[]", b"{", b"\xff\xfe", b"null", b""]),
)
events_bytes = st.one_of(
    st.binary(max_size=600),
    st.lists(jsonl_line, max_size=25).map(b"\n".join),
    st.lists(jsonl_line, max_size=25).map(lambda ls: b"\n".join(ls) + b"\n"),
)
chunk_id = st.one_of(
    st.sampled_from(["chunk_0001", "pending-x", "../x", "/etc/passwd", "a/b", "x\x00y", ""]),
    st.text(max_size=20),
    json_value,
)
index_doc = st.fixed_dictionaries(
    {},
    optional={
        "version": json_value,
        "chunks": st.one_of(
            st.lists(
                st.one_of(
                    st.fixed_dictionaries(
                        {"chunk_id": chunk_id},
                        optional={
                            "summary": json_value,
                            "event_count": json_value,
                            "created_at": json_value,
                            "first_event_id": json_value,
                            "cut_meta": json_value,
                        },
                    ),
                    json_value,
                ),
                max_size=5,
            ),
            json_value,
        ),
    },
)
index_bytes = st.one_of(
    st.binary(max_size=400),
    st.text(max_size=300).map(str.encode),
    index_doc.map(lambda d: yaml.safe_dump(d, allow_unicode=True).encode()),
    st.sampled_from(
        [
            b"!!python/object/apply:os.system ['true']",
            b"a: &x [*x]",
            b"- - - - - -",
            b"? [a]\n: b",
            b"%YAML 9.9\n---\n",
            b"&a [*a, *a]",
        ]
    ),
)
summary_text = st.one_of(
    st.text(max_size=400),
    st.lists(
        st.sampled_from(
            [
                "# Session History (compressed chunks)",
                "## Rolling Summary",
                "## Recent Chunks",
                "- **chunk_0001**",
                "- ****",
                "  indented",
                "[… 3 earlier lines truncated]",
                "",
                "\x1b[31m",
                "- **a** b",
            ]
        ),
        max_size=20,
    ).map("\n".join),
)


@contextmanager
def memory_root(events: bytes, index: bytes | None, summary: bytes | None) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        chunks = root / "session" / "chunks"
        chunks.mkdir(parents=True)
        (root / "session" / "events.jsonl").write_bytes(events)
        if index is not None:
            (chunks / "index.yaml").write_bytes(index)
            (chunks / "chunk_0001.jsonl").write_bytes(events[: len(events) // 2])
        if summary is not None:
            (root / "session" / "summary.md").write_bytes(summary)
        yield root


def only_typed_errors(call: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except SessionMemoryError as exc:
        assert "\n" not in str(exc), "errors are one line"
        return None


@PROFILE
@given(data=events_bytes, final=st.booleans())
def test_parse_event_lines_never_raises(data: bytes, final: bool) -> None:
    parsed = parse_event_lines(data, final=final)
    assert parsed.consumed + len(parsed.tail) == len(data)
    assert all(isinstance(e, dict) for e in parsed.events)


@PROFILE
@given(first=events_bytes, more=events_bytes)
def test_event_tail_and_store_read_only_typed_errors(first: bytes, more: bytes) -> None:
    with memory_root(first, None, None) as root:
        path = root / "session" / "events.jsonl"
        tail = EventTail(path)
        only_typed_errors(tail.poll)
        with open(path, "ab") as fh:
            fh.write(more)
        only_typed_errors(tail.poll)
        store = SessionStore(root)
        snap = only_typed_errors(store.read_events)
        if snap is not None:
            config = small_config()
            plan_compaction(snap.events, config, tokens=snap.tokens)
            plan_compaction(snap.events, config.replace(keep_recent_tokens=1))


@PROFILE
@given(data=index_bytes)
def test_read_index_only_typed_errors(data: bytes) -> None:
    with memory_root(b"", data, None) as root:
        read = only_typed_errors(read_index, MemoryPaths(root))
        if read is not None:
            assert all(isinstance(e.chunk_id, str) for e in read.entries)


@PROFILE
@given(text=summary_text)
def test_parse_summary_md_never_raises(text: str) -> None:
    parsed = parse_summary_md(text)
    assert all("\n" not in p for p in parsed.problems)


@PROFILE
@given(events=st.lists(event_like, max_size=30))
def test_planner_on_arbitrary_event_dicts(events: list[dict[str, Any]]) -> None:
    config = small_config()
    plan = plan_compaction(events, config)
    if plan.cut_index is not None:
        assert 0 <= plan.cut_index <= len(events)


@settings(parent=PROFILE, max_examples=max(10, PROFILE.max_examples // 2))
@given(events=events_bytes, index=st.one_of(st.none(), index_bytes), summary=summary_text)
def test_memory_manager_reads_only_typed_errors(
    events: bytes, index: bytes | None, summary: str
) -> None:
    with memory_root(events, index, summary.encode("utf-8", "surrogatepass")) as root:
        mm = MemoryManager(root, small_config(), read_only=True)
        only_typed_errors(mm.status)
        only_typed_errors(mm.plan)
        only_typed_errors(mm.recall, "camera error 中文", 3)
        only_typed_errors(mm.build_prompt, "system", "task")
        only_typed_errors(mm.has_compressed_history)


@settings(parent=PROFILE, max_examples=max(10, PROFILE.max_examples // 2))
@given(events=events_bytes, index=st.one_of(st.none(), index_bytes))
def test_pass_and_repair_on_arbitrary_files_only_typed_errors(
    events: bytes, index: bytes | None
) -> None:
    with memory_root(events, index, None) as root:
        mm = MemoryManager(root, small_config())
        only_typed_errors(mm.save, force=True)
        only_typed_errors(mm.repair)
        only_typed_errors(mm.save, force=True)
        after = SessionStore(root).read_events(locked=True)
        assert not after.corrupt or index is not None
