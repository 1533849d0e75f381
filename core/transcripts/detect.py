"""Which transcript format a file is in (issue 23): `import` and `follow` without `--format`
say what they chose, and a wrong `--format` names the format the file looks like.

Detection reads the start of the text only: the first JSONL lines (the shape of each agent's
lines is distinctive) or, for one JSON document, its top-level keys.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.errors import BadInputError
from core.transcripts.importers import (
    check_format,
    decode_utf8,
    parse_transcript,
    read_transcript_bytes,
)
from core.transcripts.transcript import Transcript

_CODEX_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state"}
)
_CLAUDE_KEYS = frozenset({"sessionId", "parentUuid", "isSidechain", "userType", "leafUuid"})
_CLAUDE_TYPES = frozenset(
    {"user", "assistant", "summary", "file-history-snapshot", "queue-operation", "progress"}
)
SNIFF_LINES = 20


def detect_format(text: str) -> str | None:
    """The format `text` looks like, or None when it looks like none of them."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("["):
        return "openai"
    if not stripped.startswith("{"):
        return None
    votes: list[str] = []
    for raw in stripped.split("\n")[:SNIFF_LINES]:
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            return _document_format(stripped) if not votes else votes[0]
        guess = _line_format(value)
        if guess is not None:
            votes.append(guess)
            if guess != "openai":
                return guess
    return votes[0] if votes else None


def _line_format(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    ltype = value.get("type")
    if ltype == "session" and ("version" in value or "cwd" in value):
        return "pi"
    if ltype is None and {"id", "timestamp", "instructions"} <= value.keys():
        return "codex"  # the first rollout format: a bare header line
    if ltype in _CODEX_TYPES and "payload" in value:
        return "codex"
    if _CLAUDE_KEYS & value.keys() or (ltype in _CLAUDE_TYPES and "message" in value):
        return "claude-code"
    if ltype in _CLAUDE_TYPES and ltype not in ("user", "assistant"):
        return "claude-code"
    if isinstance(value.get("role"), str):
        return "openai"
    if "messages" in value:
        return _messages_format(value)
    return None


def _document_format(text: str) -> str | None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(doc, list):
        return "openai"
    if isinstance(doc, dict) and "messages" in doc:
        return _messages_format(doc)
    if isinstance(doc, dict) and isinstance(doc.get("role"), str):
        return "openai"
    return None


def _messages_format(doc: dict[str, Any]) -> str:
    """mini-swe-agent trajectories say so (`trajectory_format`, `info.mini_version`) or keep
    `extra` on their messages; other message lists are OpenAI chat."""
    if "mini" in str(doc.get("trajectory_format", "")).lower():
        return "mini-swe-agent"
    info = doc.get("info")
    if isinstance(info, dict) and ("mini_version" in info or "exit_status" in info):
        return "mini-swe-agent"
    messages = doc.get("messages")
    if isinstance(messages, list) and any(isinstance(m, dict) and "extra" in m for m in messages):
        return "mini-swe-agent"
    return "openai"


def read_text(path: Path) -> str:
    """A transcript's text; BadInputError (FILE or FILE:LINE) when it cannot be read."""
    return decode_text(read_transcript_bytes(path), str(path))


def decode_text(data: bytes, source: str) -> str:
    """UTF-8 text, without a byte order mark; BadInputError naming the line when it is not."""
    return decode_utf8(data, source).removeprefix("\ufeff")


def resolve_format(text: str, fmt: str | None, source: str) -> tuple[str, bool]:
    """(format, detected): `fmt` when given, else the detected one (BadInputError when the
    text looks like no known format)."""
    if fmt is not None:
        check_format(fmt)
        return fmt, False
    found = detect_format(text)
    if found is None:
        raise BadInputError(
            f"{source}: cannot tell the transcript's format; give --format "
            "(pi, openai, mini-swe-agent, claude-code or codex)"
        )
    return found, True


def parse_any(text: str, fmt: str | None, source: str) -> tuple[Transcript, bool]:
    """Parse with `fmt` (or the detected format); a failure with a given format that the text
    does not look like says which format it looks like."""
    chosen, detected = resolve_format(text, fmt, source)
    try:
        return parse_transcript(text, chosen, source), detected
    except BadInputError as exc:
        looks = detect_format(text) if not detected else None
        if looks is not None and looks != chosen:
            raise BadInputError(
                f"{exc}; the file looks like {looks}, not {chosen} "
                f"(try --format {looks}, or leave --format out)"
            ) from None
        raise


def load_any(path: Path, fmt: str | None) -> tuple[Transcript, bool]:
    """`load_transcript` with detection: (transcript, whether the format was detected)."""
    return parse_any(read_text(path), fmt, str(path))


def decode_any(data: bytes, fmt: str | None, source: str) -> tuple[Transcript, bool]:
    """`decode_transcript` with detection (stdin's bytes, for `import -`)."""
    return parse_any(decode_text(data, source), fmt, source)
