"""The status header: where we are, how big the session is, and whether it is being watched.

Two lines, built as `Text` (session ids, model names and paths come from files and are shown
literally). `HeaderInfo` is plain data the app assembles from the model and a light status read.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from inspector.cli.output import elide_path
from inspector.safe_text import one_line


@dataclass(frozen=True)
class HeaderInfo:
    root: str
    session_id: str | None = None
    model: str | None = None
    context_window: int = 0
    event_count: int = 0
    hot_tokens: int = 0
    last_prompt_tokens: int | None = None
    chunk_count: int = 0
    pending_count: int = 0
    corrupt_lines: int = 0
    maintenance: str = "idle"
    watch_mode: str = "watching"
    read_only: bool = False
    archived: bool = False
    index_error: str | None = None
    loading: bool = False
    follow: bool = False
    """The hot window keeps the newest event in view (f toggles it)."""


def _num(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _short_num(n: int | None) -> str:
    """12,345 as 12k and 1,234,567 as 1.2M; small numbers as they are."""
    if n is None:
        return "?"
    if n < 10_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


Piece = tuple[str, str]
"""(text, style) of one run of the header."""

WIDE = 10_000


def _fields(fields: list[tuple[str, str, str]], sep: str) -> list[Piece]:
    """(label, value, value style) fields joined by a dim separator."""
    pieces: list[Piece] = []
    for i, (label, value, style) in enumerate(fields):
        if i:
            pieces.append((sep, "dim"))
        if label:
            pieces.append((label + " ", "dim"))
        pieces.append((value, style))
    return pieces


def _length(pieces: list[Piece]) -> int:
    return sum(cell_len(text) for text, _ in pieces)


def _mid_cut(text: str, width: int, head_share: float = 0.5) -> str:
    """`text` in at most `width` cells with its middle replaced by "…" (ids keep both ends;
    a model name keeps more of its head, `head_share`, where its family and size are)."""
    if cell_len(text) <= width or width < 5:
        return text
    head = round((width - 1) * head_share)
    tail = width - 1 - head
    return text[:head] + "…" + text[-tail:]


MODEL_HEAD = 0.7
"""Share of a cut model name kept from its start ("qwen2.5-7b…ruct")."""


def header_line1(info: HeaderInfo, width: int = WIDE) -> Text:
    """root │ session │ model and window │ ARCHIVED / READ-ONLY, shortened to fit `width`:
    the window's label first, then by turns the root's middle (its tail says which root it
    is), the separators and the window (the budget gauge shows it too), last the middle of
    the model name and of the session id; every cut is marked "…"."""
    root = full_root = one_line(info.root, 10_000)
    session = one_line(info.session_id or "(none yet)", 60)
    model = full_model = one_line(info.model or "(default)", 30)
    flag = "ARCHIVED" if info.archived else "READ-ONLY" if info.read_only else ""
    window = f"window {_num(info.context_window)}"

    sep = " │ "

    def build() -> list[Piece]:
        fields = [
            ("root", root, "bold"),
            ("session", session, ""),
            ("model", f"{model} · {window}" if window else model, ""),
        ]
        if flag:
            fields.append(("", flag, "bold reverse"))
        return _fields(fields, sep)

    def over() -> int:
        return _length(build()) - width

    def shorten_root(floor: int) -> None:
        nonlocal root
        if over() > 0:
            root = elide_path(root, max(min(floor, cell_len(root)), cell_len(root) - over()))

    if over() > 0:
        window = f"{_short_num(info.context_window)} tok"
    shorten_root(32)
    if over() > 0:
        sep = "  "
    shorten_root(24)
    if over() > 0:
        window = ""  # the budget gauge below shows the window too
    shorten_root(16)
    if over() > 0:
        model = _mid_cut(model, max(12, cell_len(model) - over()), MODEL_HEAD)
    if over() > 0:
        session = _mid_cut(session, max(16, cell_len(session) - over()))
    shorten_root(8)
    if over() > 0:
        session = _mid_cut(session, max(12, cell_len(session) - over()))
    # A later step may have made more room than an earlier cut needed: give it back, to the
    # model name first, then to the root.
    if over() < 0 and model != full_model:
        model = _mid_cut(full_model, cell_len(model) - over(), MODEL_HEAD)
    if over() < 0 and root != full_root:
        root = elide_path(full_root, cell_len(root) - over())
    return Text.assemble(*build(), no_wrap=True, overflow="ellipsis")


def header_line2(info: HeaderInfo, width: int = WIDE) -> Text:
    """The counts, with full labels and " │ " between them when they fit, else closer
    together, else with short labels (ev, pend, bad), short numbers (12k) and no zero
    pending / corrupt counts, and last without "pass idle"."""
    corrupt_style = "bold red" if info.corrupt_lines else "bold"
    pass_style = "bold" if info.maintenance == "idle" else "bold yellow"

    def build(short: bool, sep: str, quiet_idle: bool = False) -> list[Piece]:
        tight = sep == " "
        num = _short_num if short else _num
        events = num(info.event_count) + (" …" if info.loading else "")
        fields = [
            ("ev" if short else "events", events, "bold"),
            ("hot", num(info.hot_tokens), "bold"),
            ("prompt", num(info.last_prompt_tokens), "bold"),
            ("chunks", num(info.chunk_count), "bold"),
        ]
        if not short or info.pending_count:
            fields.append(("pend" if short else "pending", num(info.pending_count), "bold"))
        if not short or info.corrupt_lines:
            fields.append(("bad" if short else "corrupt", num(info.corrupt_lines), corrupt_style))
        if not (quiet_idle and info.maintenance == "idle"):
            fields.append(("pass", info.maintenance, pass_style))
        fields.append(("" if tight else "files", info.watch_mode, "bold"))
        if info.follow:
            fields.append(("", "follow", "bold green"))
        return _fields(fields, sep)

    pieces = build(False, " │ ")
    for short, sep, quiet_idle in (
        (False, "  ", False),
        (True, "  ", False),
        (True, " ", False),
        (True, " ", True),  # narrowest: "pass idle" left out (a running pass is still shown)
    ):
        if _length(pieces) <= width:
            break
        pieces = build(short, sep, quiet_idle)
    if info.index_error:
        pieces.append(("  index: ", "bold red"))
        pieces.append((one_line(info.index_error, 80), "red"))
    return Text.assemble(*pieces, no_wrap=True, overflow="ellipsis")


def render_header(info: HeaderInfo, width: int = WIDE) -> Text:
    out = Text("\n", no_wrap=True, overflow="ellipsis").join(
        [header_line1(info, width), header_line2(info, width)]
    )
    out.no_wrap = True
    return out


class StatusHeader(Static):
    """Two status lines at the top of the screen, fitted to its width."""

    def __init__(self, info: HeaderInfo, *, id: str | None = None) -> None:
        super().__init__(render_header(info), id=id, markup=False)
        self.info = info

    def _fit_width(self) -> int:
        width = self.content_region.width
        return width if width > 0 else WIDE

    def set_info(self, info: HeaderInfo) -> None:
        if info != self.info:
            self.info = info
            # Two lines, always (styles: height 2): no layout pass of the whole screen.
            self.update(render_header(info, self._fit_width()), layout=False)

    def on_resize(self) -> None:
        self.update(render_header(self.info, self._fit_width()), layout=False)
