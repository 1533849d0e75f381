"""Starting the TUI: `create_app(...)` builds the app for the CLI, the tests and the bench;
`run_app(...)` runs it until quit and returns the exit status."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.config import CompactionConfig, load_config
from core.errors import SessionMemoryError
from inspector.safe_text import mask_secrets, one_line
from inspector.tui.app import InspectorApp
from inspector.tui.first_launch import first_launch
from inspector.tui.probe import AppProbe
from inspector.tui.widgets.demo_controls import DemoPlayerLike


def _resolve_config(
    config: CompactionConfig | Path | str | None, memory_dir: Path | str
) -> CompactionConfig:
    if isinstance(config, CompactionConfig):
        return config
    return load_config(config, memory_dir=memory_dir).config


def create_app(
    memory_dir: Path | str,
    *,
    read_only: bool = False,
    poll: bool = False,
    config: CompactionConfig | Path | str | None = None,
    demo: DemoPlayerLike | None = None,
    watch: bool = True,
    display_root: str | None = None,
    clock: Callable[[], str] | None = None,
    demo_autoplay: bool = True,
    probe: AppProbe | None = None,
    reveal_secrets: bool = False,
) -> InspectorApp:
    """The app the CLI runs and the tests drive (`watch=False`: no watcher thread; a demo
    starts playing at once unless `demo_autoplay=False`; `probe` records what tests and the
    bench measure). Secrets in what it shows are masked unless `reveal_secrets` or the
    config's `redact_secrets: false` (inspector.safe_text.mask_secrets)."""
    resolved = _resolve_config(config, memory_dir)
    mask_secrets(resolved.redact_secrets and not reveal_secrets)
    return InspectorApp(
        memory_dir,
        read_only=read_only,
        poll=poll,
        config=resolved,
        demo=demo,
        watch=watch,
        display_root=display_root,
        clock=clock,
        demo_autoplay=demo_autoplay,
        probe=probe,
    )


def run_app(
    memory_dir: Path | str,
    *,
    read_only: bool = False,
    poll: bool = False,
    config: CompactionConfig | Path | str | None = None,
    demo: DemoPlayerLike | None = None,
    reveal_secrets: bool = False,
) -> int:
    """Run the TUI until quit; the exit status (0 after a clean quit)."""
    try:
        app = create_app(
            memory_dir,
            read_only=read_only,
            poll=poll,
            config=config,
            demo=demo,
            reveal_secrets=reveal_secrets,
        )
        app.first_launch_hint = first_launch()
    except SessionMemoryError as exc:
        import sys

        print(f"error: {one_line(str(exc), 500)}", file=sys.stderr)
        return exc.exit_code
    result = app.run()
    app.active_manager.wait_for_maintenance(timeout=app.config.lock_timeout_seconds)
    return int(result or 0)


__all__ = ["create_app", "run_app"]
