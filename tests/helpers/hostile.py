"""Identifiers an attacker or a broken writer could put where a chunk or session id belongs:
every id check (store, chunks, CLI) must refuse each of them."""

from __future__ import annotations

HOSTILE_IDS: list[object] = [
    "/etc/passwd",
    "..",
    ".",
    "a/b",
    "a\\b",
    "x\x00y",
    "a" * 10_000,
    ".hidden",
    "ok\n",
    "",
    " chunk",
    None,
    5,
]
