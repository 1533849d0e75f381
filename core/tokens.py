"""Token estimates (contract §3): CJK code points count one each, everything else chars/4."""

from __future__ import annotations

import math
import re
from typing import Any

from core.text import CJK_RANGES, ELLIPSIS, content_text, safe_cut

EVENT_OVERHEAD_TOKENS = 4
"""Constant per-event overhead (role/framing tokens of a chat message); contract allows ≤ 8."""

_NON_CJK_RUN = re.compile(f"[^{CJK_RANGES}]+")


def estimate_tokens(text: str) -> int:
    """cjk + ceil(other / 4); ASCII text takes a fast path with no scan."""
    n = len(text)
    if n == 0:
        return 0
    if text.isascii():
        return -(-n // 4)
    cjk = len(_NON_CJK_RUN.sub("", text))
    return cjk + math.ceil((n - cjk) / 4)


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


def fit_tokens(text: str, max_tokens: int) -> str:
    """The longest grapheme-safe prefix of text, plus "…", whose estimate is ≤ max_tokens."""
    if estimate_tokens(text) <= max_tokens:
        return text
    if max_tokens < 1:
        return ""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid] + ELLIPSIS) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    cut = safe_cut(text, lo)
    return text[:cut].rstrip() + ELLIPSIS
