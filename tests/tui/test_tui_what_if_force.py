"""What-if against the pass (issue 22 item 1): after `w` moves the cut, `c` offers to force
with the what-if values, once (never written to the config), or says plainly that it cuts with
the config's; closing the preview (`p`) clears what-if, so the preview is the config's cut again."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.widgets import Checkbox

from inspector.tui.screens import FocusPromptScreen
from tests.helpers.tui import SIZE, make, press, settle, started, text_in
from tests.helpers.tui_fixtures import build_basic

# Whole-app Pilot runs of a few seconds each: the extended step (docs/TESTING.md).
pytestmark = pytest.mark.extended


def _index(root: Path) -> list[dict[str, object]]:
    data = yaml.safe_load((root / "session" / "chunks" / "index.yaml").read_text())
    return list(data["chunks"])


async def test_force_uses_the_what_if_cut_once(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    config_files = {p: p.read_bytes() for p in tmp_path.rglob("*.yaml") if "chunks" not in p.parts}
    app = make(root)
    config = app.config
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(pilot, "w", *"20")
        preview = app.preview
        assert preview is not None and preview.plan.useful
        what_if_first_kept = preview.plan.first_kept_event_id
        await press(pilot, "escape", "c")
        screen = app.screen
        assert isinstance(screen, FocusPromptScreen)
        said = " ".join(text_in(screen).split())
        assert "keep_recent_tokens 20" in said and "once" in said, said
        assert screen.query_one("#focus-what-if", Checkbox).value
        await press(pilot, "enter")
        entry = _index(root)[-1]
        meta = entry["cut_meta"]
        assert isinstance(meta, dict)
        assert meta["first_kept_event_id"] == what_if_first_kept
        assert app.config is config and app.config.keep_recent_tokens != 20
    after = {p: p.read_bytes() for p in tmp_path.rglob("*.yaml") if "chunks" not in p.parts}
    assert after == config_files, "no config written or changed"


async def test_force_with_the_config_values_says_so(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    async with started(root, size=SIZE) as (app, pilot):
        config_cut = app.preview.plan.first_kept_event_id if app.preview else None
        await press(pilot, "w", *"20")
        await press(pilot, "escape", "c")
        screen = app.screen
        assert isinstance(screen, FocusPromptScreen)
        await press(pilot, "ctrl+t")
        assert not screen.use_what_if
        said = " ".join(text_in(screen).split())
        assert f"keep_recent_tokens {app.config.keep_recent_tokens:,}" in said, said
        await press(pilot, "enter")
        meta = _index(root)[-1]["cut_meta"]
        assert isinstance(meta, dict) and meta["first_kept_event_id"] == config_cut


async def test_closing_the_preview_clears_what_if(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    async with started(root, size=SIZE) as (app, pilot):
        await press(pilot, "p")
        assert app.preview is not None
        config_row = app.preview.cut_row
        await press(pilot, "w", *"20")
        assert app.preview.cut_row != config_row
        await press(pilot, "escape", "p")
        assert not app.what_if.active
        await press(pilot, "p")
        assert app.preview.cut_row == config_row
        assert "what-if" not in text_in(app.query_one("#plan"))
