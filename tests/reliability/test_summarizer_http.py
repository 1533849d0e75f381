"""Issue 12 items 6 and 7: the summarizer's HTTP call against hostile 127.0.0.1 servers the
test starts. One wall-clock deadline per call; a redirect never carries the API key."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Generator, Iterator
from typing import Any

import pytest

from core.summarizer import OpenAISummarizer, SummarizerError

EVENTS: list[dict[str, Any]] = [
    {"id": "e1", "type": "user_input", "role": "user", "content": "open the camera app"},
    {"id": "e2", "type": "assistant_output", "role": "assistant", "content": "opened"},
]
REPLY = b'{"choices":[{"message":{"content":"the camera app was opened"}}]}'


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    seen: list[dict[str, str]]


def serve(handler: type[http.server.BaseHTTPRequestHandler]) -> Generator[_Server, None, None]:
    server = _Server(("127.0.0.1", 0), handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def url_of(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


class Dribble(http.server.BaseHTTPRequestHandler):
    """A whole reply, one byte every 0.1 s: no single read ever waits long."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(REPLY)))
        self.end_headers()
        self.dribble(REPLY)

    def dribble(self, data: bytes) -> None:
        """`data` one byte every 0.1 s, until the client hangs up."""
        for i in range(len(data)):
            try:
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.1)  # the hostile server's pace, not a synchronisation


class DribbleHeaders(Dribble):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.dribble(b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 200 + b"\r\n\r\n")


@pytest.fixture
def dribbling() -> Iterator[_Server]:
    yield from serve(Dribble)


@pytest.fixture
def dribbling_headers() -> Iterator[_Server]:
    yield from serve(DribbleHeaders)


@pytest.mark.parametrize("fixture", ["dribbling", "dribbling_headers"])
def test_a_dribbling_server_is_cut_off_at_timeout_seconds(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    server = request.getfixturevalue(fixture)
    summarizer = OpenAISummarizer(url_of(server), "m", timeout_seconds=1.0)
    start = time.monotonic()
    with pytest.raises(SummarizerError, match=r"no reply from .* within 1 s"):
        summarizer.summarize(EVENTS, max_tokens=64)
    assert time.monotonic() - start < 3.0, "the call ran past its deadline"


class Recorder(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        assert isinstance(self.server, _Server)
        self.server.seen.append(dict(self.headers))
        self.send_response(200)
        self.send_header("Content-Length", str(len(REPLY)))
        self.end_headers()
        self.wfile.write(REPLY)


class Redirect(http.server.BaseHTTPRequestHandler):
    location = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(302)
        self.send_header("Location", self.location)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_a_redirect_is_refused_and_the_key_never_reaches_the_other_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEST_SUMMARIZER_KEY", "sk-secret-0123456789")
    other_server = serve(Recorder)
    other = next(other_server)
    monkeypatch.setattr(Redirect, "location", url_of(other) + "/chat/completions")
    first_server = serve(Redirect)
    first = next(first_server)
    try:
        summarizer = OpenAISummarizer(
            url_of(first), "m", api_key_env="TEST_SUMMARIZER_KEY", timeout_seconds=5
        )
        with pytest.raises(SummarizerError, match=r"redirect \(HTTP 302\)") as info:
            summarizer.summarize(EVENTS, max_tokens=64)
        assert "sk-secret" not in str(info.value)
        assert other.seen == [], "the redirect was followed (with the key)"
    finally:
        first_server.close()
        other_server.close()
