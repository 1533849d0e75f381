"""Secrets masked in what is derived from events (issue 20): summaries, summary.md, the recall
index, what a summarizer is sent, the TUI's view.

The events themselves are the lossless record and are never changed; this module is pure text
in, text out. `redact_secrets(text)` replaces each secret it recognises with a mask that says
what it was and keeps none of its secret part: `sk-…[redacted]`, `ghp_…[redacted]`,
`[redacted:aws-key]`, `Bearer [redacted:token]`, `password=[redacted]` … The rules, in the
order they apply (`PATTERN_NAMES`; docs/FORMATS.md, "Secrets in derived text", has the table):
private-key blocks (`-----BEGIN … PRIVATE KEY-----` to its END line, or to the end of its
base64 when the output was cut), Stripe, OpenAI/Anthropic `sk-` keys, AWS access key ids and
secret keys, GitHub, Slack, Google, Hugging Face and npm tokens, JWTs, bearer tokens, Basic
credentials, passwords in URLs, and the values of `password=`, `secret:`, `api_key=`,
`token=` … assignments (quoted, or holding a digit).

Ordinary identifiers never match: hex ids, git hashes, sha256 digests and UUIDs have none of
the prefixes, and an assignment needs one of its key words before it (a test counts matches on
the quality corpus: none). Every pattern is linear in the text (no repetition that can overlap
itself), and each runs only when the text holds one of its fixed parts (a substring test).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # a cold recall (core.recall.ranking imports this module) does not import typing
    from collections.abc import Callable
    from typing import Any

    _Mask = Callable[[re.Match[str]], str]
    _Rule = tuple[str, tuple[str, ...] | re.Pattern[str], re.Pattern[str], _Mask]

MASK = "[redacted]"

_ASSIGN_KEYS = (
    r"(?:client[_-]?secret|secret[_-]?key|secret|api[_-]?key|apikey|access[_-]?token|"
    r"auth[_-]?token|refresh[_-]?token|private[_-]?key|token|passwd|password|pwd)"
)
_VALUE_CHARS = r"[^\s\"'`,;()\[\]{}<>=:&…]"
"""A bare value runs to a space, quote, bracket, separator, `=`, `:` or `&` (base64 padding
`=` is taken after it): no two key words share one run, so each run is read once, and a mask
already written (`sk-…[redacted]`) is never taken for a value."""
_NOT_WORD = r"(?<![A-Za-z0-9_-])"
_NOT_ALNUM = r"(?<![A-Za-z0-9])"


def _keep(group: str, mask: str) -> _Mask:
    """A mask that keeps a named group (the key's prefix, the `Bearer ` word) before it."""
    return lambda m: f"{m.group(group)}{mask}"


def _fixed(mask: str) -> _Mask:
    return lambda _m: mask


def _assignment(m: re.Match[str]) -> str:
    quote = m.group("quote") or ""
    return f"{m.group('assign')}{quote}{MASK}{quote}"


_RULES: tuple[_Rule, ...] = (
    (
        "private-key",
        ("private key",),
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"[A-Za-z0-9+/=\s\\:,.-]*?"  # headers (Proc-Type, DEK-Info), base64, \n escapes
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?=[^A-Za-z0-9+/=\s\\:,.-])|\Z)"
        ),
        _fixed("[redacted:private-key]"),
    ),
    (
        "stripe-key",
        ("k_live_", "k_test_"),
        re.compile(_NOT_WORD + r"(?P<p>[sr]k_(?:live|test)_)[A-Za-z0-9]{16,}"),
        _keep("p", f"…{MASK}"),
    ),
    (
        "openai-key",
        ("sk-",),
        re.compile(_NOT_WORD + r"sk-(?:proj-|ant-(?:api\d\d-)?|live-|svcacct-)?[A-Za-z0-9_-]{20,}"),
        _fixed(f"sk-…{MASK}"),
    ),
    (
        "aws-key",
        re.compile(r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|PKA)"),
        re.compile(
            _NOT_ALNUM + r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)"
            r"[A-Z0-9]{16}(?![A-Za-z0-9])"
        ),
        _fixed("[redacted:aws-key]"),
    ),
    (
        "aws-secret",
        ("secret_access", "secretaccess"),
        re.compile(
            r"(?i:(?P<p>(?:aws_?)?secret_?access_?key[\"']?\s*[:=]\s*[\"']?))"
            r"[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"
        ),
        _keep("p", "[redacted:aws-secret]"),
    ),
    (
        "github-token",
        re.compile(r"gh[pousr]_|github_pat_"),
        re.compile(_NOT_ALNUM + r"(?P<p>gh[pousr]_|github_pat_)[A-Za-z0-9_]{22,}"),
        _keep("p", f"…{MASK}"),
    ),
    (
        "slack-token",
        ("xox",),
        re.compile(_NOT_WORD + r"(?P<p>xox[abposr]-)[A-Za-z0-9-]{10,}"),
        _keep("p", f"…{MASK}"),
    ),
    (
        "google-api-key",
        ("aiza",),
        re.compile(_NOT_WORD + r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        _fixed("[redacted:google-api-key]"),
    ),
    (
        "huggingface-token",
        ("hf_",),
        re.compile(_NOT_ALNUM + r"hf_[A-Za-z0-9]{30,}"),
        _fixed(f"hf_…{MASK}"),
    ),
    (
        "npm-token",
        ("npm_",),
        re.compile(_NOT_ALNUM + r"npm_[A-Za-z0-9]{36}"),
        _fixed(f"npm_…{MASK}"),
    ),
    (
        "jwt",
        ("eyj",),
        re.compile(_NOT_WORD + r"eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]+"),
        _fixed("[redacted:jwt]"),
    ),
    (
        "bearer",
        ("bearer",),
        re.compile(r"(?<![A-Za-z0-9])(?P<p>[Bb]earer\s+)[A-Za-z0-9._~+/-]{16,}=*"),
        _keep("p", "[redacted:token]"),
    ),
    (
        "basic-auth",
        ("basic",),
        re.compile(r"(?i:(?P<p>authorization:\s*basic\s+))[A-Za-z0-9+/]{8,}=*"),
        _keep("p", "[redacted:credentials]"),
    ),
    (
        "url-password",
        ("://",),
        re.compile(r"(?P<p>\b[a-z][a-z0-9+.-]{0,15}://[^\s:/@]{1,64}:)[^\s:/@]{1,128}(?=@[\w.-])"),
        _keep("p", MASK),
    ),
    (
        "assignment",
        (
            "passw",
            "pwd",
            "secret",
            "api_key",
            "api-key",
            "apikey",
            "token",
            "private_key",
            "private-key",
        ),
        re.compile(
            # The first-letter lookahead lets the engine skip to candidate letters (3x faster
            # than trying the case-insensitive key words at every position).
            r"(?=[cCsSaAtTrRpP])(?<![A-Za-z0-9])"
            r"(?i:(?P<assign>" + _ASSIGN_KEYS + r"[\"']?\s*[:=]\s*))"
            r"(?:(?P<quote>[\"'])(?![^\"'\n]*\[redacted)[^\"'\n]{4,}(?P=quote)"
            r"|(?![$%])(?=" + _VALUE_CHARS + r"*\d)" + _VALUE_CHARS + r"{6,}={0,2})"
        ),
        _assignment,
    ),
)

PATTERN_NAMES: tuple[str, ...] = tuple(rule[0] for rule in _RULES)
"""The kinds of secret recognised, in the order they are applied (docs/FORMATS.md lists them
with their masks)."""


def _wanted(triggers: tuple[str, ...] | re.Pattern[str], text: str, lower: str) -> bool:
    """Whether a rule can match: one of its fixed parts is in the lower-cased text (or its
    trigger pattern, case-sensitive, finds one in the text: one scan instead of eleven)."""
    if isinstance(triggers, re.Pattern):
        return triggers.search(text) is not None
    return any(t in lower for t in triggers)


def redact_secrets(text: str) -> str:
    """`text` with every secret it recognises masked (see the module docstring)."""
    if not text:
        return text
    lower = text.lower()
    for _name, triggers, pattern, mask in _RULES:
        if _wanted(triggers, text, lower):
            text = pattern.sub(mask, text)
    return text


def find_secrets(text: str) -> list[tuple[str, str]]:
    """(kind, matched text) of each secret `redact_secrets` masks in `text`, rule by rule."""
    found: list[tuple[str, str]] = []
    if not text:
        return found
    lower = text.lower()
    for name, triggers, pattern, mask in _RULES:
        if _wanted(triggers, text, lower):
            found.extend((name, m.group(0)) for m in pattern.finditer(text))
            text = pattern.sub(mask, text)
    return found


def redact_value(value: Any, redact: Callable[[str], str] = redact_secrets) -> Any:
    """A copy of a JSON-like value with every string in it (keys aside) redacted; the value
    itself when nothing changed (no copy of a large event that holds no secret)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        items = {k: redact_value(v, redact) for k, v in value.items()}
        return value if all(items[k] is value[k] for k in value) else items
    if isinstance(value, list):
        out = [redact_value(v, redact) for v in value]
        return value if all(a is b for a, b in zip(out, value, strict=True)) else out
    return value


REDACTED_FIELDS = ("content", "arguments", "name")


def redact_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event with its content, arguments and name redacted: a shallow copy when anything
    changed, else the event itself (the stored events are never changed)."""
    changed: dict[str, Any] = {}
    for key in REDACTED_FIELDS:
        if key in event:
            new = redact_value(event[key])
            if new is not event[key]:
                changed[key] = new
    return {**event, **changed} if changed else event


__all__ = [
    "MASK",
    "PATTERN_NAMES",
    "find_secrets",
    "redact_event",
    "redact_secrets",
    "redact_value",
]
