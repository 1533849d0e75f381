"""Real OS processes on one memory root with the real lock (design: Concurrency)."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from core.config import CompactionConfig
from core.manager import MemoryManager
from tests.helpers.invariants import assert_each_once, indexed_chunk_ids
from tests.helpers.mm_child_run import spawn_mm_child

CONFIG: dict[str, Any] = {
    "count_compress_after_events": 20,
    "hot_window_events": 5,
    "keep_recent_tokens": 100_000,
}


def spawn(root: Path, *args: str) -> subprocess.Popen[str]:
    """tests/helpers/mm_child.py running one command on `root` with this module's CONFIG."""
    return spawn_mm_child(root, CONFIG, *args)


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> Any:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return json.loads(out)


class HeldModel:
    """An OpenAI-compatible server on 127.0.0.1 that holds each request until released."""

    def __init__(self) -> None:
        self.received = threading.Event()
        self.release = threading.Event()
        held = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(length)
                held.received.set()
                held.release.wait(90)
                body = json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": "Goal: held"}}]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def held_model() -> Iterator[HeldModel]:
    model = HeldModel()
    yield model
    model.close()


def seed(root: Path, turns: int = 6) -> list[str]:
    mm = MemoryManager(root, CompactionConfig(**CONFIG))
    ids = []
    for n in range(turns):
        ids.append(mm.begin_run(f"seed turn {n}")["id"])
        ids.append(mm.append({"type": "assistant_output", "content": f"answer {n}"})["id"])
        ids.append(mm.append({"type": "assistant_output", "content": f"more {n}"})["id"])
    return ids


def test_appends_from_other_processes_never_wait_for_the_summarizer(
    tmp_path: Path, held_model: HeldModel
) -> None:
    root = tmp_path / "memory"
    ids = seed(root)
    compactor = spawn(root, "save-openai", held_model.url)
    assert held_model.received.wait(60), "the pass reached the summarizer"
    # The pass is now parked in the model call, with the lock released.
    writers = [spawn(root, "append", f"w{i}", "40") for i in range(3)]
    for w in writers:
        ids += finish(w, timeout=60)["ids"]
    assert compactor.poll() is None, "the writers finished while the summarizer still held"
    held_model.release.set()
    result = finish(compactor)
    assert result["compacted"] is True, result
    assert result["carried_over_count"] == 120, "appends made during the pass are kept"
    assert_each_once(root, ids)


def test_two_processes_never_compact_the_same_snapshot(
    tmp_path: Path, held_model: HeldModel
) -> None:
    root = tmp_path / "memory"
    ids = seed(root)
    first = spawn(root, "save-openai", held_model.url)
    assert held_model.received.wait(60)
    second = finish(spawn(root, "save", "--force"))
    assert second["compacted"] is False and second["reason"] == "busy"
    held_model.release.set()
    assert finish(first)["compacted"] is True
    assert len(indexed_chunk_ids(root / "session")) == 1
    assert_each_once(root, ids)


def test_writers_and_maintainers_together_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    ids = seed(root, turns=2)
    writers = [spawn(root, "append", f"w{i}", "150") for i in range(3)]
    maintainers = [spawn(root, "saves", "15") for _ in range(2)]
    for w in writers:
        ids += finish(w)["ids"]
    results = [r for m in maintainers for r in finish(m)]
    assert any(r["compacted"] for r in results)
    final = MemoryManager(root, CompactionConfig(**CONFIG)).save(force=True)
    assert final.reason != "busy"
    assert_each_once(root, ids)
    assert not list((root / "session" / "chunks" / "pending").glob("*"))


def test_rotation_during_a_pass_abandons_it(tmp_path: Path, held_model: HeldModel) -> None:
    root = tmp_path / "memory"
    ids = seed(root)
    compactor = spawn(root, "save-openai", held_model.url)
    assert held_model.received.wait(60)
    rotated = finish(spawn(root, "rotate"))
    assert rotated["closed_session_id"]
    held_model.release.set()
    result = finish(compactor)
    assert result["compacted"] is False and result["abandoned"] is True
    assert "rotated" in result["reason"]
    assert_each_once(root, ids)
    assert (
        not list((root / "session" / "chunks" / "pending").glob("*"))
        if (root / "session" / "chunks" / "pending").exists()
        else True
    )


def test_rotation_during_a_pass_over_a_long_history_abandons_it(
    tmp_path: Path, held_model: HeldModel
) -> None:
    """The pass reads old summaries out of index.yaml lazily (core.index.catalog); once a rotation
    has moved that file into the archive the pass must still abandon cleanly (the soak found
    it failing with "cannot read .../index.yaml")."""
    root = tmp_path / "memory"
    mm = MemoryManager(root, CompactionConfig(**CONFIG, summary_max_chunks=2))
    ids: list[str] = []
    for n in range(5):
        ids += seed(root, turns=4)
        assert mm.save(force=True).compacted, n
    ids += seed(root, turns=4)
    compactor = spawn_mm_child(
        root, {**CONFIG, "summary_max_chunks": 2}, "save-openai", held_model.url
    )
    assert held_model.received.wait(60)
    assert finish(spawn(root, "rotate"))["closed_session_id"]
    held_model.release.set()
    result = finish(compactor)
    assert result["compacted"] is False and result["abandoned"] is True, result
    assert "rotated" in result["reason"]
    assert_each_once(root, ids)
    # Its pending evidence went with the session and was undone there (contract §8).
    archived = list((root / "session_archive").iterdir())
    assert len(archived) == 1
    assert not list(archived[0].glob("chunks/pending/*"))
