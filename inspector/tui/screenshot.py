"""SVG screenshots that rasterise the way the terminal looks.

Rich's `Console.export_svg` (which Textual's `App.export_screenshot` uses) writes each styled
run of a line as one `<text x=… textLength=…>` element, blanks as `&#160;`. rsvg — used to
turn the exported screenshots into PNGs — drops the `&#160;` an element starts with and draws
the rest of the run that many cells to the left ("root m" glued to "session"). Widgets draw
their text as it should look on a terminal; the export alone is rewritten so that no run
starts with blanks: the run starts where its first visible character is, instead.
"""

from __future__ import annotations

import html
import re

_NBSP = "&#160;"

_TEXT = re.compile(r"<text\b(?P<attrs>[^>]*)>(?P<content>[^<]*)</text>")
_X = re.compile(r'(?<=\sx=")(?P<value>[^"]*)(?=")')
_TEXT_LENGTH = re.compile(r'(?<=\stextLength=")(?P<value>[^"]*)(?=")')


def _number(value: float) -> str:
    """A coordinate written the way Rich writes them (`format(value, "g")`)."""
    return format(value, "g")


def _without_leading_blanks(match: re.Match[str]) -> str:
    attrs, content = match.group("attrs"), match.group("content")
    stripped = content
    blanks = 0
    while stripped.startswith(_NBSP):
        stripped = stripped[len(_NBSP) :]
        blanks += 1
    rest = html.unescape(stripped)
    if not blanks or not rest.strip():
        return match.group(0)  # nothing to move, or a blank-only run (draws nothing)
    x_match, length_match = _X.search(attrs), _TEXT_LENGTH.search(attrs)
    if x_match is None or length_match is None:
        return match.group(0)  # not a run of terminal text (the window title has no length)
    try:
        x = float(x_match.group("value"))
        length = float(length_match.group("value"))
    except ValueError:
        return match.group(0)
    # Rich writes textLength = cell width × len(text): the element's own cell width.
    cell = length / (blanks + len(rest))
    attrs = _X.sub(_number(x + blanks * cell), attrs, count=1)
    attrs = _TEXT_LENGTH.sub(_number(length - blanks * cell), attrs, count=1)
    return f"<text{attrs}>{stripped}</text>"


def fix_leading_blanks(svg: str) -> str:
    """`svg` (Rich's export) with every text run that starts with blanks followed by something
    visible starting at that visible character instead: x moved right and textLength shortened
    by as many cells as blanks dropped. The same picture, and rsvg draws it the same too."""
    return _TEXT.sub(_without_leading_blanks, svg)
