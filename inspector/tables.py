"""Filling a DataTable with its column widths fixed before any row is painted.

DataTable measures auto-width columns on its next idle, but caches cell renders without the
width in the key: a frame painted between `add_row` and that idle keeps truncated cells
("sys…" for "system") until something else changes the table. Measuring the cells here and
giving every column a fixed width closes that window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable


def text_width(text: Text) -> int:
    """Cells of the widest line, as DataTable would measure it."""
    return max((cell_len(line) for line in text.plain.split("\n")), default=0)


def replace_rows(
    table: DataTable[Text],
    rows: Sequence[tuple[str, Sequence[Text]]],
    caps: Mapping[str, int] | None = None,
) -> None:
    """Replace every row of `table` (keyed), sizing each column to its widest cell or label,
    but at most `caps[column key]` cells (the table ends a longer cell with an ellipsis)."""
    columns = [(col.key.value, col.label) for col in table.ordered_columns]
    widths = [text_width(label) for _, label in columns]
    for _, cells in rows:
        for i, cell in enumerate(cells[: len(widths)]):
            widths[i] = max(widths[i], text_width(cell))
    for i, (key, _) in enumerate(columns):
        if caps and key is not None and key in caps:
            widths[i] = min(widths[i], caps[key])
    table.clear(columns=True)
    for (key, label), width in zip(columns, widths, strict=True):
        table.add_column(label, key=key, width=width)
    for key, cells in rows:
        table.add_row(*cells, key=key)
