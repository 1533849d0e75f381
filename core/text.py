"""Text helpers every part of core shares: the CJK ranges, an event field as text, untrusted
text made safe to copy, and grapheme-safe shortening.

The bottom of core's layering (it imports nothing from core), and cheap to import: no
pattern over the CJK ranges is compiled here (one reaching past the BMP costs ~2 ms), so a
cold recall or a CLI command that never needs one never pays for it.
"""

from __future__ import annotations

import json
import re
import unicodedata

TYPE_CHECKING = False  # a cold recall imports this module: no typing at run time
if TYPE_CHECKING:
    from typing import Any

CJK_LETTERS = (
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0002fa1f"  # CJK Extensions B–F, Compatibility Supplement
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u31f0-\u31ff"  # Katakana Phonetic Extensions
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3130-\u318f"  # Hangul Compatibility Jamo
    "\uac00-\ud7af"  # Hangul Syllables
)
"""Ideographs, kana and hangul, as a regex character-class body: the characters a CJK word
is made of (recall's bigrams, a summarizer's focus keywords)."""

CJK_RANGES = (
    CJK_LETTERS
    + "\u3000-\u303f"  # CJK Symbols and Punctuation
    + "\uff00-\uffef"  # Half-width and Full-width Forms
)
"""CJK_LETTERS plus CJK punctuation and full-width forms: what the token estimate counts as
one token each (contract §3)."""

ELLIPSIS = "…"

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""Built once: `json.dumps` with options builds a new encoder on every call."""


def compact_json(value: Any) -> str:
    """The compact JSON form the estimate and the stores use (UTF-8 kept, no spaces)."""
    return _COMPACT.encode(value)


def content_text(value: Any) -> str:
    """A string as is; anything else (object, list, number, null) as compact JSON: the text
    the token estimate and recall read of an event's content or arguments."""
    if isinstance(value, str):
        return value
    return compact_json(value)


def event_text(value: Any) -> str:
    """`content_text`, except that a missing value is no text at all (what a summary shows)."""
    if value is None:
        return ""
    return content_text(value)


_CONTROL_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_WS_RE = re.compile(r"\s+")


def clean_text(text: str) -> str:
    """Untrusted text made safe to copy: CRLF/CR become LF, other control characters go."""
    return _CONTROL_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def collapse_whitespace(text: str) -> str:
    """`clean_text` on one line: every run of whitespace (newlines too) becomes one space.
    (Not inspector.safe_text.one_line, which shows control characters instead of dropping
    them, for display.)"""
    return _WS_RE.sub(" ", clean_text(text)).strip()


def _is_joiner_or_mark(ch: str) -> bool:
    """Characters that belong to the grapheme before them (never cut just before one)."""
    cp = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Mc", "Me")
        or cp == 0x200D
        or 0xFE00 <= cp <= 0xFE0F
        or 0xE0100 <= cp <= 0xE01EF
        or 0x1F3FB <= cp <= 0x1F3FF
        or 0xE0020 <= cp <= 0xE007F
    )


def safe_cut(text: str, index: int) -> int:
    """Move a cut index back so it never splits a grapheme cluster (marks, ZWJ sequences)."""
    index = max(0, min(index, len(text)))
    while 0 < index < len(text) and (
        _is_joiner_or_mark(text[index]) or text[index - 1] == "\u200d"
    ):
        index -= 1
    return index


def shorten(text: str, max_chars: int) -> str:
    """At most max_chars code points (the ellipsis included), cut on a grapheme boundary."""
    if len(text) <= max_chars:
        return text
    cut = safe_cut(text, max(0, max_chars - 1))
    return text[:cut].rstrip() + ELLIPSIS


_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def sentences(text: str) -> list[str]:
    """Split on . ! ? followed by whitespace, and right after 。！？ (CJK needs no space)."""
    flat = collapse_whitespace(text)
    return [s.strip() for s in _SENTENCE_SPLIT_RE.split(flat) if s.strip()]


def ends_cjk_sentence(text: str) -> bool:
    """Whether text ends with a CJK full stop (the next sentence joins without a space)."""
    return bool(text) and text[-1] in "。！？"


__all__ = [
    "CJK_LETTERS",
    "CJK_RANGES",
    "ELLIPSIS",
    "clean_text",
    "collapse_whitespace",
    "compact_json",
    "content_text",
    "ends_cjk_sentence",
    "event_text",
    "safe_cut",
    "sentences",
    "shorten",
]
