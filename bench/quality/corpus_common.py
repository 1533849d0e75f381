"""Pieces the corpus generators share: a deterministic clock, provider-style prompt sizes,
and the text makers (code files, test output) that make transcripts read like real ones.

Everything is driven by `random.Random(seed)`, so `python -m bench.quality.generate` rewrites
byte-identical files.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

from core.tokens import estimate_tokens

START = datetime(2026, 10, 14, 9, 12, 0, tzinfo=UTC)


class Clock:
    """Monotonic timestamps with realistic gaps (seconds between tool calls, minutes between
    user turns)."""

    def __init__(self, rng: random.Random, start: datetime = START) -> None:
        self.rng = rng
        self.now = start

    def tick(self, low: float = 1.0, high: float = 9.0) -> datetime:
        self.now += timedelta(seconds=self.rng.uniform(low, high))
        return self.now

    def iso(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"

    def ms(self) -> int:
        return int(self.now.timestamp() * 1000)

    def unix(self) -> float:
        return round(self.now.timestamp(), 3)


class PromptMeter:
    """What a provider would report as the prompt size: a fixed system + tools overhead plus
    the conversation so far, counted a little above our own estimate (BPE tokenizers cut code
    finer than chars/4), with a small jitter. Images count a flat provider cost each."""

    def __init__(self, rng: random.Random, overhead: int, factor: float = 1.04) -> None:
        self.rng = rng
        self.overhead = overhead
        self.factor = factor
        self.conversation = 0.0

    def add_text(self, text: str, per_message: int = 4) -> None:
        self.conversation += (estimate_tokens(text) + per_message) * self.factor

    def add_tokens(self, n: int) -> None:
        self.conversation += n

    def reset(self, kept_text_tokens: float) -> None:
        self.conversation = kept_text_tokens

    def prompt_tokens(self) -> int:
        jitter = self.rng.uniform(-0.004, 0.004)
        return math.floor((self.overhead + self.conversation) * (1.0 + jitter))


def pick(rng: random.Random, items: list[str] | tuple[str, ...]) -> str:
    return items[rng.randrange(len(items))]


def camel(words: list[str]) -> str:
    return words[0] + "".join(w.capitalize() for w in words[1:])


def pascal(words: list[str]) -> str:
    return "".join(w.capitalize() for w in words)


TODO_TEXTS = (
    "handle the empty-branch case once the tree migration lands",
    "drop this fallback after v0.40; kept for sessions written by older clients",
    "measure whether caching this is worth the memory",
    "the retry budget should come from settings, not a constant",
    "make this cancellable; today an abort waits for the promise",
    "unify with the RPC path, both normalise line endings differently",
)

MEETING_NOTES = (
    "Meeting notes 2026-10-02: agreed to keep the v2 format readable. Next steps: "
    "migrate fixtures, announce in #dev, ask Mario about the release date.",
    "Sync 2026-09-28: Next steps - (1) benchmark on the 400-turn session, (2) write the "
    "migration guide, (3) decide on the default reserve.",
    "Design review: the team prefers explicit errors over silent truncation. Action items: "
    "update docs, add a regression test, ping the provider maintainers.",
)
