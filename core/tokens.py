"""Token estimates (contract §3): CJK code points count one each, everything else chars/4."""

from __future__ import annotations

import json
import math
import re
from typing import Any

EVENT_OVERHEAD_TOKENS = 4
"""Constant per-event overhead (role/framing tokens of a chat message); contract allows ≤ 8."""

_CJK_RANGES = (
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0002fa1f"  # CJK Extensions B–F, Compatibility Supplement
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u31f0-\u31ff"  # Katakana Phonetic Extensions
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3130-\u318f"  # Hangul Compatibility Jamo
    "\uac00-\ud7af"  # Hangul Syllables
    "\u3000-\u303f"  # CJK Symbols and Punctuation
    "\uff00-\uffef"  # Half-width and Full-width Forms
)
_NON_CJK_RUN = re.compile(f"[^{_CJK_RANGES}]+")


def estimate_tokens(text: str) -> int:
    """cjk + ceil(other / 4); ASCII text takes a fast path with no scan."""
    n = len(text)
    if n == 0:
        return 0
    if text.isascii():
        return -(-n // 4)
    cjk = len(_NON_CJK_RUN.sub("", text))
    return cjk + math.ceil((n - cjk) / 4)


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""Built once: `json.dumps` with options builds a new encoder on every call."""


def compact_json(value: Any) -> str:
    """The compact JSON form the estimate and the stores use (UTF-8 kept, no spaces)."""
    return _COMPACT.encode(value)


def content_text(value: Any) -> str:
    """A string as is; anything else (object, list, number, null) as compact JSON."""
    if isinstance(value, str):
        return value
    return compact_json(value)


def estimate_event_tokens(event: dict[str, Any]) -> int:
    """Estimate of content + name + compact arguments, plus EVENT_OVERHEAD_TOKENS."""
    total = EVENT_OVERHEAD_TOKENS + estimate_tokens(content_text(event.get("content")))
    name = event.get("name")
    if isinstance(name, str):
        total += estimate_tokens(name)
    args = event.get("arguments")
    if args is not None:
        total += estimate_tokens(content_text(args))
    return total
