"""Chunk summarizers (contract §4, §5 split turns, §8 fallback).

Two backends share one protocol: `ExtractiveSummarizer` (offline, deterministic, no model) and
`OpenAISummarizer` (any OpenAI-compatible chat-completions server, stdlib HTTP only). Both write
the same checkpoint layout, plain text with label lines and "- " bullets, runs as the backbone
(core.compaction.runs: a run is a user request and what followed it):

    Goal:
    - <the latest request of the range>
    Constraints & Preferences:
    Progress:
    - Request: <a request, shortened, never dropped>      ("Continued:" when it began earlier)
      edited: <paths, whole, as the agent wrote them>
      ran: <commands>
      read: <paths>
      outcome: <the run's last assistant words>
      error: <the last error, when the run ended on one>
    Key Decisions:
    Next Steps:
    Critical Context:

A split turn's prefix uses `Original request:` / `Early progress:` / `Context for the retained
suffix:`. Focus instructions steer what is kept; they are never written into a summary.
core.compaction.summaries folds the Progress entries into one Rolling Summary line per run.

Event text is untrusted: it is only ever copied (control characters removed), never evaluated.

The modules: `base` (the protocol, its error, the sections, the split-turn framing), `layout`
(what is salient, and the checkpoint cut to its budget), `extractive`, `openai`; the factory
and the fallback are here. Text helpers are core.text's, `fit_tokens` is core.tokens'.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from core.compaction.runs import HISTORY_SECTIONS, SPLIT_TURN_MARKER, TURN_PREFIX_SECTIONS
from core.errors import ConfigError
from core.events import Event
from core.redact import redact_event, redact_secrets
from core.summarizer.base import (
    SPLIT_TURN_SEPARATOR,
    Summarizer,
    SummarizerConfigLike,
    SummarizerError,
    SummaryKind,
    continued_turn_prefix,
    split_turn_overhead_tokens,
    split_turn_summary,
)
from core.summarizer.extractive import ExtractiveSummarizer

if TYPE_CHECKING:
    from core.summarizer.openai import OpenAISummarizer, render_events_for_prompt

log = logging.getLogger(__name__)


def __getattr__(name: str) -> Any:
    """The HTTP backend is imported when first used: it pulls in urllib and http.client, which
    every command that never summarises over HTTP (status, plan, prompt) would pay for."""
    if name in ("OpenAISummarizer", "render_events_for_prompt"):
        from core.summarizer import openai

        return getattr(openai, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- factory + fallback


def make_summarizer(cfg: SummarizerConfigLike) -> Summarizer:
    """The summarizer that `summarizer:` in extraction.yaml asks for."""
    if cfg.backend == "extractive":
        return ExtractiveSummarizer()
    if cfg.backend == "openai":
        if not cfg.base_url:
            raise ConfigError("summarizer.base_url is required for the openai backend")
        if not cfg.model:
            raise ConfigError("summarizer.model is required for the openai backend")
        from core.summarizer.openai import OpenAISummarizer

        return OpenAISummarizer(
            cfg.base_url,
            cfg.model,
            api_key_env=cfg.api_key_env,
            timeout_seconds=float(cfg.timeout_seconds),
        )
    raise ConfigError(f"summarizer.backend must be extractive or openai, got {cfg.backend!r}")


FALLBACK_BACKEND = "extractive-fallback"


def summarize_with_fallback(
    summarizer: Summarizer,
    events: Sequence[Event],
    *,
    on_error: Callable[[Exception], None] | None = None,
    redact: bool = True,
    **kw: Any,
) -> tuple[str, str]:
    """(summary, backend name); any failure of the summarizer makes the extractive one stand in
    and the backend name "extractive-fallback" (contract §8: a failing summarizer never stops a
    pass). `on_error` sees the exception (its message never holds the API key).

    `redact` (config `redact_secrets`, default on): the summarizer is given copies of the
    events with their secrets masked (core.redact), the earlier summary and the focus too, and
    its answer is masked again, so no key an agent saw reaches a summary, summary.md or an
    `openai` summarizer server. The events themselves are not changed."""
    if redact:
        events = [redact_event(e) for e in events]
        for key in ("previous_summary", "focus"):
            if isinstance(kw.get(key), str):
                kw[key] = redact_secrets(kw[key])
    try:
        text, used = summarizer.summarize(events, **kw), summarizer.name
    except Exception as exc:
        log.warning("summarizer %s failed, using the extractive one: %s", summarizer.name, exc)
        if on_error is not None:
            on_error(exc)
        text, used = ExtractiveSummarizer().summarize(events, **kw), FALLBACK_BACKEND
    return (redact_secrets(text) if redact else text), used


__all__ = [
    "FALLBACK_BACKEND",
    "HISTORY_SECTIONS",
    "SPLIT_TURN_MARKER",
    "SPLIT_TURN_SEPARATOR",
    "TURN_PREFIX_SECTIONS",
    "ExtractiveSummarizer",
    "OpenAISummarizer",
    "Summarizer",
    "SummarizerConfigLike",
    "SummarizerError",
    "SummaryKind",
    "continued_turn_prefix",
    "make_summarizer",
    "render_events_for_prompt",
    "split_turn_overhead_tokens",
    "split_turn_summary",
    "summarize_with_fallback",
]
