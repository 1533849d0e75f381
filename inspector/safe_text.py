"""Untrusted text made safe for the terminal.

Event text, ids, file names, summaries and error messages come from files anyone can write.
They are never parsed as Rich/Textual markup (only ever wrapped in `Text`/`Content`), and
control characters — ANSI/OSC escapes, bidi overrides, NUL, DEL, zero-width and tag
characters, lone surrogates — are replaced by visible stand-ins so nothing raw reaches the
terminal.
"""

from __future__ import annotations

import itertools
import re

from rich.style import Style
from rich.text import Text

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
    """The same text with every control character shown as a printable stand-in."""
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


def runs_line(pieces: list[tuple[str, str]]) -> Text:
    """(text, style) runs as one line, the blanks that would start a run moved to the end of the
    run before it: the same in a terminal, and SVG rasterisers (rsvg), which drop the blanks a
    run starts with, no longer glue "root m" to "session". Text is used as given (no markup)."""
    moved: list[tuple[str, str]] = []
    for text, style in pieces:
        blanks = len(text) - len(text.lstrip(" "))
        if moved and blanks:
            prev_text, prev_style = moved[-1]
            moved[-1] = (prev_text + text[:blanks], prev_style)
            text = text[blanks:]
        if text:
            moved.append((text, style))
    line = Text(no_wrap=True, overflow="ellipsis")
    for text, style in moved:
        line.append(text, style=style)
    return line


_LEADING_BLANKS = re.compile(r"^ +(?=\S)", re.MULTILINE)


def set_apart_indentation(text: Text) -> Text:
    """Indentation at the start of each line as a run of its own (italic blanks: nothing on
    screen), so no run of text starts with blanks and rasterised SVG snapshots (rsvg drops
    such blanks) keep the indentation."""
    for match in _LEADING_BLANKS.finditer(text.plain):
        text.stylize("italic", match.start(), match.end())
    return text


def _no_background(style: Style) -> bool:
    return style.bgcolor is None and not style.reverse and not style.underline


def trail_blanks(text: Text) -> Text:
    """The same text and look, with blanks that start a styled run given to the run before
    them (on the same line, neither with a background), and indentation set apart: no run of
    text starts with blanks, so rasterised SVG snapshots (rsvg drops such blanks) show the
    columns and gaps the terminal shows."""
    plain = text.plain
    spans = sorted(
        (span for span in text.spans if span.end > span.start), key=lambda span: span.start
    )
    cuts = sorted({0, len(plain), *(b for span in spans for b in (span.start, span.end))})
    regions: list[tuple[str, Style]] = []
    active: list[tuple[int, int, Style]] = []
    next_span = 0
    for start, end in itertools.pairwise(cuts):
        while next_span < len(spans) and spans[next_span].start <= start:
            span = spans[next_span]
            style = Style.parse(span.style) if isinstance(span.style, str) else span.style
            active.append((next_span, span.end, style))
            next_span += 1
        active = [item for item in active if item[1] > start]
        styles = [style for _, _, style in active]
        regions.append((plain[start:end], Style.combine(styles) if styles else Style()))
    out = Text(style=text.style, justify=text.justify, overflow=text.overflow)
    out.no_wrap = text.no_wrap
    pending: tuple[str, Style] | None = None
    for chunk, style in regions:
        if pending is not None:
            prev_text, prev_style = pending
            blanks = len(chunk) - len(chunk.lstrip(" "))
            if (
                blanks
                and not prev_text.endswith("\n")
                and _no_background(prev_style)
                and _no_background(style)
            ):
                prev_text += chunk[:blanks]
                chunk = chunk[blanks:]
            out.append(prev_text, style=prev_style)
        pending = (chunk, style)
    if pending is not None:
        out.append(pending[0], style=pending[1])
    return set_apart_indentation(out)
