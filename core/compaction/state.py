"""state.json's content (contract §1): the session id, the prompt-size figure the trigger
starts from, run and event times, counters; unknown keys are kept and written back.

Pure data and validation; `core.store.session_store.SessionStore` reads and writes the file.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from core.compaction.calibration import MAX_PAIRS, Calibration, Pair, fit, pairs_from_json
from core.compaction.prompt_size import PromptSize, prompt_size
from core.errors import BadInputError, StoreError
from core.events import now_ts
from core.ids import validate_session_id

MAX_PROMPT_TOKENS = 10**12
"""Largest prompt size kept (a sanity cap: larger is a bug upstream, and would overflow floats)."""


def file_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def new_session_id() -> str:
    """`s-<UTC time>-<6 hex>`: sortable, unique, and a valid folder name for the archive."""
    return f"s-{file_stamp()}-{secrets.token_hex(3)}"


class StateCorruptError(StoreError):
    """state.json was read but its content is not a state (moved aside by the next writer)."""


@dataclass
class SessionState:
    """state.json. Keys this version does not know are kept in `extra` and written back."""

    session_id: str
    created_at: str
    model: str | None = None
    last_prompt_tokens: int | None = None
    """The trigger's base figure: the latest recorded provider size, or a pass's reset estimate."""
    prompt_tokens_source: str | None = None
    """`recorded` (a provider figure) or `estimated` (a pass's reset); None in older files."""
    prompt_tokens_after_event_id: str | None = None
    """Id of the last event in events.jsonl when the figure was set (None: the file was empty).
    Events after it are added to the figure by estimate (contract §5, Prompt size)."""
    prompt_tokens_anchored: bool = False
    """Whether `prompt_tokens_after_event_id` was written (older files have no anchor)."""
    run_started_at: str | None = None
    last_event_at: str | None = None
    counters: dict[str, int] = field(default_factory=dict)
    calibration_pairs: list[Pair] = field(default_factory=list)
    """Recent (provider figure, estimate) pairs, oldest first (core.compaction.calibration)."""
    prompt_estimate: int | None = None
    """The estimate (summary.md plus the hot window) at the figure's anchor: a recorded
    figure's E, or a pass's reset estimate; the next figure's E adds what was appended since.
    None: not known (an older file), computed from the files then."""
    calibration_extra: dict[str, Any] = field(default_factory=dict)
    """Keys of state.json's `calibration` object this version does not know, kept."""
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def fresh(cls) -> SessionState:
        return cls(session_id=new_session_id(), created_at=now_ts())

    @property
    def ever_recorded(self) -> bool:
        """Whether a provider prompt size was ever recorded in this session (an older file
        with a figure and no source counts as recorded)."""
        if self.counters.get("prompt_tokens_recorded", 0) > 0:
            return True
        return self.prompt_tokens_source is None and self.last_prompt_tokens is not None

    def calibration(self, window: int) -> Calibration:
        """The fit over the recorded pairs, its overhead clamped to half of `window`."""
        return fit(self.calibration_pairs, window)

    def add_calibration_pair(self, figure: int, estimate: int) -> None:
        """Pair a recorded figure with the estimate of what the prompt held (contract §5)."""
        self.calibration_pairs = [*self.calibration_pairs, (figure, estimate)][-MAX_PAIRS:]
        self.prompt_estimate = estimate

    def prompt_size(
        self,
        event_ids: Sequence[object],
        tokens: Sequence[int],
        calibration: Calibration | None = None,
    ) -> PromptSize:
        """The trigger's prompt size over the hot window `event_ids`/`tokens` (contract §5);
        events appended after the figure count `calibration.ratio ×` their estimate."""
        return prompt_size(
            ratio=calibration.ratio if calibration is not None else 1.0,
            base=self.last_prompt_tokens,
            base_source=self.prompt_tokens_source,
            anchored=self.prompt_tokens_anchored,
            after_event_id=self.prompt_tokens_after_event_id,
            ever_recorded=self.ever_recorded,
            event_ids=event_ids,
            tokens=tokens,
        )

    def reset_prompt_tokens(
        self, predicted: int, last_event_id: str | None, estimate: int | None = None
    ) -> None:
        """After a pass: the predicted size of the new hot window plus summary.md
        (`overhead + ratio × estimate`), anchored at the new window's last event so later
        appends grow it again (contract §5). `estimate` is the plain estimate it came from."""
        self.last_prompt_tokens = min(MAX_PROMPT_TOKENS, predicted)
        self.prompt_estimate = estimate
        self.prompt_tokens_source = "estimated"
        self.prompt_tokens_after_event_id = last_event_id
        self.prompt_tokens_anchored = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        out.update(
            session_id=self.session_id,
            created_at=self.created_at,
            model=self.model,
            last_prompt_tokens=self.last_prompt_tokens,
            prompt_tokens_source=self.prompt_tokens_source,
            run_started_at=self.run_started_at,
            last_event_at=self.last_event_at,
            counters=dict(self.counters),
        )
        if self.prompt_tokens_anchored:
            out["prompt_tokens_after_event_id"] = self.prompt_tokens_after_event_id
        if self.calibration_pairs or self.prompt_estimate is not None or self.calibration_extra:
            # overhead and ratio as fitted with no window clamp (readers clamp to theirs).
            fitted = fit(self.calibration_pairs, MAX_PROMPT_TOKENS)
            out["calibration"] = {
                **self.calibration_extra,
                **fitted.to_json(),
                "pairs": [[p, e] for p, e in self.calibration_pairs],
                "estimate": self.prompt_estimate,
            }
        return out

    @classmethod
    def from_json(cls, obj: object, where: str) -> SessionState:
        """Raise StoreError naming `where` when required fields are missing or mistyped."""
        if not isinstance(obj, dict):
            raise StoreError(f"{where}: state must be a JSON object, got {type(obj).__name__}")
        sid = obj.get("session_id")
        try:
            validate_session_id(sid)
        except BadInputError as exc:
            raise StoreError(f"{where}: bad session_id ({exc})") from exc
        created = obj.get("created_at")
        if not isinstance(created, str):
            raise StoreError(f"{where}: created_at must be a string")
        for key in (
            "model",
            "run_started_at",
            "last_event_at",
            "prompt_tokens_source",
            "prompt_tokens_after_event_id",
        ):
            if obj.get(key) is not None and not isinstance(obj[key], str):
                raise StoreError(f"{where}: {key} must be a string or null")
        lpt = obj.get("last_prompt_tokens")
        if lpt is not None and (
            not isinstance(lpt, int) or isinstance(lpt, bool) or not 0 <= lpt <= MAX_PROMPT_TOKENS
        ):
            raise StoreError(
                f"{where}: last_prompt_tokens must be an integer from 0 to {MAX_PROMPT_TOKENS} "
                "or null"
            )
        raw_counters = obj.get("counters") or {}
        if not isinstance(raw_counters, dict):
            raise StoreError(f"{where}: counters must be an object")
        counters = {
            str(k): v
            for k, v in raw_counters.items()
            if isinstance(v, int) and not isinstance(v, bool)
        }
        known = {f.name for f in fields(cls)} - {"extra", "prompt_tokens_anchored"}
        known.add("calibration")
        raw_cal = obj.get("calibration")
        cal = raw_cal if isinstance(raw_cal, dict) else {}
        estimate = cal.get("estimate")
        if not isinstance(estimate, int) or isinstance(estimate, bool) or estimate < 0:
            estimate = None
        cal_known = {"overhead", "ratio", "samples", "pairs", "estimate"}
        assert isinstance(sid, str)
        return cls(
            session_id=sid,
            created_at=created,
            model=obj.get("model"),
            last_prompt_tokens=lpt,
            prompt_tokens_source=obj.get("prompt_tokens_source"),
            prompt_tokens_after_event_id=obj.get("prompt_tokens_after_event_id"),
            prompt_tokens_anchored="prompt_tokens_after_event_id" in obj,
            run_started_at=obj.get("run_started_at"),
            last_event_at=obj.get("last_event_at"),
            counters=counters,
            calibration_pairs=pairs_from_json(cal.get("pairs")),
            prompt_estimate=estimate,
            calibration_extra={k: v for k, v in cal.items() if k not in cal_known},
            extra={k: v for k, v in obj.items() if k not in known},
        )


__all__ = [
    "MAX_PROMPT_TOKENS",
    "SessionState",
    "StateCorruptError",
    "file_stamp",
    "new_session_id",
]
