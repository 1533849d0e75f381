"""OpenAISummarizer against a real chat-completions server on 127.0.0.1 (contract §4, §8)."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from core.config import CompactionConfig, SummarizerConfig
from core.events import Event
from core.manager import MemoryManager
from core.summarizer import (
    OpenAISummarizer,
    SummarizerError,
    summarize_with_fallback,
)

KEY_ENV = "SESSION_INSPECTOR_TEST_KEY"
SECRET = "sk-test-9f8e7d6c5b4a"

EVENTS: list[Event] = [
    {"type": "user_input", "role": "user", "content": "Find the wifi password."},
    {"type": "tool_call", "name": "read_label", "tool_call_id": "c1", "arguments": {"x": 1}},
    {"type": "tool_result", "name": "read_label", "tool_call_id": "c1", "content": "hunter2"},
]


@dataclass
class FakeServer:
    """Speaks POST /v1/chat/completions; `mode` picks the reply."""

    mode: str = "ok"
    reply: str = "Goal:\n- Find the wifi password."
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def _handler(state: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            state.requests.append(
                {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
            )
            if state.mode == "slow":
                state.release.wait(10)
            if state.mode == "500":
                self._send(500, f"internal error, your key was {self.headers.get('Authorization')}")
                return
            if state.mode == "badjson":
                self._send(200, "{not json")
                return
            if state.mode == "nochoices":
                self._send(200, json.dumps({"id": "x", "object": "chat.completion"}))
                return
            content = "   " if state.mode == "empty" else state.reply
            reply = {
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]
            }
            self._send(200, json.dumps(reply))

        def _send(self, status: int, text: str) -> None:
            data = text.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (timeout test)

    return Handler


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_success_request_shape(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    summarizer = OpenAISummarizer(server.base_url + "/", "tiny-model", api_key_env=KEY_ENV)
    text = summarizer.summarize(
        EVENTS,
        previous_summary="[chunk_0001] Goal:\n- set up the router",
        focus="keep the password verbatim",
        max_tokens=200,
    )
    assert text == "Goal:\n- Find the wifi password."
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert request["headers"]["Content-Type"] == "application/json"
    body = request["body"]
    assert body["model"] == "tiny-model"
    assert body["max_tokens"] == 200 and body["temperature"] == 0
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    labels = ("Goal:", "Constraints & Preferences:", "Progress:", "Key Decisions:",
              "Next Steps:", "Critical Context:")  # fmt: skip
    positions = [system["content"].index(label) for label in labels]
    assert positions == sorted(positions), "the same structure, in order, as the extractive one"
    assert "- Request:" in system["content"] and "edited:" in system["content"]
    assert "verbatim" in system["content"]
    # The focus is an instruction to the model (system message), not event text to summarise.
    assert "keep the password verbatim" in system["content"]
    assert "keep the password verbatim" not in user["content"]
    # The previous checkpoint is passed for the model to update, not to restart from scratch.
    assert "Update it" in user["content"]
    assert "[chunk_0001] Goal:\n- set up the router" in user["content"]
    assert "Find the wifi password." in user["content"]
    assert "[tool_result read_label #c1] hunter2" in user["content"]


def test_turn_prefix_prompt_and_no_key(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    summarizer = OpenAISummarizer(server.base_url, "m", api_key_env=KEY_ENV)
    summarizer.summarize(EVENTS, kind="turn_prefix")
    (request,) = server.requests
    assert "Authorization" not in request["headers"]
    system = request["body"]["messages"][0]["content"]
    assert "Context for the retained suffix:" in system and "Original request:" in system
    assert "Rolling Summary" not in request["body"]["messages"][1]["content"]


def test_requests_and_edited_paths_are_handed_over_verbatim(server: FakeServer) -> None:
    events: list[Event] = [
        {"type": "user_input", "role": "user", "content": "Rename the session loader."},
        {"type": "tool_call", "name": "edit", "tool_call_id": "e1",
         "arguments": {"path": "packages/coding-agent/src/core/agent-session.ts"}},
        {"type": "tool_result", "name": "edit", "tool_call_id": "e1", "content": "ok"},
    ]  # fmt: skip
    OpenAISummarizer(server.base_url, "m").summarize(events, max_tokens=100)
    user = server.requests[0]["body"]["messages"][1]["content"]
    assert "- Request: Rename the session loader." in user
    assert "  edited: packages/coding-agent/src/core/agent-session.ts" in user


def test_focus_echoed_by_the_model_is_not_stored(server: FakeServer) -> None:
    server.reply = "Focus: keep file paths\nGoal:\n- Find the wifi password."
    text = OpenAISummarizer(server.base_url, "m").summarize(EVENTS, focus="keep file paths")
    assert text == "Goal:\n- Find the wifi password."


def test_reply_cleaned_and_bounded(server: FakeServer) -> None:
    server.reply = "\x1b[2JGoal:\n- " + "word " * 500
    text = OpenAISummarizer(server.base_url, "m").summarize(EVENTS, max_tokens=50)
    assert text.startswith("[2JGoal:") and text.endswith("…")
    assert len(text) <= 200


def test_input_is_trimmed_to_the_budget(server: FakeServer) -> None:
    many: list[Event] = [
        {"type": "assistant_output", "content": f"step {i} " + "x" * 300} for i in range(400)
    ]
    OpenAISummarizer(server.base_url, "m").summarize(many, max_tokens=100)
    user = server.requests[0]["body"]["messages"][1]["content"]
    assert "events omitted" in user
    assert "step 0 " in user and "step 399 " in user
    assert len(user) < 4 * 4 * 100 * 2


def expect_error(summarizer: OpenAISummarizer, *fragments: str) -> str:
    with pytest.raises(SummarizerError) as info:
        summarizer.summarize(EVENTS)
    message = str(info.value)
    assert "\n" not in message
    assert SECRET not in message
    for fragment in fragments:
        assert fragment in message
    return message


def test_slow_server_times_out(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    server.mode = "slow"
    summarizer = OpenAISummarizer(server.base_url, "m", KEY_ENV, timeout_seconds=0.5)
    expect_error(summarizer, "no reply", "within 0.5 s", "/v1/chat/completions")
    server.release.set()


def test_http_500(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    server.mode = "500"
    message = expect_error(OpenAISummarizer(server.base_url, "m", KEY_ENV), "HTTP 500")
    assert message == (
        f"openai summarizer: HTTP 500 from http://127.0.0.1:{server.port}/v1/chat/completions"
    )


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [("badjson", "not JSON"), ("nochoices", "choices[0]"), ("empty", "empty reply")],
)
def test_bad_replies(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch, mode: str, fragment: str
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    server.mode = mode
    expect_error(OpenAISummarizer(server.base_url, "m", KEY_ENV), fragment)


def test_connection_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    summarizer = OpenAISummarizer(f"http://127.0.0.1:{port}/v1", "m", KEY_ENV, 2.0)
    expect_error(summarizer, "cannot reach", f"127.0.0.1:{port}")


def test_fallback_on_server_failure_keeps_key_out_of_logs(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    server.mode = "500"
    caplog.set_level(logging.DEBUG)
    text, backend = summarize_with_fallback(
        OpenAISummarizer(server.base_url, "m", KEY_ENV), EVENTS, max_tokens=200
    )
    assert backend == "extractive-fallback"
    assert text.startswith("Goal:\n- Find the wifi password.")
    assert "HTTP 500" in caplog.text
    assert SECRET not in caplog.text


def _openai_manager(server: FakeServer, tmp_path: Path) -> MemoryManager:
    """A manager on tmp_path/memory whose passes (keeping 60 tokens) ask the fake server."""
    cfg = CompactionConfig(
        keep_recent_tokens=60,
        summarizer=SummarizerConfig(
            backend="openai", base_url=server.base_url, model="m", max_summary_tokens=300
        ),
    )
    return MemoryManager(tmp_path / "memory", cfg)


def test_a_pass_hands_focus_and_previous_summary_to_the_model_and_stores_neither_focus(
    server: FakeServer, tmp_path: Path
) -> None:
    mm = _openai_manager(server, tmp_path)
    mm.begin_run("Root: set up the router")
    for n in range(3):
        server.reply = f"Goal:\n- run {n}\nProgress:\n- Request: run {n}\n  outcome: done {n}"
        mm.begin_run(f"Run {n}: change the wifi channel to {n + 1}")
        mm.append({"type": "tool_call", "name": "edit", "tool_call_id": f"e{n}",
                   "arguments": {"path": f"etc/wifi/channel_{n}.conf"}})  # fmt: skip
        mm.append({"type": "tool_result", "name": "edit", "tool_call_id": f"e{n}",
                   "content": "ok " + "." * 300})  # fmt: skip
        mm.begin_run(f"Next step {n}")
        result = mm.save(force=True, focus="keep the wifi channel numbers")
        assert result.compacted and result.summary_backend == "openai", result.reason
    first, second = server.requests[0]["body"], server.requests[1]["body"]
    system, user = first["messages"]
    assert "keep the wifi channel numbers" in system["content"]
    assert "keep the wifi channel numbers" not in user["content"]
    assert "edited: etc/wifi/channel_0.conf" in user["content"]
    assert "Update it" not in user["content"], "nothing to update before the first chunk"
    assert "Update it" in second["messages"][1]["content"]
    assert "- Request: run 0\n  outcome: done 0" in second["messages"][1]["content"]
    stored = (tmp_path / "memory" / "session" / "summary.md").read_text()
    assert "done 0" in stored and "keep the wifi" not in stored and "Focus" not in stored


def test_a_pass_sends_the_server_no_secret_and_stores_none_it_echoes(
    server: FakeServer, tmp_path: Path
) -> None:
    """Issue 20: keys an agent saw in tool output never reach the summarizer server, and a
    model echoing one (from an older summary) does not put it in summary.md."""
    key, aws = "sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345", "AKIAIOSFODNN7EXAMPLE"
    server.reply = f"Goal:\n- deploy\nProgress:\n- Request: deploy\n  outcome: used {key}"
    mm = _openai_manager(server, tmp_path)
    mm.begin_run("Root: deploy the service")
    output = f"OPENAI_API_KEY={key}\nAWS_ACCESS_KEY_ID={aws}\n" + "." * 300
    mm.append({"type": "tool_call", "name": "bash", "tool_call_id": "c1",
               "arguments": {"command": f"curl -H 'Authorization: Bearer {key}' api"}})  # fmt: skip
    mm.append({"type": "tool_result", "name": "bash", "tool_call_id": "c1",
               "content": output})  # fmt: skip
    mm.begin_run("Next step")
    result = mm.save(force=True, focus=f"remember {key}")
    assert result.compacted and result.summary_backend == "openai", result.reason
    sent = json.dumps([r["body"] for r in server.requests])
    assert server.requests and key not in sent and aws not in sent
    assert "[redacted" in sent
    stored = (tmp_path / "memory" / "session" / "summary.md").read_text()
    assert key not in stored and "used sk-…[redacted]" in stored
    chunk = next((tmp_path / "memory" / "session" / "chunks").glob("chunk_*.jsonl"))
    assert key in chunk.read_text(), "the events themselves are the lossless record"
