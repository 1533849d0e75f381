"""Filling a DataTable with its column widths fixed before any row is painted.

DataTable measures auto-width columns on its next idle, but caches cell renders without the
width in the key: a frame painted between `add_row` and that idle keeps truncated cells
("sys…" for "system") until something else changes the table. Measuring the cells here and
giving every column a fixed width closes that window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable


def text_cells(text: str) -> int:
    """Cells `text` takes on one line."""
    return cell_len(text)


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


@dataclass(frozen=True)
class Column:
    """A table column as a narrow screen may show it: its label, a shorter label, and whether
    it may shrink (its cells then end with an ellipsis) down to `min_width` cells."""

    key: str
    label: str
    short: str | None = None
    min_width: int | None = None


WIDE_TABLE = 110
"""At this many cells or more a table keeps every column at full width (and scrolls sideways
when they do not fit); below it, columns are shortened or left out to fit (`fit_columns`)."""

CELL_PADDING = 2
"""Cells a DataTable adds to every column (one blank each side)."""


@dataclass(frozen=True)
class Fitted:
    """The columns to show, in order: (index into the full column list, label, width)."""

    columns: tuple[tuple[int, str, int], ...]

    @property
    def indices(self) -> tuple[int, ...]:
        return tuple(i for i, _, _ in self.columns)


def fit_columns(
    columns: Sequence[Column],
    cell_widths: Sequence[int],
    available: int,
    moves: Sequence[tuple[str, str]],
) -> Fitted:
    """Which columns to show at `available` cells, and how wide: every column at full width
    on a wide table (>= WIDE_TABLE) or when they fit; else `moves` in order — ("short", key):
    use the short label, ("drop", key): leave the column out — and a shrinkable column
    (`min_width`) narrowed, until the row fits. `cell_widths` is the widest cell per column.
    Why: at 80x24 a table cut at its right edge (" ba", "fir") tells nothing; a narrower
    table that keeps its most telling columns whole does."""
    labels = [c.label for c in columns]
    widths = [max(text_cells(c.label), w) for c, w in zip(columns, cell_widths, strict=True)]
    shown = list(range(len(columns)))

    def total() -> int:
        return sum(widths[i] + CELL_PADDING for i in shown)

    def fitted() -> Fitted:
        return Fitted(tuple((i, labels[i], widths[i]) for i in shown))

    if available >= WIDE_TABLE or total() <= available:
        return fitted()
    index = {c.key: i for i, c in enumerate(columns)}
    for kind, key in (("", ""), *moves):
        if kind == "short" and columns[index[key]].short is not None:
            i = index[key]
            labels[i] = columns[i].short or labels[i]
            widths[i] = max(text_cells(labels[i]), cell_widths[i])
        elif kind == "drop" and index[key] in shown and len(shown) > 1:
            shown.remove(index[key])
        narrowed = _shrunk(columns, widths, shown, available)
        if narrowed is not None:
            widths = narrowed
            return fitted()
    return fitted()


def _shrunk(
    columns: Sequence[Column], widths: Sequence[int], shown: Sequence[int], available: int
) -> list[int] | None:
    """`widths` with the shrinkable columns shown narrowed (not below their min_width) so the
    row fits in `available` cells; None when it cannot fit."""
    out = list(widths)
    over = sum(out[i] + CELL_PADDING for i in shown) - available
    for i in shown:
        low = columns[i].min_width
        if over <= 0:
            break
        if low is None or out[i] <= low:
            continue
        give = min(over, out[i] - low)
        out[i] -= give
        over -= give
    return out if over <= 0 else None
