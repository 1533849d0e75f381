"""index.yaml read by a line scanner, for the shape `core.index.format.render_index` writes.

The general YAML loader builds a 10,000-chunk index (~43 MB) in 2–3 s, and every pass that
rebuilds the catalog, every repair and recovery and the TUI's Chunks tab pays it. The index has
one writer, whose output is regular: `version: N` and `chunks:` at the top, then each entry
starting `- chunk_id: …` at column 0, one `key: scalar` per line at indent 2, multi-line text
as `|` literal blocks, `cut_meta` a flat mapping at indent 4. `scan_index` reads that shape
line by line and builds what the strict loader (core.yaml_safe) would build, entry by entry.

The scanner only ever answers when it is sure; otherwise it says "not mine" and the caller
uses the strict loader, whose answer (entries, warnings, errors) is the contract:
- one entry it does not type exactly (a quoted-with-escapes or folded scalar, a flow
  collection, a comment, an anchor, a tag, a duplicate key, a number or word YAML would
  resolve to another type) is given to the strict loader alone; this is safe because each
  entry's text holds no column-0 line, so the loader reads it as it would in the whole file;
- a file whose top level is not the writer's shape, that holds a character YAML refuses or
  treats as a line break other than `\\n` (`\\r`, NEL, U+2028/9), that is not UTF-8 or
  does not end in a newline, or an entry the strict loader refuses, is "not mine" whole.

Pure: bytes in, values out; no file access (a long scan only offers other threads the GIL
now and then, YIELD_EVERY).

    scan_index(data) -> ScannedIndex | None    # None: "not mine", use the strict loader
    scan_entries(data) -> list | None          # entries alone (an appended tail), or None
    decode_index(data) -> str | None           # the text, unless a character is left to YAML
    split_index(text) -> (version, entry texts) | None
    load_entry(text) -> Any                    # one entry; yaml.YAMLError when refused
    scan_scalar(text) -> Any                   # one plain/single-quoted scalar, or Unrecognised
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import yaml

from core.yaml_safe import strict_load


class Unrecognised(Exception):
    """The scanner met something it does not type exactly: the strict loader reads it."""


@dataclass(frozen=True)
class ScannedIndex:
    """index.yaml's `version` and its `chunks` items, as the strict loader builds them."""

    version: int
    entries: list[Any]


_REFUSED = (
    re.compile(rb"\xc2[\x80-\x9f]"),  # C1 controls (NEL is a YAML line break)
    re.compile(rb"\xe2\x80[\xa8\xa9]"),  # U+2028/U+2029: YAML line breaks
    re.compile(rb"\xef(?:\xbb\xbf|\xbf[\xbe\xbf])"),  # BOM inside the text, U+FFFE/U+FFFF
)
"""UTF-8 the scanner leaves to YAML: characters it refuses, or breaks lines at, besides
`\\n`. (C0 controls but tab and newline, CR included, are checked apart: `_C0`.)"""

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?")
_KEY2 = re.compile(r"  ([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?")
_KEY4 = re.compile(r"    ([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?")
_INT = re.compile(r"0|-?[1-9][0-9]*")
_PLAIN = re.compile("[A-Za-z_/\u00a0-\U0010ffff][A-Za-z0-9_.\\-/ \u00a0-\U0010ffff]*")
"""Plain text YAML types as a string: no indicator, no `: ` or ` #`, and no resolver (bool,
int, float, null, timestamp) matches text that starts with a letter, or holds a non-ASCII
character. (Digits first, `y`/`n`-like words: left to YAML.)"""
_BLOCK = re.compile(r"\|([1-9])?(-)?|\|(-)([1-9])")
_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
"""Plain words YAML 1.1 may resolve to a bool or null (any case): never typed here."""
_BAD_COLUMN0 = re.compile(r"\n(?=[^ \n])(?!- )")
_BLOCK_ENDS: dict[int, re.Pattern[str]] = {}
_SHORT_BLANKS: dict[int, re.Pattern[str]] = {}
_KEYS_SEEN: set[str] = set()
"""Keys already found to be plain strings to YAML (a few distinct ones in a whole index)."""


def scan_scalar(text: str) -> Any:
    """A one-line scalar as the YAML 1.1 safe loader types it; Unrecognised otherwise."""
    if text == "" or text == "null" or text == "~":
        return None
    if text[0] == "'":
        if len(text) < 2 or text[-1] != "'" or "'" in text[1:-1].replace("''", ""):
            raise Unrecognised
        return text[1:-1].replace("''", "'")
    if text == "true":
        return True
    if text == "false":
        return False
    if _INT.fullmatch(text):
        return int(text)
    if _PLAIN.fullmatch(text) and text[-1] != " " and text.lower() not in _WORDS:
        return text
    raise Unrecognised


def _pair(match: re.Match[str]) -> tuple[str, str]:
    """A `key: value` line's key and value text; Unrecognised for a key YAML would not read
    as that string (`on:` is the key True)."""
    key = match.group(1)
    if key not in _KEYS_SEEN:
        if key.lower() in _WORDS:
            raise Unrecognised
        if len(_KEYS_SEEN) < 256:
            _KEYS_SEEN.add(key)
    return key, match.group(2) or ""


def _block_end(width: int) -> re.Pattern[str]:
    """Where a literal block indented by `width` ends: the first newline followed by a line
    that is neither indented by `width` nor blank."""
    pattern = _BLOCK_ENDS.get(width)
    if pattern is None:
        pattern = _BLOCK_ENDS[width] = re.compile(rf"\n(?! {{{width}}}| *(?:\n|\Z))")
    return pattern


def _dedent(body: str, width: int) -> str:
    """The block's lines without their `width` spaces of indentation; a blank line shorter
    than that becomes empty."""
    short = _SHORT_BLANKS.get(width)
    if short is None:
        short = _SHORT_BLANKS[width] = re.compile(rf"\n {{1,{width - 1}}}\n")
    framed = "\n" + body + "\n"
    if short.search(framed) is not None:
        return re.sub(rf"(?m)^ {{0,{width}}}", "", body)
    return framed.replace("\n" + " " * width, "\n")[1:-1]


def _block(text: str, at: int, header: str) -> tuple[str, int]:
    """The literal block whose header line ends at `at` (a newline, or the end of the text),
    for a key at indent 2: (its value, where it ends: a newline or the end of the text)."""
    match = _BLOCK.fullmatch(header)
    if match is None:
        raise Unrecognised  # `|+` (keep) and anything else: the strict loader
    digit = match.group(1) or match.group(4)
    strip = bool(match.group(2) or match.group(3))
    width = 2 + (2 if digit is None else int(digit))
    end = _block_end(width).search(text, at)
    stop = len(text) if end is None else end.start()
    if stop <= at:
        return "", at
    body = _dedent(text[at + 1 : stop], width)
    if digit is None and body.lstrip("\n").startswith(" "):
        raise Unrecognised  # YAML takes the indentation from the first non-empty line
    content = body.rstrip("\n")
    if strip or not content:
        return content, stop
    return content + "\n", stop


def _entry(text: str) -> dict[str, Any]:
    """One entry in the writer's shape, from the text after its `- ` (its first key is at
    indent 2, as the keys on the lines below it); Unrecognised otherwise."""
    out: dict[str, Any] = {}
    start, size = 0, len(text)
    while start < size:
        nl = text.find("\n", start)
        if nl < 0:
            nl = size
        match = (_KEY if start == 0 else _KEY2).fullmatch(text, start, nl)
        if match is None:
            if text[start:nl].strip(" "):
                raise Unrecognised
            start = nl + 1  # a blank line
            continue
        key, value = _pair(match)
        if key in out:
            raise Unrecognised
        if value[:1] == "|":
            out[key], nl = _block(text, nl, value)
            start = nl + 1
            continue
        start = nl + 1
        if value == "" and text.startswith("    ", start):
            nested: dict[str, Any] = {}
            while text.startswith("    ", start):
                nl = text.find("\n", start)
                if nl < 0:
                    nl = size
                sub = _KEY4.fullmatch(text, start, nl)
                if sub is None:
                    raise Unrecognised
                name, sub_value = _pair(sub)
                if name in nested:
                    raise Unrecognised
                nested[name] = scan_scalar(sub_value)
                start = nl + 1
            out[key] = nested
            continue
        out[key] = scan_scalar(value)
    if not out:
        raise Unrecognised  # `- ` alone is a null item to YAML
    return out


def load_entry(text: str) -> Any:
    """One entry (the text after its `- `), as the strict loader builds it: scanned when in
    the writer's shape, else loaded alone (yaml.YAMLError when the loader refuses it, or it
    is not one item)."""
    try:
        return _entry(text)
    except Unrecognised:
        pass
    doc = strict_load("- " + text + "\n")
    if not isinstance(doc, list) or len(doc) != 1:
        raise yaml.YAMLError("entry is not one list item")
    return doc[0]


def _entry_texts(text: str, body: int) -> list[str] | None:
    """Each entry's text from `body` (a `- ` line) to the end, or None when a column-0 line
    other than `- ` follows, or the text does not end with a newline."""
    if not text.endswith("\n") or _BAD_COLUMN0.search(text, body - 1) is not None:
        return None
    return text[body + 2 : -1].split("\n- ")


def split_index(text: str) -> tuple[int, list[str]] | None:
    """`version` and each entry's text (after its `- `, up to the newline before the next
    entry), or None when the top level is not `version: N`, `chunks:`, then only `- ` lines
    at column 0. The text must end with a newline."""
    head_end = text.find("\n", 0, 64)
    if head_end < 0 or not text.startswith("chunks:\n- ", head_end + 1):
        return None
    head = _KEY.fullmatch(text, 0, head_end)
    if head is None or head.group(1) != "version" or not _INT.fullmatch(head.group(2) or ""):
        return None
    texts = _entry_texts(text, head_end + len("\nchunks:\n"))
    return None if texts is None else (int(head.group(2) or "0"), texts)


_C0 = bytes(b for b in range(32) if b not in (9, 10)) + b"\x7f"


def decode_index(data: bytes) -> str | None:
    """index.yaml's text, or None when it is not UTF-8 or holds a character the scanner
    leaves to YAML (a control character, a line break other than `\\n`, a BOM)."""
    if len(data.translate(None, _C0)) != len(data):
        return None
    if not data.isascii() and any(p.search(data) is not None for p in _REFUSED):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


YIELD_EVERY = 64
"""Entries scanned between two offers of the GIL to other threads: a 10,000-entry index is
read in a worker thread (the TUI's Chunks tab, a background pass), and a scan that held the
GIL throughout would leave the UI loop a turn only every switch interval (5 ms)."""


def _load_all(texts: list[str]) -> list[Any]:
    """Each entry loaded (`load_entry`), yielding the GIL every YIELD_EVERY entries."""
    out: list[Any] = []
    for i, entry_text in enumerate(texts, 1):
        if i % YIELD_EVERY == 0:
            time.sleep(0)
        out.append(load_entry(entry_text))
    return out


def scan_entries(data: bytes) -> list[Any] | None:
    """The items of a run of entries (index.yaml after `chunks:`, or an appended tail: `- `
    lines at column 0 and their indented text), as `strict_load(data)` builds that list;
    None ("not mine") when the text is anything else or the strict loader refuses an entry."""
    text = decode_index(data)
    if text is None or not text.startswith("- "):
        return None
    texts = _entry_texts(text, 0)
    if texts is None:
        return None
    try:
        return _load_all(texts)
    except (yaml.YAMLError, RecursionError):
        return None


def scan_index(data: bytes) -> ScannedIndex | None:
    """index.yaml's version and entries, built as the strict loader builds them, when the
    file is in the writer's shape; None ("not mine") otherwise, for the strict loader."""
    text = decode_index(data)
    split = None if text is None else split_index(text)
    if split is None:
        return None
    version, texts = split
    try:
        return ScannedIndex(version, _load_all(texts))
    except (yaml.YAMLError, RecursionError):
        return None


__all__ = [
    "ScannedIndex",
    "Unrecognised",
    "decode_index",
    "load_entry",
    "scan_entries",
    "scan_index",
    "scan_scalar",
    "split_index",
]
