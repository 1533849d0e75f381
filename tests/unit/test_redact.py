"""Secrets kept out of what is derived from events (issue 20, core.redact): each pattern masked,
ordinary ids left alone, linear time, and the hooks (summaries, summary.md, the summarizer's
input, the recall index, the TUI's text) masking while the events stay lossless."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.config import parse_config
from core.errors import ConfigError
from core.events import Event
from core.manager import MemoryManager
from core.redact import PATTERN_NAMES, find_secrets, redact_event, redact_secrets, redact_value
from core.summarizer import ExtractiveSummarizer, summarize_with_fallback
from tests.helpers.memory import small_config
from tests.helpers.paths import REPO

QUALITY_CORPUS = REPO / "bench" / "quality" / "corpus"

# (pattern name, text holding a secret, the secret, what the text becomes)
CASES: list[tuple[str, str, str, str]] = [
    (
        "private-key",
        "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7\nq+/Zz==\n"
        "-----END RSA PRIVATE KEY-----\ndone",
        "MIIEowIBAAKCAQEAx7",
        "key:\n[redacted:private-key]\ndone",
    ),
    (
        "private-key",  # cut off by a truncated tool output, JSON-escaped newlines
        'cat id: "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5v\\nQyNTUx',
        "b3BlbnNzaC1rZXktdjEAAAAABG5v",
        'cat id: "[redacted:private-key]',
    ),
    (
        "stripe-key",
        "STRIPE=sk_live_51HabcdefGHIJKLmnop0123",
        "51HabcdefGHIJKLmnop0123",
        "STRIPE=sk_live_…[redacted]",
    ),
    (
        "openai-key",
        "export OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345",
        "Ab3dEf6hIj9kLmN0pQrStUvWxYz12345",
        "export OPENAI_API_KEY=sk-…[redacted]",
    ),
    (
        "openai-key",
        "anthropic: sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-_AA end",
        "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe",
        "anthropic: sk-…[redacted] end",
    ),
    ("aws-key", "id AKIAIOSFODNN7EXAMPLE ok", "AKIAIOSFODNN7EXAMPLE", "id [redacted:aws-key] ok"),
    (
        "aws-secret",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [redacted:aws-secret]",
    ),
    (
        "github-token",
        "token ghp_16C7e42F292c6912E7710c838347Ae178B4a ok",
        "16C7e42F292c6912E7710c838347Ae178B4a",
        "token ghp_…[redacted] ok",
    ),
    (
        "github-token",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCD",
        "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCD",
        "github_pat_…[redacted]",
    ),
    (
        "slack-token",
        "SLACK xoxb-2048-1536-Ab3dEf6hIj9kLmN0",
        "2048-1536-Ab3dEf6hIj9kLmN0",
        "SLACK xoxb-…[redacted]",
    ),
    (
        "google-api-key",
        "key=AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe&q=x",
        "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
        "key=[redacted:google-api-key]&q=x",
    ),
    (
        "huggingface-token",
        "HF_TOKEN hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "HF_TOKEN hf_…[redacted]",
    ),
    (
        "npm-token",
        "//registry.npmjs.org/:_authToken npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "//registry.npmjs.org/:_authToken npm_…[redacted]",
    ),
    (
        "jwt",
        "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n",
        "session [redacted:jwt]",
    ),
    (
        "bearer",
        "Authorization: Bearer 7f3kQ9zLx2Vb8NcR4tYw1Ue6",
        "7f3kQ9zLx2Vb8NcR4tYw1Ue6",
        "Authorization: Bearer [redacted:token]",
    ),
    (
        "basic-auth",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "dXNlcjpwYXNzd29yZA==",
        "Authorization: Basic [redacted:credentials]",
    ),
    (
        "url-password",
        "git clone https://deploy:s3cretPa55@git.example.com/repo.git",
        "s3cretPa55",
        "git clone https://deploy:[redacted]@git.example.com/repo.git",
    ),
    ("assignment", "DB_PASSWORD=hunter22 next", "hunter22", "DB_PASSWORD=[redacted] next"),
    (
        "assignment",
        'config = {"password": "correct horse battery"}',
        "correct horse battery",
        'config = {"password": "[redacted]"}',
    ),
    ("assignment", "?api_key=abc123def456&x=1", "abc123def456", "?api_key=[redacted]&x=1"),
    (
        "assignment",
        "client_secret: 'Zq81-xk2P'",
        "Zq81-xk2P",
        "client_secret: '[redacted]'",
    ),
]


@pytest.mark.parametrize(("name", "text", "secret", "masked"), CASES)
def test_each_pattern_masks_its_secret(name: str, text: str, secret: str, masked: str) -> None:
    assert name in PATTERN_NAMES
    out = redact_secrets(text)
    assert out == masked
    assert secret not in out
    assert redact_secrets(out) == out, "masking twice is masking once"
    assert name in [kind for kind, _ in find_secrets(text)]


def test_every_pattern_has_a_case() -> None:
    assert sorted({name for name, *_ in CASES}) == sorted(PATTERN_NAMES)


ORDINARY = [
    "commit 3f2a9b1c4d5e6f708192a3b4c5d6e7f8091a2b3c (HEAD -> main)",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "id 123e4567-e89b-12d3-a456-426614174000 and 0x7ffdf3a0 and deadbeefcafebabe",
    "evt-01HF8Z3K4Q9W2M7N5T6R8Y0PXB chunk_0012 pending-1a2b3c4d",
    "password: required; api_key: str; max_tokens=4096; tokens: 1234",
    "password = os.environ['DB_PASSWORD']; token = get_token(); secret=$SECRET",
    "the secret is out, a token of thanks, a key decision, the bearer of news",
    "task-sk-1234 risk-assessment ASIAN food AKIA ghp_short xoxb-short",
    "https://example.com/path?q=1 and user@example.com and http://localhost:8080/x",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n"
    "-----END CERTIFICATE-----",
    "eyJhbGciOiJIUzI1NiJ9 alone is a header, not a token",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_ids_hashes_and_words_are_left_alone(text: str) -> None:
    assert redact_secrets(text) == text, find_secrets(text)


def test_no_match_in_the_quality_corpus() -> None:
    """The corpus (six real-shaped sessions, thousands of hex ids and hashes) holds no secret:
    any match would be a false positive that costs a summary a fact."""
    files = sorted(QUALITY_CORPUS.iterdir())
    assert files
    found = {p.name: find_secrets(p.read_text(encoding="utf-8")) for p in files}
    assert {name: hits for name, hits in found.items() if hits} == {}


@pytest.mark.parametrize(
    "hostile",
    [
        "password=password=",
        "eyJxxxxxx-",
        "a.a.",
        "bearer ",
        "sk-",
        "xoxb-",
        "-----BEGIN RSA PRIVATE KEY-----\n",
        "api_key ",
        "password='",
        "https://a:b",
        "secret_access_key=",
    ],
)
def test_redaction_is_linear_on_repetitive_input(hostile: str) -> None:
    text = hostile * (1_000_000 // len(hostile)) + " 1 ://"
    start = time.perf_counter()
    redact_secrets(text)
    assert time.perf_counter() - start < 2.0


SOUP = st.lists(
    st.sampled_from(
        [
            "sk-",
            "password",
            "=",
            ":",
            " ",
            "\n",
            "'",
            '"',
            "Bearer ",
            "AKIA",
            "eyJ",
            ".",
            "-",
            "abcDEF123",
            "xoxb-",
            "ghp_",
            "0",
            "-----BEGIN RSA PRIVATE KEY-----",
            "://",
            "@",
            "_",
        ]
    ),
    max_size=40,
).map("".join)


@settings(deadline=None, max_examples=300)
@given(SOUP)
def test_masking_is_idempotent_and_keeps_text_around_secrets(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once
    if not find_secrets(text):
        assert once == text


def test_redact_value_copies_only_what_changes() -> None:
    clean = {"content": {"stdout": "ok", "list": ["a", 1]}, "name": "bash"}
    assert redact_value(clean) is clean
    assert redact_event(clean) is clean
    dirty = {"content": "x", "arguments": {"env": ["TOKEN=abc123def456"]}, "id": "e1"}
    out = redact_event(dirty)
    assert out["arguments"] == {"env": ["TOKEN=[redacted]"]}
    assert dirty["arguments"] == {"env": ["TOKEN=abc123def456"]}, "the event is not changed"


# --- the config key ---------------------------------------------------------------------------


def test_redact_secrets_is_a_validated_boolean_defaulting_to_true() -> None:
    assert parse_config({}, "f.yaml")[0].redact_secrets is True
    off, warnings = parse_config({"session_compaction": {"redact_secrets": False}}, "f.yaml")
    assert off.redact_secrets is False and warnings == []
    with pytest.raises(ConfigError, match=r"^f\.yaml: session_compaction\.redact_secrets must"):
        parse_config({"session_compaction": {"redact_secrets": "no"}}, "f.yaml")


# --- the hooks --------------------------------------------------------------------------------

SECRET = "sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345"
AWS = "AKIAIOSFODNN7EXAMPLE"


def _session_with_secrets(root: Path, **config: Any) -> MemoryManager:
    mm = MemoryManager(root, small_config(**config))
    for n in range(6):
        mm.begin_run(f"turn {n}: deploy the camera service")
        call = f"c{n}"
        mm.append(
            {
                "type": "tool_call",
                "name": "bash",
                "tool_call_id": call,
                "arguments": {"command": f"cat .env  # OPENAI_API_KEY={SECRET}"},
            }
        )
        mm.append(
            {
                "type": "tool_result",
                "name": "bash",
                "tool_call_id": call,
                "content": f"OPENAI_API_KEY={SECRET}\nAWS_ACCESS_KEY_ID={AWS}\nerror E{n}",
            }
        )
        mm.append({"type": "assistant_output", "content": f"found the key {SECRET} for E{n}"})
    result = mm.save(force=True)
    assert result.compacted, result.reason
    return mm


def _derived_files(root: Path) -> dict[str, bytes]:
    session = root / "session"
    names = ["summary.md", "chunks/index.yaml", "chunks/recall.sqlite", "summary_archive.md"]
    return {n: (session / n).read_bytes() for n in names if (session / n).exists()}


def test_summaries_summary_md_and_the_recall_index_hold_no_secret(tmp_path: Path) -> None:
    root = tmp_path / "m"
    mm = _session_with_secrets(root)
    assert mm.recall("camera", limit=5).results  # builds chunks/recall.sqlite
    mm.close()
    derived = _derived_files(root)
    assert {"summary.md", "chunks/index.yaml", "chunks/recall.sqlite"} <= set(derived)
    for name, data in derived.items():
        assert SECRET.encode() not in data and AWS.encode() not in data, name
        assert b"ab3def6hij9klmn0pqrstuvwxyz12345" not in data.lower(), name  # a folded term
    summary = derived["summary.md"].decode()
    assert "E0" in summary or "E1" in summary, "the facts around the secret are kept"
    # The events are the lossless record: the chunk file still holds the key.
    chunks = [p for p in (root / "session" / "chunks").glob("*.jsonl")]
    assert any(SECRET in p.read_text() for p in chunks)


def test_redact_secrets_false_keeps_them_in_summaries(tmp_path: Path) -> None:
    root = tmp_path / "m"
    _session_with_secrets(root, redact_secrets=False).close()
    assert SECRET in (root / "session" / "summary.md").read_text()


class _Recording:
    """A summarizer that keeps what it was given (stands for the openai backend's request)."""

    name = "recording"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def summarize(self, events: Sequence[Event], **kw: Any) -> str:
        self.seen.append(json.dumps([dict(e) for e in events]) + json.dumps(kw))
        return f"the agent used {SECRET}"


def test_the_summarizer_is_sent_no_secret_and_its_answer_is_masked() -> None:
    events: list[Event] = [
        {"id": "a", "type": "tool_result", "role": "tool", "content": f"KEY={SECRET}"},
        {
            "id": "b",
            "type": "tool_call",
            "role": "assistant",
            "name": "bash",
            "arguments": {"command": f"curl -H 'Authorization: Bearer {SECRET}'"},
        },
    ]
    recording = _Recording()
    text, used = summarize_with_fallback(
        recording, events, previous_summary=f"old {AWS}", focus="keys", max_tokens=200
    )
    assert used == "recording" and SECRET not in text and "sk-…[redacted]" in text
    assert SECRET not in recording.seen[0] and AWS not in recording.seen[0]
    assert events[0]["content"] == f"KEY={SECRET}", "the caller's events are not changed"
    text, _ = summarize_with_fallback(recording, events, max_tokens=200, redact=False)
    assert SECRET in recording.seen[1] and SECRET in text


def test_the_extractive_summary_of_a_secret_is_masked() -> None:
    events: list[Event] = [
        {"id": "u", "type": "user_input", "role": "user", "content": f"use {SECRET} to deploy"},
        {"id": "a", "type": "assistant_output", "role": "assistant", "content": "deployed"},
    ]
    text, _ = summarize_with_fallback(ExtractiveSummarizer(), events, max_tokens=300)
    assert SECRET not in text and "deploy" in text


def test_the_tui_masks_secrets_unless_asked_to_reveal(tmp_path: Path) -> None:
    from inspector.safe_text import mask_secrets, one_line, safe_text, visible
    from inspector.tui.launch import create_app

    root = tmp_path / "m"
    _session_with_secrets(root).close()
    before = mask_secrets(False)
    try:
        assert visible(f"k={SECRET}") == f"k={SECRET}", "the command line shows text as is"
        create_app(root, config=small_config(), watch=False)
        assert SECRET not in one_line(f"OPENAI_API_KEY={SECRET}", 200)
        assert SECRET not in safe_text(json.dumps({"content": f"x {SECRET}"})).plain
        create_app(root, config=small_config(), watch=False, reveal_secrets=True)
        assert SECRET in one_line(f"OPENAI_API_KEY={SECRET}", 200)
        create_app(root, config=small_config(redact_secrets=False), watch=False)
        assert SECRET in visible(SECRET)
    finally:
        mask_secrets(before)


async def test_the_tui_screen_shows_no_secret_and_reveals_them_when_asked(tmp_path: Path) -> None:
    """Rows, the event detail and the Summary tab of a session whose tool output held keys."""
    from inspector.safe_text import mask_secrets
    from inspector.tui.widgets.event_detail import EventDetail
    from inspector.tui.widgets.hot_window import HotWindow
    from tests.helpers.tui import SIZE, started, text_in

    root = tmp_path / "m"
    mm = _session_with_secrets(root)
    mm.append({"type": "tool_result", "name": "bash", "tool_call_id": "c5", "content": SECRET})
    mm.close()
    before = mask_secrets(False)
    try:
        for reveal in (False, True):
            async with started(root, reveal_secrets=reveal, size=SIZE) as (app, _pilot):
                hot = app.query_one(HotWindow)
                shown = text_in(app.screen) + "".join(
                    r.preview for r in hot.snapshot.rows[: hot.snapshot.length]
                )
                shown += str(app.query_one(EventDetail).query_one("#detail-body").render())
                assert (SECRET in shown) is reveal, shown[-400:]
                if not reveal:
                    assert "sk-…[redacted]" in shown
    finally:
        mask_secrets(before)
