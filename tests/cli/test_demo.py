"""The demo agent: what `session-inspector demo` promises a newcomer, checked on the files."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.manager import MemoryManager
from inspector.demo import SCENARIOS, DemoPlayer, demo_config, scenario_names
from inspector.demo.content import phone_png
from tests.helpers.cli import json_out, run_cli

PNG_BASE64_MAGIC = "iVBORw0KGgo"  # base64 of the PNG signature
CJK = re.compile("[\u4e00-\u9fff\u3040-\u30ff]")


def index_entries(session: Path) -> list[dict[str, Any]]:
    path = session / "chunks" / "index.yaml"
    if not path.exists():
        return []
    return list(yaml.safe_load(path.read_text(encoding="utf-8"))["chunks"])


def jsonl_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def all_events(session: Path) -> list[dict[str, Any]]:
    events = jsonl_events(session / "events.jsonl")
    for chunk in sorted((session / "chunks").glob("*.jsonl")):
        events += jsonl_events(chunk)
    return events


def play(root: Path, scenario: str, **kwargs: Any) -> DemoPlayer:
    manager = MemoryManager(root, demo_config())
    player = DemoPlayer(manager, scenario, **kwargs)
    try:
        player.play()
    finally:
        manager.close()
    return player


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One `demo --no-tui` run of the default scenario, as a newcomer would start it."""
    cwd = tmp_path_factory.mktemp("tour")
    root = cwd / "memory"
    proc = run_cli(["demo", "--no-tui", "--memory-dir", root, "--json"], cwd=cwd)
    data = json_out(proc)
    assert f"demo memory root: {root}" in proc.stderr
    return root, data


def test_tour_prints_its_memory_root_and_plays_to_the_end(
    tour: tuple[Path, dict[str, Any]],
) -> None:
    root, data = tour
    assert data["memory_dir"] == str(root) and data["scenario"] == "tour"
    assert data["maintenance_errors"] == 0
    assert data["count_path"] >= 1 and data["token_path"] >= 1, "both cut paths are shown"
    assert data["rotations"] == 1 and data["recalls"] >= 1


def test_tour_leaves_chunks_a_split_turn_and_an_archive(tour: tuple[Path, dict[str, Any]]) -> None:
    root, _ = tour
    (archive,) = sorted((root / "session_archive").iterdir())
    sessions = [root / "session", archive]
    entries = [e for s in sessions for e in index_entries(s)]
    assert len(entries) >= 3
    assert any((e.get("cut_meta") or {}).get("is_split_turn") is True for e in entries)
    for session in sessions:
        for entry in index_entries(session):
            assert (session / "chunks" / f"{entry['chunk_id']}.jsonl").is_file()
    assert json.loads((archive / "state.json").read_text())["session_id"] == archive.name
    assert index_entries(root / "session"), "the second session compacts too"


def test_tour_overflows_recent_chunks_into_the_rolling_summary(
    tour: tuple[Path, dict[str, Any]],
) -> None:
    root, _ = tour
    (archive,) = sorted((root / "session_archive").iterdir())
    summary = (archive / "summary.md").read_text(encoding="utf-8")
    rolling = summary.split("## Rolling Summary", 1)[1].split("## Recent Chunks", 1)[0]
    assert rolling.strip(), "the Rolling Summary holds folded chunk summaries"
    recent = summary.split("## Recent Chunks", 1)[1]
    assert recent.count("- **") == demo_config().summary_max_chunks
    assert "- **chunk_0001**" in (archive / "summary_archive.md").read_text(encoding="utf-8")


def test_tour_pins_the_root_request(tour: tuple[Path, dict[str, Any]]) -> None:
    root, _ = tour
    (archive,) = sorted((root / "session_archive").iterdir())
    hot = jsonl_events(archive / "events.jsonl")
    assert hot[0]["type"] == "user_input"
    assert hot[0]["content"] == "Turn on Wi-Fi and connect to HomeNet."
    chunked = [e for c in (archive / "chunks").glob("*.jsonl") for e in jsonl_events(c)]
    assert hot[0]["id"] not in {e["id"] for e in chunked}


def test_tour_screenshots_are_scrubbed_everywhere(tour: tuple[Path, dict[str, Any]]) -> None:
    root, _ = tour
    for path in root.rglob("*"):
        if path.is_file():
            assert PNG_BASE64_MAGIC not in path.read_text(encoding="utf-8", errors="replace"), path
    shots = [
        e
        for session in [root / "session", *(root / "session_archive").iterdir()]
        for e in all_events(session)
        if e.get("type") == "tool_result" and e.get("name") in ("screenshot", "capture_screen")
    ]
    assert len(shots) >= 5
    for event in shots:
        assert event["meta"]["scrubbed"] is True
        content = event["content"]
        content = json.loads(content) if isinstance(content, str) else content
        assert "data" not in content and content["format"] == "png" and content["width"] == 72


def test_tour_has_cjk_text_and_parallel_tool_calls(tour: tuple[Path, dict[str, Any]]) -> None:
    root, _ = tour
    sessions = [root / "session", *(root / "session_archive").iterdir()]
    events = [e for s in sessions for e in all_events(s)]
    assert any(isinstance(e.get("content"), str) and CJK.search(e["content"]) for e in events)
    types = [e["type"] for e in events]
    for kind in ("screen_context", "system_event", "role_output", "tool_call", "tool_result"):
        assert kind in types
    pairs = list(itertools.pairwise(types))
    assert ("tool_call", "tool_call") in pairs, "parallel calls: two calls before their results"


def test_tour_status_via_the_cli(tour: tuple[Path, dict[str, Any]]) -> None:
    root, _ = tour
    data = json_out(run_cli(["--memory-dir", root, "status", "--json"], cwd=root.parent))
    assert data["chunk_count"] >= 1 and data["pending_count"] == 0
    assert len(data["archives"]) == 1 and data["archives"][0]["chunk_count"] >= 3


def test_demo_screenshots_are_real_pngs() -> None:
    import struct
    import zlib

    png = phone_png(3)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (72, 160)
    idat_len = struct.unpack(">I", png[33:37])[0]
    raw = zlib.decompress(png[41 : 41 + idat_len])
    assert len(raw) == height * (1 + 3 * width)


def test_fresh_demo_writes_its_config_where_later_commands_find_it(tmp_path: Path) -> None:
    proc = run_cli(
        ["demo", "--no-tui", "--scenario", "cjk", "--json"],
        cwd=tmp_path,
        env={"TMPDIR": str(tmp_path)},
    )
    root = Path(json_out(proc)["memory_dir"])
    assert root.parent.parent == tmp_path and root.parent.name.startswith("session-inspector-demo-")
    assert (root.parent / "config" / "memory" / "extraction.yaml").is_file()
    status = json_out(run_cli(["--memory-dir", root, "status", "--json"], cwd=tmp_path))
    assert status["context_window"] == demo_config().context_window


def test_demo_into_a_given_root_writes_no_config_beside_it(tmp_path: Path) -> None:
    """A config in M/../config would also be that of every sibling root (an agent's own
    ./memory next to ./demo-mem), so the demo leaves it alone and says so."""
    root = tmp_path / "demo-mem"
    proc = run_cli(
        ["demo", "--no-tui", "--scenario", "cjk", "--memory-dir", root, "--json"], cwd=tmp_path
    )
    assert "later commands on it use the defaults unless given --config" in proc.stderr
    assert not (tmp_path / "config").exists()


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s != "long"])
def test_every_scenario_runs_to_the_end(tmp_path: Path, scenario: str) -> None:
    player = play(tmp_path / "m", scenario)
    stats = player.stats
    assert player.finished and stats.maintenance_errors == 0
    assert stats.compactions >= 1 and stats.recalls >= 1
    if scenario == "split-turn":
        assert stats.split_turns >= 2
    if scenario == "cjk":
        summaries = "".join(e["summary"] for e in index_entries(tmp_path / "m" / "session"))
        assert CJK.search(summaries), "CJK text reaches the chunk summaries"


def test_long_scenario_small(tmp_path: Path) -> None:
    player = play(tmp_path / "m", "long", events=600)
    stats = player.stats
    assert player.finished and stats.maintenance_errors == 0
    assert 600 <= stats.events_appended <= 610
    assert stats.compactions >= 3
    hot = jsonl_events(tmp_path / "m" / "session" / "events.jsonl")
    assert len(hot) >= 120, "the last run is still open: a big hot window"


@pytest.mark.extended  # 3-5 s: keeps the README's pytest -q near 3 minutes
def test_long_scenario_default_size(tmp_path: Path) -> None:
    player = play(tmp_path / "m", "long")
    assert player.stats.events_appended >= 30_000
    assert player.stats.compactions >= 20
    kept = jsonl_events(tmp_path / "m" / "session" / "events.jsonl")
    chunked = sum(e["event_count"] for e in index_entries(tmp_path / "m" / "session"))
    synthetic = sum(1 for e in kept if (e.get("meta") or {}).get("synthetic"))
    assert len(kept) - synthetic + chunked >= player.stats.events_appended


def test_crash_leaves_pending_evidence_that_repair_consumes(tmp_path: Path) -> None:
    root = tmp_path / "m"
    player = play(root, "crash")
    assert player.stats.crashes == 1 and player.stats.pending_recalled >= 1
    assert list((root / "session" / "chunks" / "pending").glob("*.jsonl"))
    status = json_out(run_cli(["--memory-dir", root, "status", "--json"], cwd=tmp_path))
    assert status["pending_count"] == 1
    query = player.agent.pending_query()
    assert query
    recall = json_out(run_cli(["--memory-dir", root, "recall", query, "--json"], cwd=tmp_path))
    assert "pending" in {hit["source"] for hit in recall["results"]}
    assert recall["pending_chunks_recalled"] >= 1
    repaired = json_out(run_cli(["--memory-dir", root, "repair", "--json"], cwd=tmp_path))
    assert sum(repaired["repaired"].values()) >= 1
    status = json_out(run_cli(["--memory-dir", root, "status", "--json"], cwd=tmp_path))
    assert status["pending_count"] == 0
    recall = json_out(run_cli(["--memory-dir", root, "recall", query, "--json"], cwd=tmp_path))
    assert {hit["source"] for hit in recall["results"]} == {"active"}
    assert recall["pending_chunks_recalled"] == 0


def _stable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("id", "ts")} for e in events]


@pytest.mark.parametrize("scenario", ["cjk", "tour"])
def test_same_scenario_same_files(tmp_path: Path, scenario: str) -> None:
    first = play(tmp_path / "a", scenario)
    second = play(tmp_path / "b", scenario)
    assert first.stats.to_json() == second.stats.to_json()
    a, b = tmp_path / "a" / "session", tmp_path / "b" / "session"
    assert _stable(all_events(a)) == _stable(all_events(b))
    assert [(e["chunk_id"], e["event_count"]) for e in index_entries(a)] == [
        (e["chunk_id"], e["event_count"]) for e in index_entries(b)
    ]


def test_steps_is_one_shared_iterator(tmp_path: Path) -> None:
    manager = MemoryManager(tmp_path / "m", demo_config())
    player = DemoPlayer(manager, "cjk")
    first = next(player.steps())
    assert first.kind == "scenario"
    second = next(player.steps())
    third = next(player.steps())
    assert (second.kind, third.kind) == ("note", "begin_run"), "each next() resumes the play"
    seen = [step.kind for step in player.steps()]
    manager.close()
    assert player.finished and seen[-1] == "done"
    assert {"prompt_tokens", "append", "commit", "maintenance", "recall"} <= set(seen)
    assert list(player.steps()) == []


def test_unknown_scenario_is_bad_input(tmp_path: Path) -> None:
    from core.errors import BadInputError

    with pytest.raises(BadInputError, match="unknown demo scenario"):
        DemoPlayer(MemoryManager(tmp_path / "m", demo_config()), "nope")
    assert scenario_names() == list(SCENARIOS)


def test_a_skipped_pass_never_reads_as_at_the_limit() -> None:
    """69.8 % of the window is below a 70 % limit: the demo's line must not say "70% < 70%"."""
    from core.compaction.trigger import should_compress
    from core.config import CompactionConfig
    from core.maintenance.compaction_pass import PassResult
    from inspector.demo.agent import _skip_reason

    config = CompactionConfig(context_window=6000, compress_at_percent=70, reserve_tokens=100)
    decision = should_compress(prompt_tokens=4190, event_count=10, config=config)
    result = PassResult(compacted=False, reason="not needed: …", trigger=decision)
    assert _skip_reason(result) == "not needed: prompt 4,190 tokens, 69% of 6,000 < 70%"
