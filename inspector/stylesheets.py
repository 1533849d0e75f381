"""The app's stylesheets: one `.tcss` per widget and per screen (named like its module), then
`app.tcss` with the layout, last so that it wins where it and a widget's sheet disagree.

Test hosts that mount a single widget load the same list (`CSS_PATH = STYLESHEETS`).
"""

from __future__ import annotations

from pathlib import Path, PurePath

STYLES_DIR = Path(__file__).parent / "styles"

STYLESHEETS: list[str | PurePath] = [
    *sorted((STYLES_DIR / "widgets").glob("*.tcss")),
    *sorted((STYLES_DIR / "screens").glob("*.tcss")),
    STYLES_DIR / "app.tcss",
]
