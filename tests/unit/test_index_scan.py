"""The index scanner (core.index.scan) reads index.yaml exactly as the strict YAML loader
does, or says it cannot: every pass, repair and recovery reads the index through it, so any
difference would change what they do. Arbitrary entries the writer renders, the same files
damaged, and the hand-written cases the TUI's fast reader was checked against."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.index.format as format_module
import core.index.reader as reader_module
from core.config import CompactionConfig
from core.errors import IndexCorruptError, SessionMemoryError
from core.index.catalog import write_index
from core.index.format import INDEX_VERSION, ChunkEntry, IndexRead, render_index
from core.index.reader import read_index
from core.index.scan import load_entry, scan_entries, scan_index, split_index
from core.manager import MemoryManager
from core.store.paths import CHUNK_ID_RE
from core.yaml_safe import strict_load

WHERE = Path("/m/session/chunks/index.yaml")

# --- what both routes give, compared strictly --------------------------------------------


def _strict_route(data: bytes) -> object:
    """The strict loader's reading of the file: the IndexRead, or the error's type and text."""
    try:
        return repr(reader_module._parse_index_strict(WHERE, data))
    except SessionMemoryError as exc:
        return (type(exc).__name__, str(exc))


def _read_route(data: bytes) -> object:
    """read_index's reading (scanned when the scanner answers, strict otherwise)."""
    try:
        return repr(reader_module._parse_index(WHERE, data))
    except SessionMemoryError as exc:
        return (type(exc).__name__, str(exc))


def _assert_tail_scanned_as_strict(data: bytes) -> None:
    """The entries after `chunks:` alone (as the catalog reads an appended tail): when the
    scanner answers, its items are the strict loader's."""
    head = data.find(b"\nchunks:\n")
    if head < 0:
        return
    tail = data[head + len(b"\nchunks:\n") :]
    items = scan_entries(tail)
    if items is not None:
        assert repr(items) == repr(strict_load(tail))


def _assert_scanned_as_strict(data: bytes) -> bool:
    """When the scanner answers, its items are the strict loader's, value, type and key order
    alike (repr: 1 == True and 1 == 1.0 in Python, not in a repr). True when it answered."""
    scanned = scan_index(data)
    if scanned is None:
        return False
    doc = strict_load(data)
    assert isinstance(doc, dict)
    assert scanned.version == doc["version"]
    assert len(scanned.entries) == len(doc["chunks"])
    for got, want in zip(scanned.entries, doc["chunks"], strict=True):
        assert repr(got) == repr(want)
    return True


# --- arbitrary entries --------------------------------------------------------------------

TRICKY = [
    "\n",
    "\n\n",
    "\t",
    "\r",
    "\r\n",
    " ",
    "  ",
    "- ",
    "-",
    "---",
    "...",
    "#",
    " # ",
    ":",
    ": ",
    "'",
    "''",
    '"',
    "|",
    "|-",
    ">",
    "&a",
    "*a",
    "!tag",
    "? ",
    "[",
    "{",
    "%YAML",
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "null",
    "Null",
    "~",
    "y",
    "0",
    "-7",
    "010",
    "0x1F",
    "0o17",
    "1_000",
    "1e5",
    "1.5",
    ".inf",
    "-.INF",
    ".nan",
    "2026-11-30",
    "2026-11-30T10:00:00Z",
    "12:30",
    "=",
    "<<",
    "chunk_id: x",
    "  summary: |",
    "- chunk_id: chunk_9999",
    "\u4e2d\u6587\u6458\u8981",
    "\u65e5\u672c\u8a9e",
    "\U0001f600",
    "\u00e9",
    "\u00a0",
    "\u00b7",
    "\x85",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\x00",
    "\x07",
    "\x1b[31m",
    "\x7f",
    "\ufffd",
]

PRINTABLE = [*"abyZ09_-./:#'\"|>&*!?[]{}%@`,\\ \n\t", "\u4e2d", "\u00e9", "\u00b7"]
texts = st.one_of(
    st.text(max_size=30),
    st.lists(
        st.one_of(st.sampled_from(TRICKY), st.text(max_size=6)),
        max_size=12,
    ).map("".join),
    st.text(alphabet=st.sampled_from(PRINTABLE), max_size=40),
)
printable = st.one_of(
    st.text(alphabet=st.sampled_from(PRINTABLE), max_size=40),
    st.sampled_from([t for t in TRICKY if t.isprintable() and t != "\ufeff"]),
)
"""Any unicode text (control characters, CJK, emoji, line breaks of every kind), text built
from pieces YAML gives a meaning to, and printable text the emitter writes plain, quoted or
as a block: the scanner's own ground."""

chunk_ids = st.from_regex(CHUNK_ID_RE, fullmatch=True).filter(lambda s: len(s) <= 128)


def _values(text: st.SearchStrategy[str], simple: bool) -> dict[str, st.SearchStrategy[Any]]:
    """Scalars, keys, cut_meta and extra fields built on `text` (`simple`: no floats, no
    nested collections, what the writer itself puts there)."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**20), max_value=10**20),
        *([] if simple else [st.floats(allow_nan=False)]),
        text,
    )
    keys = st.one_of(
        st.sampled_from(["summary_backend", "path", "trigger", "note", "on", "yes", "null"]),
        text,
    )
    nested = (
        scalars
        if simple
        else st.one_of(
            scalars, st.lists(scalars, max_size=3), st.dictionaries(keys, scalars, max_size=2)
        )
    )
    cut_meta = st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {},
            optional={
                "first_kept_event_id": st.one_of(st.none(), text),
                "tokens_before": st.integers(min_value=0, max_value=10**9),
                "kept_tokens_estimate": st.integers(min_value=0, max_value=10**9),
                "is_split_turn": st.booleans(),
                "turn_start_event_id": st.one_of(st.none(), text),
            },
        ),
        st.dictionaries(keys, scalars, max_size=4),
    )
    extra = st.dictionaries(
        keys.filter(lambda k: k not in format_module._ENTRY_KEYS),
        nested,
        max_size=3,
    )
    return {"cut_meta": cut_meta, "extra": extra}


@st.composite
def entries(draw: st.DrawFn) -> list[ChunkEntry]:
    """1–4 entries; in half the draws every text is printable (so that most entries are
    scanned, not loaded by YAML), in the other half any text."""
    ids = draw(st.lists(chunk_ids, min_size=1, max_size=4))
    simple = draw(st.booleans())
    text = printable if simple else texts
    values = _values(text, simple)
    return [
        ChunkEntry(
            chunk_id=cid,
            created_at=draw(st.one_of(st.just("2026-11-30T10:00:00Z"), text)),
            event_count=draw(st.integers(min_value=0, max_value=10**6)),
            first_event_id=draw(st.one_of(st.none(), text)),
            last_event_id=draw(st.one_of(st.none(), text)),
            summary=draw(text),
            cut_meta=draw(values["cut_meta"]),
            extra=draw(values["extra"]),
        )
        for cid in ids
    ]


# The default run draws a few dozen examples per property (they cost ~10 ms each); CI's
# extended step draws the thousands that found the scanner's disagreements while it was built.
FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rendered_scan_as_strict(given_entries: list[ChunkEntry]) -> None:
    data = render_index(given_entries).encode("utf-8")
    _assert_scanned_as_strict(data)
    assert _read_route(data) == _strict_route(data)


test_rendered_entries_scan_as_the_strict_loader_reads_them = FEW(
    given(entries())(rendered_scan_as_strict)
)
test_rendered_entries_scan_as_the_strict_loader_reads_them_many = pytest.mark.extended(
    MANY(given(entries())(rendered_scan_as_strict))
)


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A rendered index with lines inserted, dropped, replaced or cut short."""
    lines = render_index(draw(entries())).split("\n")[:-1]  # the text ends with a newline
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        at = draw(st.integers(min_value=0, max_value=len(lines)))
        what = draw(st.sampled_from(["insert", "drop", "replace", "cut", "indent"]))
        indent = draw(st.sampled_from(["", "  ", "  ", "    ", "    ", "      "]))
        piece = indent + draw(st.one_of(st.sampled_from(TRICKY), texts, printable, printable))
        if what == "insert":
            lines.insert(at, piece)
        elif at < len(lines):
            if what == "drop":
                del lines[at]
            elif what == "replace":
                lines[at] = piece
            elif what == "cut":
                lines[at] = lines[at][: draw(st.integers(min_value=0, max_value=len(lines[at])))]
            else:
                lines[at] = draw(st.sampled_from([" ", "  ", "   ", "\t"])) + lines[at]
    text = "\n".join(lines)
    if draw(st.integers(min_value=0, max_value=5)):
        text += "\n"
    return text.encode("utf-8", "surrogatepass")


def damaged_read_as_strict(data: bytes) -> None:
    """Whatever the scanner makes of a damaged file, read_index's answer (entries, warnings,
    or the IndexCorruptError and its message) is the strict loader's; so is the catalog's
    reading of the entries alone."""
    assert _read_route(data) == _strict_route(data)
    _assert_tail_scanned_as_strict(data)


test_damaged_files_read_as_the_strict_loader_reads_them = FEW(
    given(damaged())(damaged_read_as_strict)
)
test_damaged_files_read_as_the_strict_loader_reads_them_many = pytest.mark.extended(
    MANY(given(damaged())(damaged_read_as_strict))
)


# --- the writer's ordinary output is scanned, not handed to YAML ------------------------------


def _ordinary(i: int) -> ChunkEntry:
    """An entry as a pass writes it (core.compaction.commit_plan): extractive summary, cut_meta,
    extras."""
    return ChunkEntry(
        chunk_id=f"chunk_{i:04d}",
        created_at="2026-11-30T10:00:00Z",
        event_count=100 + i,
        first_event_id=f"live-{i}-0-u",
        last_event_id=f"evt_{i:06d}",
        summary=(
            "Goal:\n- \u5e2e\u6211\u8bfb\u4e00\u4e0b\u4e0b\u8f7d\u76ee\u5f55\n"
            f"Progress:\n- Request: deploy #{i}: staging 'now'\n  ran: pytest -q -x\n"
            "  outcome: 1,204 rows \u00b7 3.2 s\n"
        ),
        cut_meta={
            "first_kept_event_id": f"kept-{i}",
            "tokens_before": 5000 + i,
            "kept_tokens_estimate": 1200,
            **({"is_split_turn": True, "turn_start_event_id": f"turn-{i}"} if i % 2 else {}),
        },
        extra={"summary_backend": "extractive", "path": "count", "trigger": None},
    )


def test_the_writers_own_entries_are_scanned_without_yaml() -> None:
    """The speed of read_index at 10,000 chunks rests on this: no entry a pass writes falls
    back to the YAML loader. (Text the emitter double-quotes, such as a summary holding an
    emoji, does: that entry is loaded alone.)"""
    text = render_index([_ordinary(i) for i in range(1, 9)])
    split = split_index(text)
    assert split is not None
    version, texts = split
    assert version == INDEX_VERSION and len(texts) == 8
    from core.index.scan import Unrecognised, _entry

    for t in texts:
        try:
            _entry(t)
        except Unrecognised:  # pragma: no cover - the failure being tested for
            pytest.fail(f"an ordinary entry was left to YAML: {t[:80]!r}")
    assert _assert_scanned_as_strict(text.encode("utf-8"))
    emoji = render_index([replace(_ordinary(1), summary="done \U0001f600\nnext")])
    assert '"done' in emoji  # double-quoted by the emitter: loaded alone, still equal
    assert _assert_scanned_as_strict(emoji.encode("utf-8"))


def test_an_entry_the_scanner_does_not_type_is_loaded_alone_by_yaml() -> None:
    """A flow collection, a quoted scalar with escapes, a comment: that entry goes to the
    strict loader, the others are still scanned, and the result is the strict reading."""
    text = (
        "version: 1\nchunks:\n"
        "- chunk_id: chunk_0001\n  summary: plain\n"
        '- chunk_id: chunk_0002\n  summary: "tab\\there"\n  tags: [a, 1]\n  # a comment\n'
        "- chunk_id: chunk_0003\n  event_count: 0x1F\n  created_at: 2026-11-30\n"
    )
    assert load_entry("chunk_id: x\n  tags: [a, 1]") == {"chunk_id": "x", "tags": ["a", 1]}
    assert _assert_scanned_as_strict(text.encode("utf-8"))
    read = reader_module._parse_index(WHERE, text.encode("utf-8"))
    assert [e.summary for e in read.entries] == ["plain", "tab\there", ""]
    assert read.entries[2].event_count == 31
    assert read.entries[2].created_at == "2026-11-30"


@pytest.mark.parametrize(
    "text",
    [
        "version: 1\r\nchunks:\r\n- chunk_id: a\r\n",  # CR line ends
        "version: 1\nchunks:\n- chunk_id: a\n  summary: |-\n    x\u2028y\n",  # U+2028
        "version: 1\nchunks:\n- chunk_id: a\n  summary: x\x85y\n",  # NEL
        "version: 1\nchunks:\n- chunk_id: a\n  summary: |-\n    bell\x07\n",  # control char
        "\ufeffversion: 1\nchunks:\n- chunk_id: a\n",  # BOM
        "version: 1\nchunks:\n- chunk_id: a\n  summary: |-\n    no final newline",
        "version: 1\nchunks:\n- chunk_id: a\n...\n",  # document end
        "version: 1\nchunks:\n- chunk_id: a\n---\n- chunk_id: b\n",  # a second document
        "version: 1\nchunks:\n# a comment\n- chunk_id: a\n",
        "version: 1\nchunks:\n- chunk_id: a\nextra: 1\n",  # a third top-level key
        "version: 1\nchunks:\n\t- chunk_id: a\n",
        "version: '1'\nchunks:\n- chunk_id: a\n",
        "chunks:\n- chunk_id: a\nversion: 1\n",
        "version: 1\nchunks: []\n",
        "version: 1\nchunks:\n",
        "",
        "- chunk_id: a\n",
    ],
)
def test_files_not_in_the_writers_shape_are_left_to_the_strict_loader(text: str) -> None:
    data = text.encode("utf-8")
    assert scan_index(data) is None
    assert _read_route(data) == _strict_route(data)


def test_not_utf8_is_left_to_the_strict_loader() -> None:
    data = b"version: 1\nchunks:\n- chunk_id: a\n  summary: \xff\xfe\n"
    assert scan_index(data) is None
    assert _read_route(data) == _strict_route(data)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("- \n", "a null item"),
        ("- chunk_id: a\n  on: 1\n", "the key True"),
        ("- chunk_id: a\n  summary: x\n  summary: y\n", "a duplicate key"),
        ("- chunk_id: a\n  summary: |+\n    kept\n\n", "keep chomping"),
        ("- chunk_id: a\n  summary: |\n      deeper\n    less\n", "auto-detected indent"),
        ("- chunk_id: a\n  summary: |\n\n      x\n", "indent after a blank line"),
        ("- chunk_id: a\n  summary: a\n    b\n", "a folded plain scalar"),
        ("- chunk_id: a\n  event_count: 1_000\n", "an int with underscores"),
        ("- chunk_id: a\n  cut_meta:\n    a: 1\n\n    b: 2\n", "a gap in a mapping"),
        ("- chunk_id: a\n  cut_meta:\n    a:\n      b: 1\n", "a deeper mapping"),
        ("- chunk_id: &x a\n", "an anchor"),
        ("- - chunk_id: a\n", "a nested list"),
        ("- chunk_id: a\n  summary: 'it''s'\n", "a quoted quote"),
    ],
)
def test_entries_the_scanner_is_unsure_of_read_as_the_strict_loader_reads_them(
    entry: str, why: str
) -> None:
    data = f"version: 1\nchunks:\n{entry}- chunk_id: z\n".encode()
    _assert_scanned_as_strict(data)
    assert _read_route(data) == _strict_route(data), why


# --- the hand-written cases (moved from tests/tui/test_tui_scale.py) ------------------------------


def _fill(manager: MemoryManager, n: int) -> list[ChunkEntry]:
    """An index of `n` ordinary entries (read_index needs no chunk files)."""
    written = [_ordinary(i) for i in range(1, n + 1)]
    write_index(manager.paths, written)
    return written


def _same_as_strict(manager: MemoryManager) -> IndexRead:
    """read_index's answer, checked against the strict loader's on the same bytes."""
    reader_module._CACHE.clear()
    data = manager.paths.index.read_bytes()
    read = read_index(manager.paths)
    strict = reader_module._parse_index_strict(manager.paths.index, data)
    assert repr(read) == repr(strict)
    return read


ODD_SUMMARIES = [
    "",
    "one line",
    "  starts with spaces\nand more",
    "ends with one newline\n",
    "no trailing newline\nsecond",
    "\nleading newline",
    "key: value\n- list: item\n  # not a comment",
    "'quoted' and \"double\" and: colon",
    "unicode \u00e9\u4e2d\u6587 \u2702",
    "Turn Context (split turn):\nprefix text",
    "tab\there\nand trailing spaces   \n",
    "yes",
    "123",
    "1.5",
    "null",
    "#hash start",
    "- dash start",
    "&anchor-like *star !bang",
    "a " * 80,
    "ends with newlines\n\n\n",
]


def test_odd_values_read_as_the_strict_loader_reads_them(tmp_path: Path) -> None:
    """Every entry the writer can write reads back as the strict loader reads it, whichever
    way (scanned, or that entry alone through YAML) the scanner takes."""
    manager = MemoryManager(tmp_path / "m", CompactionConfig())
    manager.store.ensure_session()
    written = []
    for i, summary in enumerate(ODD_SUMMARIES, 1):
        written.append(
            ChunkEntry(
                chunk_id=f"chunk_{i:04d}",
                created_at="" if i % 3 else "2026-01-01T10:00:00.000Z",
                event_count=i,
                first_event_id=None if i % 4 == 0 else ("0123" if i % 5 == 0 else f"ev_{i}"),
                last_event_id=["true", "1e5", "x y", "010", "-7", "~"][i % 6],
                summary=summary,
                cut_meta=None if i % 2 else {"tokens_before": i, "odd key": "v: w", "n": None},
                extra={"summary_backend": "openai", "nested": {"a": [1, 2]}} if i % 3 == 0 else {},
            )
        )
    write_index(manager.paths, written)
    read = _same_as_strict(manager)
    assert [e.summary for e in read.entries] == ODD_SUMMARIES
    assert scan_index(manager.paths.index.read_bytes()) is not None


def test_damaged_index_warnings_and_errors_are_the_strict_loaders(tmp_path: Path) -> None:
    manager = MemoryManager(tmp_path / "m", CompactionConfig())
    manager.store.ensure_session()
    _fill(manager, 3)
    index = manager.paths.index
    text = index.read_text(encoding="utf-8")
    # chunk_0001 again, then a bad id: skipped, with the strict reading's two warnings.
    first = text[text.index("- chunk_id: chunk_0001") : text.index("- chunk_id: chunk_0002")]
    index.write_text(f"{text}{first}- chunk_id: _bad\n  summary: x\n", encoding="utf-8")
    read = _same_as_strict(manager)
    assert len(read.entries) == 3 and len(read.warnings) == 2
    assert scan_index(index.read_bytes()) is not None  # scanned, not left to YAML
    # Not YAML at all: the strict loader's IndexCorruptError, line number and all.
    index.write_text(text + "- chunk_id: [unclosed\n", encoding="utf-8")
    reader_module._CACHE.clear()
    with pytest.raises(IndexCorruptError) as raised:
        read_index(manager.paths)
    with pytest.raises(IndexCorruptError) as strict:
        reader_module._parse_index_strict(index, index.read_bytes())
    assert str(strict.value) == str(raised.value)
    # The loader marks where it gave up: the end of the file, after the unclosed line.
    assert f"at line {text.count(chr(10)) + 2} " in str(raised.value)


def test_a_version_other_than_this_programs_warns_as_the_strict_loader_does(
    tmp_path: Path,
) -> None:
    manager = MemoryManager(tmp_path / "m", CompactionConfig())
    manager.store.ensure_session()
    _fill(manager, 2)
    index = manager.paths.index
    index.write_bytes(index.read_bytes().replace(b"version: 1\n", b"version: 7\n", 1))
    read = _same_as_strict(manager)
    assert len(read.entries) == 2
    assert read.warnings == [f"{index}: version 7, this program writes {INDEX_VERSION}"]
