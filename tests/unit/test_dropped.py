"""What a pass dropped (core/compaction/dropped.py, pure; core.timeline.dropped_for_chunk, the
shell)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.compaction.dropped import dropped_for, facts_of
from core.events import Event
from core.manager import MemoryManager
from core.timeline import dropped_for_chunk
from inspector.cli.commands import main
from tests.helpers.memory import fill, small_config


def ev(eid: str, etype: str, content: object, **extra: object) -> Event:
    role = {"user_input": "user", "tool_result": "tool"}.get(etype, "assistant")
    return {"id": eid, "type": etype, "role": role, "content": content, **extra}


CHUNK = [
    ev(
        "u1",
        "user_input",
        "Fix the upload in src/app/upload.py. Never run migrations on prod. "
        "Use httpx instead of requests.",
    ),
    ev("a1", "tool_call", None, name="shell", arguments={"cmd": "pytest tests/test_upload.py"}),
    ev(
        "r1",
        "tool_result",
        "collected 12 items\nFAILED test_upload.py::test_big - TimeoutError: took 2500 ms\n",
        name="shell",
    ),
    ev("a2", "assistant_output", "The limit is 10 MB; UploadSession retries after 250 ms."),
]


def test_facts_by_kind() -> None:
    facts = {(f.kind, f.text) for f in facts_of(CHUNK)}
    assert ("path", "src/app/upload.py") in facts
    assert ("constraint", "Never run migrations on prod.") in facts
    assert ("constraint", "Use httpx instead of requests.") in facts
    assert any(k == "error" and "TimeoutError" in t for k, t in facts)
    assert ("number", "10 MB") in facts and ("number", "250 ms") in facts
    assert ("identifier", "UploadSession") in facts


def test_carried_facts_are_not_dropped_and_the_rest_is_ranked() -> None:
    after = [
        "## Rolling Summary\n- fixed upload in src/app/upload.py; limit 10MB",
        "user: never run the migrations on prod",
    ]
    report = dropped_for("chunk_0001", CHUNK, after)
    dropped = [(f.kind, f.text) for f in report.dropped]
    assert ("path", "src/app/upload.py") not in dropped
    assert ("number", "10 MB") not in dropped  # carried without the space
    assert ("constraint", "Never run migrations on prod.") not in dropped
    assert dropped[0] == ("constraint", "Use httpx instead of requests.")
    kinds = [k for k, _ in dropped]
    order = ["constraint", "error", "path", "identifier", "number"]
    assert kinds == sorted(kinds, key=order.index)
    assert ("number", "250 ms") in dropped
    doc = report.to_json()
    assert doc["dropped_count"] == len(dropped) and doc["carried"] == report.carried
    first = doc["dropped"]["constraint"][0]
    assert first["event_ids"] == ["u1"] and first["from_user"] is True


def test_dropped_for_a_real_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "m"
    mm = MemoryManager(root, small_config())
    mm.begin_run("Deploy with the blue pipeline. Don't touch config/prod.yaml ever.")
    fill(mm, 3, start=1)
    mm.build_prompt("sys", "t")
    assert mm.save().compacted
    mm.build_prompt("sys", "t")
    report = dropped_for_chunk(mm.paths, "chunk_0001")
    assert report.sources["summary"] == "summary.md as the pass left it"
    assert report.sources["hot_window"].startswith("the hot window of call 2")
    # The root is pinned: its constraint is in the hot window after the pass, never dropped.
    assert all("prod.yaml" not in f.text for f in report.dropped)
    capsys.readouterr()
    assert main(["--memory-dir", str(root), "dropped", "chunk_0001", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["chunk_id"] == "chunk_0001" and doc["facts"] >= 1
    assert main(["--memory-dir", str(root), "dropped", "chunk_0001"]) == 0
    assert "chunk_0001:" in capsys.readouterr().out
