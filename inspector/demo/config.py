"""The demo's small thresholds, and the extraction.yaml that carries them to a demo root.

Written to `<demo folder>/config/memory/extraction.yaml` for a fresh demo root, so a later
`session-inspector --memory-dir <demo folder>/memory status` (or the TUI) sees the numbers
the demo ran with. Its own module: the agent (for the crash child) and the scenarios need it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from core.config import CompactionConfig


def demo_config() -> CompactionConfig:
    """Small thresholds: a few turns fill the window, so every mechanism shows quickly."""
    return CompactionConfig(
        context_window=6000,
        reserve_tokens=1200,
        compress_at_percent=70,
        count_compress_after_events=30,
        keep_recent_tokens=1200,
        hot_window_events=24,
        summary_max_chunks=3,
        max_rolling_summary_lines=16,
        lock_timeout_seconds=10,
    )


def config_yaml(config: CompactionConfig) -> str:
    """extraction.yaml text for a config (read back by core.config.load_config)."""
    summarizer = {
        key: value
        for key, value in {
            "backend": config.summarizer.backend,
            "base_url": config.summarizer.base_url,
            "model": config.summarizer.model,
            "api_key_env": config.summarizer.api_key_env,
            "timeout_seconds": config.summarizer.timeout_seconds,
            "max_summary_tokens": config.summarizer.max_summary_tokens,
        }.items()
        if value is not None
    }
    section: dict[str, Any] = {
        "context_window": config.context_window,
        "reserve_tokens": config.reserve_tokens,
        "compress_at_percent": config.compress_at_percent,
        "count_compress_after_events": config.count_compress_after_events,
        "keep_recent_tokens": config.keep_recent_tokens,
        "hot_window_events": config.hot_window_events,
        "summary_max_chunks": config.summary_max_chunks,
        "max_rolling_summary_lines": config.max_rolling_summary_lines,
        "lock_timeout_seconds": config.lock_timeout_seconds,
        "models": dict(config.models),
        "summarizer": summarizer,
        "session_boundary": {"idle_gap_minutes": config.idle_gap_minutes},
    }
    header = (
        "# Written by `session-inspector demo`: small thresholds so that compaction happens\n"
        "# within a few turns. Real deployments use much larger values (see the README).\n"
    )
    return header + yaml.safe_dump(
        {"session_compaction": section}, sort_keys=False, allow_unicode=True
    )


def write_demo_config(path: Path, config: CompactionConfig) -> None:
    from core.store.atomic import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, config_yaml(config))


__all__ = ["config_yaml", "demo_config", "write_demo_config"]
