"""The summarizer's HTTP transport: one wall-clock deadline per call, no redirects.

A socket timeout bounds each read, not the call: a server that dribbles one byte every half
second never trips it, and a pass ran for minutes past `timeout_seconds`. Here a timer shuts
the connection's socket down when the call's deadline passes, whatever phase it is in
(connect, headers, body), and the reading side then fails at once.

Redirects are never followed: urllib would carry the `Authorization` header to whatever host
a 3xx names, handing the API key to it. A redirect is an error naming the status instead.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
import urllib.parse
import urllib.request
from typing import Any

_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


class RedirectRefused(Exception):
    """The server answered with a 3xx; `code` is its status."""

    def __init__(self, code: int) -> None:
        super().__init__(f"HTTP {code} redirect")
        self.code = code


class WallClock:
    """A deadline for one call: `expired` once it passed, every connection opened under it
    shut down at that moment. Use as a context manager around the whole call."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._guard = threading.Lock()
        self._timer = threading.Timer(max(0.0, seconds), self._expire)
        self._timer.daemon = True

    def __enter__(self) -> WallClock:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        with self._guard:
            if self.expired:
                _shut(sock)
            else:
                self._sockets.append(sock)

    def _expire(self) -> None:
        with self._guard:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> None:
        raise RedirectRefused(code)


def _connection_class(base: type[http.client.HTTPConnection], clock: WallClock) -> Any:
    class Watched(base):  # type: ignore[valid-type, misc]
        def connect(self) -> None:
            super().connect()
            clock.watch(self.sock)

    return Watched


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, clock: WallClock) -> None:
        super().__init__()
        self._conn = _connection_class(http.client.HTTPConnection, clock)

    def http_open(self, req: Any) -> Any:
        return self.do_open(self._conn, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, clock: WallClock) -> None:
        super().__init__()
        self._conn = _connection_class(http.client.HTTPSConnection, clock)

    def https_open(self, req: Any) -> Any:
        return self.do_open(self._conn, req, context=getattr(self, "_context", None))


def opener_for(url: str, clock: WallClock) -> urllib.request.OpenerDirector:
    """An opener whose connections `clock` shuts at its deadline and which follows no
    redirect. Loopback servers are reached directly even when an HTTP proxy is configured."""
    handlers: list[Any] = [_NoRedirect(), _HTTPHandler(clock), _HTTPSHandler(clock)]
    host = urllib.parse.urlsplit(url).hostname or ""
    if host in _LOOPBACK_HOSTS or host.startswith("127."):
        handlers.append(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener(*handlers)


__all__ = ["RedirectRefused", "WallClock", "opener_for"]
