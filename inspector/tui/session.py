"""The session on display, as one object: what every tab reads and the app swaps when `b`,
an archive (Archive tab) or a past moment (the Timeline's `g`) changes it.

`DisplayedSession` holds the manager (the active session's, an archive's or a moment's, read
only), the archive id or moment label, the hot window's model, the last light status, the last
plan (cut preview and trigger verdicts), and the runs sparkline of each session seen (an
archive's figures never join the active session's; going back shows the active history as it
was). It reads files only in `headroom` and `entry_extra`, which run in the plan worker.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from core.compaction.headroom import Headroom, headroom_for, pushed_out_summary
from core.compaction.trigger import PromptSize, TriggerDecision
from core.config import CompactionConfig
from core.errors import SessionMemoryError
from core.index.catalog import read_catalog
from core.manager import MemoryManager
from inspector.tui.hot_window_model import CutPreview, HotWindowModel, LightStatus
from inspector.tui.views.session_view import ViewContext
from inspector.tui.widgets.status_header import HeaderInfo

SPARK_HISTORY = 60
"""Runs kept for the budget gauge's sparkline."""

Runs = list[tuple[int | None, bool]]
"""The sparkline: (prompt tokens, False) per prompt seen, (None, True) per pass."""


@dataclass
class _RunHistory:
    prompts: Runs = field(default_factory=list)
    last_seen_prompt: tuple[int | None, str | None] | None = None
    last_chunk_count: int | None = None


@dataclass
class DisplayedSession:
    """The session every tab shows (see the module docstring)."""

    manager: MemoryManager
    archive_id: str | None = None
    """The archive's id or the past moment's label; None for the active session."""
    moment_root: Path | None = None
    """A past moment's folder (removed on leaving it)."""
    status: LightStatus = field(default_factory=LightStatus)
    preview: CutPreview | None = None
    trigger: TriggerDecision | None = None
    """The verdict the plan panel shows (the what-if's when one is active)."""
    real_trigger: TriggerDecision | None = None
    """The configured verdict: the budget gauge's."""
    prompt_size: PromptSize | None = None
    full_load_ms: float | None = None
    """How long the whole of events.jsonl took to load (None while loading)."""
    t0: float = field(default_factory=time.perf_counter)
    runs: _RunHistory = field(default_factory=_RunHistory)
    _histories: dict[str, _RunHistory] = field(default_factory=dict)
    hot_model: HotWindowModel = field(init=False)

    def __post_init__(self) -> None:
        self.hot_model = HotWindowModel(self.manager.paths.events)

    @property
    def prompt_history(self) -> Runs:
        return self.runs.prompts

    @prompt_history.setter
    def prompt_history(self, prompts: Runs) -> None:
        self.runs.prompts = prompts

    @property
    def archived(self) -> bool:
        return self.archive_id is not None

    def switch(self, manager: MemoryManager, archive_id: str | None) -> None:
        """Show another session: its own runs history, everything else read afresh (the
        gauge keeps the last verdict until the new session's plan replaces it)."""
        self._histories[self.archive_id or ""] = self.runs
        self.archive_id = archive_id
        self.runs = self._histories.get(archive_id or "", _RunHistory())
        self.manager = manager
        self.full_load_ms = None
        self.t0 = time.perf_counter()
        self.hot_model = HotWindowModel(manager.paths.events)
        self.preview = None
        self.trigger = None
        self.status = LightStatus()

    def drop_moment(self) -> None:
        """Remove a past moment's folder (the temporary folder made for it, if it is one)."""
        if self.moment_root is None:
            return
        parent = self.moment_root.parent
        if parent.name.startswith("session-inspector-moment-"):
            shutil.rmtree(parent, ignore_errors=True)
        else:
            shutil.rmtree(self.moment_root, ignore_errors=True)
        self.moment_root = None

    def apply_status(self, status: LightStatus) -> LightStatus:
        """Take a new status (a read without archives keeps the last list) and record its
        runs; the status it replaces."""
        if status.archives is None:
            status = LightStatus(**{**status.__dict__, "archives": self.status.archives})
        prev, self.status = self.status, status
        runs = self.runs
        if prev.session_id and status.session_id and prev.session_id != status.session_id:
            # A rotation: the new session's runs start fresh (the old ones are its archive's).
            runs.prompts = []
            runs.last_chunk_count = None
        key = (status.last_prompt_tokens, status.run_started_at)
        if runs.last_chunk_count is not None and status.chunk_count > runs.last_chunk_count:
            runs.prompts.append((None, True))
        if key != runs.last_seen_prompt and status.last_prompt_tokens is not None:
            runs.prompts.append((status.last_prompt_tokens, False))
        runs.last_seen_prompt = key
        runs.last_chunk_count = status.chunk_count
        del runs.prompts[:-SPARK_HISTORY]
        return prev

    def headroom(self, config: CompactionConfig) -> Headroom | None:
        """What the cut preview needs to move its cut as a pass would (contract §5,
        Headroom): the session's calibration and summary.md's size; None for an archive."""
        state = self.status.prompt_state
        if state is None or self.archive_id is not None:
            return None
        try:
            catalog = read_catalog(self.manager.paths, write=False)
            pushed = pushed_out_summary(len(catalog), catalog.summary, config.summary_max_chunks)
        except SessionMemoryError:
            pushed = None
        summary = self.manager.store.summary_estimate()
        return headroom_for(state, config, self.status.model, summary, pushed)

    def entry_extra(self, chunk_id: str) -> dict[str, Any] | None:
        """An index entry's extra fields (the plan names the chunk that holds a continued
        turn's request through them); None when the index cannot say."""
        try:
            return read_catalog(self.manager.paths, write=False).entry_extra(chunk_id)
        except SessionMemoryError:
            return None

    def view_context(self, config: CompactionConfig) -> ViewContext:
        return ViewContext(self.manager, config.window_for(self.status.model))

    def header_info(
        self,
        config: CompactionConfig,
        *,
        root: str,
        read_only: bool,
        watch_mode: str,
        follow: bool,
    ) -> HeaderInfo:
        snap = self.hot_model.snapshot()
        status = self.status
        return HeaderInfo(
            root=root,
            session_id=(status.session_id if self.archive_id is None else self.archive_id),
            model=status.model,
            context_window=config.window_for(status.model),
            event_count=snap.n_events,
            hot_tokens=snap.total_tokens,
            last_prompt_tokens=status.last_prompt_tokens,
            chunk_count=status.chunk_count,
            pending_count=status.pending_count,
            corrupt_lines=snap.corrupt_count + status.quarantined_lines,
            maintenance="running" if self.manager.maintenance_running else "idle",
            watch_mode=watch_mode,
            read_only=read_only or self.archive_id is not None,
            archived=self.archive_id is not None,
            index_error=status.index_error,
            loading=self.full_load_ms is None,
            follow=follow,
        )


T = TypeVar("T")


class OnDisplay(Generic[T]):
    """`app.<name>` is the session on display's `<name>`: the app's attributes of old
    (`app.status`, `app.preview`, …) that tests and the bench read and set."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, app: Any, owner: type | None = None) -> T:
        return getattr(app.session, self._name) if app is not None else self  # type: ignore[return-value]

    def __set__(self, app: Any, value: T) -> None:
        setattr(app.session, self._name, value)
