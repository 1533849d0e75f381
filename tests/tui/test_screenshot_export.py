"""SVG screenshots without text runs that start with blanks (rsvg drops those blanks and draws
the rest of the run to the left): `fix_leading_blanks` on Rich's export, and every
`InspectorApp.export_screenshot` going through it with the same picture."""

from __future__ import annotations

import html
import re
from pathlib import Path

from textual.app import App

from inspector.tui.screenshot import fix_leading_blanks
from tests.helpers.tui import press, started

CLASS = 'class="terminal-1-r3"'
CLIP = 'clip-path="url(#terminal-1-line-0)"'

LEADING_BLANK_THEN_VISIBLE = re.compile(r"<text\b[^>]*>(?:&#160;)+(?!&#160;)[^<]")
"""A text element whose content starts with blanks followed by anything else."""


def _run(x: str, length: str, content: str) -> str:
    return f'<text {CLASS} x="{x}" y="20" textLength="{length}" {CLIP}>{content}</text>'


def _cells(svg: str) -> dict[tuple[float, int], str]:
    """Every visible character of the picture by (line y, terminal column): what is drawn."""
    out: dict[tuple[float, int], str] = {}
    pattern = r'<text [^>]*x="([\d.]+)" y="([\d.]+)" textLength="([\d.]+)"[^>]*>([^<]*)</text>'
    for m in re.finditer(pattern, svg):
        text = html.unescape(m.group(4)).replace("\xa0", " ")
        cell = float(m.group(3)) / len(text)
        start = round(float(m.group(1)) / cell)
        for i, ch in enumerate(text):
            if ch != " ":
                out[(float(m.group(2)), start + i)] = ch
    return out


def test_a_run_starting_with_blanks_starts_at_its_first_visible_character() -> None:
    svg = _run("24.4", "73.2", "&#160;&#160;&#160;ses")
    # 6 characters in 73.2: 12.2 a cell; 3 blanks dropped move x by 36.6 and shorten by as much
    assert fix_leading_blanks(svg) == _run("61", "36.6", "ses")


def test_the_cell_width_comes_from_the_element_itself() -> None:
    svg = _run("0", "50", "&#160;abcd")  # 10 a cell, not Rich's usual 12.2
    assert fix_leading_blanks(svg) == _run("10", "40", "abcd")


def test_runs_without_leading_blanks_are_unchanged() -> None:
    svg = "\n".join(
        [
            _run("0", "61", "root&#160;m"),
            _run("61", "36.6", "ab&#160;"),
            _run("97.6", "36.6", "&#160;&#160;&#160;"),  # blank-only: draws nothing, may stay
        ]
    )
    assert fix_leading_blanks(svg) == svg


def test_markup_and_entities_are_kept_as_text() -> None:
    svg = _run("0", "292.8", "&#160;&#160;[@click=app.quit]x[/]&amp;")
    # 24 characters once unescaped ("&amp;" is one): 12.2 a cell
    assert fix_leading_blanks(svg) == _run("24.4", "268.4", "[@click=app.quit]x[/]&amp;")
    svg = _run("0", "36.6", "&amp;&#160;x")
    assert fix_leading_blanks(svg) == svg
    svg = _run("0", "36.6", "&#160;&lt;b")  # 3 characters once unescaped
    assert fix_leading_blanks(svg) == _run("12.2", "24.4", "&lt;b")


def test_elements_without_a_text_length_are_left_alone() -> None:
    title = '<text class="terminal-1-title" x="100" y="27">&#160;Inspector</text>'
    assert fix_leading_blanks(title) == title


async def test_app_screenshots_have_no_run_starting_with_blanks(basic: Path) -> None:
    """Every tab of a real app: Rich's own export has runs starting with blanks (the header's
    separators, the hot window's right-aligned numbers), the app's export has none, and both
    draw every visible character in the same cell."""
    async with started(basic, size=(120, 40)) as (app, pilot):
        raw_had_some = False
        for tab in "1234567":
            await press(pilot, tab)
            raw = App.export_screenshot(app)
            fixed = app.export_screenshot()
            raw_had_some = raw_had_some or bool(LEADING_BLANK_THEN_VISIBLE.search(raw))
            assert not LEADING_BLANK_THEN_VISIBLE.search(fixed), tab
            assert _cells(fixed) == _cells(raw), tab
        assert raw_had_some
