"""The demo's ending (issue 22 item 7): its closing line keeps its counts at 80 and 60
columns and says where the compactions are; a fresh temporary demo root is removed when the
TUI quits unless `--keep`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import commands as cli
from inspector.demo.agent import DemoStep
from inspector.tui.widgets.demo_controls import DemoControls, ending_line
from tests.helpers.tui import ViewHost, settle, until, widget_text

STATS = {"events_appended": 206, "compactions": 7, "rotations": 1, "chunks_here": 1}


class _Player:
    def __init__(self) -> None:
        self._iter = self._play()

    def _play(self) -> Iterator[DemoStep]:
        yield DemoStep("scenario tour: a long description " * 4, "scenario")
        yield DemoStep("scenario tour finished: 206 events, 7 compactions", "done", STATS)

    def steps(self) -> Iterator[DemoStep]:
        return self._iter


def test_ending_line_says_where_the_compactions_are() -> None:
    line = ending_line(STATS)
    assert line.startswith("206 events, 7 compactions, 1 rotation")
    assert "6 in archived sessions: 6 then o; 1 here: 2 Chunks" in line
    assert "all 7 here: 2 Chunks" in ending_line({**STATS, "chunks_here": 7})
    assert "8 Timeline, g goes back in time" in line


@pytest.mark.parametrize("width", [60, 80])
async def test_closing_line_keeps_its_counts(width: int) -> None:
    controls = DemoControls(_Player(), pace=0.0)
    app = ViewHost(controls)
    async with app.run_test(size=(width, 5)) as pilot:
        await until(pilot, lambda: controls.finished)
        await settle(app, pilot)
        line = widget_text(controls.query_one("#demo-status"))
        assert "■ done 206 events, 7 compactions, 1 rotation" in line, line


def _fake_run_app(seen: list[Path]) -> Any:
    def run_app(root: Path, **_kw: Any) -> int:
        assert (root / "session").is_dir() or root.is_dir()
        seen.append(root)
        return 0

    return lambda: run_app


@pytest.mark.parametrize("keep", [False, True])
def test_a_fresh_demo_root_is_removed_on_quit_unless_keep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], keep: bool
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("SESSION_MEMORY_DIR", raising=False)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    seen: list[Path] = []
    monkeypatch.setattr(cli, "_run_app_or_fail", _fake_run_app(seen))
    code = cli.main(["demo", "--scenario", "cjk", *(["--keep"] if keep else [])])
    assert code == 0
    (root,) = seen
    assert root.parent.parent == tmp_path and root.parent.name.startswith("session-inspector-demo-")
    err = capsys.readouterr().err
    if keep:
        assert root.is_dir() and "kept the demo root" in err
    else:
        assert not root.parent.exists() and "removed the demo root" in err
