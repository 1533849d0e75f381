"""Untrusted text made safe for the terminal.

Event text, ids, file names, summaries and error messages come from files anyone can write.
They are never parsed as Rich/Textual markup (only ever wrapped in `Text`/`Content`), and
control characters — ANSI/OSC escapes, bidi overrides, NUL, DEL, zero-width and tag
characters, lone surrogates — are replaced by visible stand-ins so nothing raw reaches the
terminal.

In the TUI, secrets (core.redact: API keys, tokens, passwords, private keys) are masked too,
here, where every piece of event text passes on its way to the screen, unless the user asked
to see them (`tui --reveal-secrets`, or `redact_secrets: false` in the config): `create_app`
turns the masking on with `mask_secrets`. The command line's own output is left as it is.
"""

from __future__ import annotations

import re

from rich.text import Text

from core.redact import redact_secrets

_MASKING = [False]
"""Whether `visible` masks secrets (a list: one flag shared by every thread of the app)."""


def mask_secrets(on: bool) -> bool:
    """Mask secrets in everything `visible` makes from now on; returns the previous setting."""
    before, _MASKING[0] = _MASKING[0], bool(on)
    return before


def masking_secrets() -> bool:
    return _MASKING[0]


_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff"
    # invisible: zero-width space, Mongolian vowel separator, word joiner and the invisible
    # operators, the tag characters (which can hide a whole message), and lone surrogates
    # (which a terminal's UTF-8 cannot even encode)
    "\u200b\u180e\u2060-\u2064\U000e0000-\U000e007f\ud800-\udfff]"
)


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟ (␛ for ESC)
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{code:04X}>"


def visible(text: str, *, keep_newlines: bool = True, keep_tabs: bool = True) -> str:
    """The same text with every control character shown as a printable stand-in (and its
    secrets masked while `mask_secrets` is on)."""
    if _MASKING[0]:
        text = redact_secrets(text)
    out = _CONTROL.sub(_visible, text)
    if not keep_newlines:
        out = out.replace("\r\n", "\u21b5").replace("\n", "\u21b5").replace("\r", "\u240d")
    else:
        out = out.replace("\r", "\u240d")
    if not keep_tabs:
        out = out.replace("\t", "\u2192")
    return out


def one_line(text: str, limit: int = 200) -> str:
    """A single-line preview, control characters visible, capped at `limit` characters."""
    out = visible(text[: limit * 4], keep_newlines=False, keep_tabs=False)
    return out if len(out) <= limit else out[: limit - 1] + "\u2026"


def safe_text(text: object, style: str = "", *, limit: int | None = None) -> Text:
    """A Rich Text of untrusted text: no markup parsing, control characters visible."""
    s = text if isinstance(text, str) else str(text)
    if limit is not None and len(s) > limit:
        s = s[:limit] + f"\u2026 [{len(s) - limit} more chars]"
    return Text(visible(s), style=style, no_wrap=False)


def safe_line(text: object, style: str = "", *, limit: int = 200) -> Text:
    """A one-line Rich Text preview of untrusted text (for table cells and list rows)."""
    s = text if isinstance(text, str) else str(text)
    return Text(one_line(s, limit), style=style, no_wrap=True, overflow="ellipsis")
