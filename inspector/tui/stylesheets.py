"""The app's stylesheets: one `.tcss` per widget, per view and per screen (named like its module),
then `app.tcss` with the layout, last so that it wins where it and a widget's sheet disagree.

Test hosts that mount a single widget load the same list (`CSS_PATH = STYLESHEETS`).
"""

from __future__ import annotations

from pathlib import Path, PurePath

STYLES_DIR = Path(__file__).parent / "styles"

STYLESHEETS: list[str | PurePath] = [
    # views and widgets in one alphabetical run (the order they had in one folder)
    *sorted(
        [*(STYLES_DIR / "widgets").glob("*.tcss"), *(STYLES_DIR / "views").glob("*.tcss")],
        key=lambda path: path.name,
    ),
    *sorted((STYLES_DIR / "screens").glob("*.tcss")),
    STYLES_DIR / "app.tcss",
]
