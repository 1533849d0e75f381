"""Issue 20, the hostile tester's third round: import, the command line and the TUI's plan
child (holes 3, 4, 5, 9, 10 and 12), each reproduced and what must happen instead.
docs/RELIABILITY.md ("Round three") lists them with these tests."""

from __future__ import annotations

import errno
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.store.session_store
from core.errors import BadInputError
from core.manager import MemoryManager
from core.transcripts.importers import parse_transcript
from tests.helpers.cli import REPO, cli_env
from tests.helpers.paths import TRANSCRIPTS
from tests.helpers.reliability import run_cli
from tests.helpers.tui_fixtures import CONFIG

DATA = TRANSCRIPTS
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters a terminal acts on (newline and tab aside)."""

# --- hole 3 and 12: the TUI's plan child ------------------------------------------------------


def _plan_once(root: Path) -> Any:
    """Start a PlanProcess, plan the session once in it; returns the (open) PlanProcess."""
    from inspector.tui.hot_window_model import HotWindowModel
    from inspector.tui.plan_process import PlanProcess

    snapshot = HotWindowModel(MemoryManager(root, CONFIG, read_only=True).paths.events).poll()
    planner = PlanProcess()
    planner.plan(snapshot.snapshot, CONFIG)
    return planner


def test_hole_3_the_plan_child_never_imports_code_from_the_working_directory(
    basic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `core/` (or `inspector/`) package in the user's folder is neither imported nor run by
    the planning child the TUI starts for big sessions."""
    work = tmp_path / "work"
    marker = tmp_path / "planted-code-ran"
    for package in ("core", "inspector"):
        (work / package).mkdir(parents=True)
        (work / package / "__init__.py").write_text(
            f"open({str(marker)!r}, 'a').write({package!r})\n", encoding="utf-8"
        )
    monkeypatch.chdir(work)
    from inspector.tui.plan_process import PlanProcessError

    failure = None
    try:
        _plan_once(basic).close()  # a plan that comes back was made by our own package
    except PlanProcessError as exc:
        failure = exc
    assert not marker.exists(), f"the plan child ran {marker.read_text()}/__init__.py from cwd"
    assert failure is None, failure


def _state(pid: int) -> str | None:
    """The process's state letter from /proc (Z: a zombie); None once it is gone (reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def test_hole_12_a_killed_plan_child_is_reaped_when_it_dies(basic: Path) -> None:
    planner = _plan_once(basic)
    try:
        pid = planner.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10.0
        while _state(pid) is not None and time.monotonic() < deadline:
            time.sleep(0.02)  # polling for an outcome with a deadline, not a sleep-as-sync
        assert _state(pid) is None, f"the killed plan child {pid} is left a zombie"
    finally:
        planner.close()


# --- hole 4: import is all or nothing ---------------------------------------------------------

OVER_CAP = 10**12 + 1
FIGURES = {
    "pi": ("pi_session.jsonl", r'"input": *\d+'),
    "openai": ("openai_chat.json", r'"prompt_tokens": *\d+'),
    "mini-swe-agent": ("mini_swe_agent.traj.json", r'"prompt_tokens": *\d+'),
}


def _with_figures_over_the_cap(fmt: str, folder: Path) -> Path:
    """The sample transcript with every provider figure set to 10¹² + 1 (an importer that
    checks as it goes has stored the events before the first call by then)."""
    name, pattern = FIGURES[fmt]
    text = (DATA / name).read_text(encoding="utf-8")
    path = folder / name
    path.write_text(
        re.sub(pattern, lambda m: m.group(0).split(":")[0] + f": {OVER_CAP}", text), "utf-8"
    )
    return path


@pytest.mark.parametrize("replay", [False, True], ids=["import", "replay"])
@pytest.mark.parametrize("fmt", sorted(FIGURES))
def test_hole_4_a_figure_over_the_cap_is_refused_before_anything_is_written(
    tmp_path: Path, fmt: str, replay: bool
) -> None:
    source = _with_figures_over_the_cap(fmt, tmp_path)
    root = tmp_path / "memory"
    run = run_cli(root, "import", "--format", fmt, str(source), *(["--replay"] if replay else []))
    assert run.returncode == 2, run.stderr
    assert "prompt size" in run.error_line and "nothing was written" in run.error_line
    assert "Traceback" not in run.stderr
    assert not root.exists(), "the memory root was created for an import that was refused"


def _openai_log(calls: int) -> str:
    """An OpenAI message list: a task, then `calls` replies each with a tool call and its
    result (3 events a call)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the camera crash"}]
    for n in range(calls):
        call = f"call-{n}"
        messages.append(
            {
                "role": "assistant",
                "content": f"step {n}",
                "tool_calls": [
                    {"id": call, "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
                ],
                "usage": {"prompt_tokens": 1000 + 10 * n},
            }
        )
        messages.append({"role": "tool", "tool_call_id": call, "content": f"out {n} " + "x" * 40})
    return json.dumps(messages)


def _events_in(root: Path) -> int:
    path = root / "session" / "events.jsonl"
    if not path.exists():
        return 0
    return sum(1 for line in path.read_bytes().splitlines() if line.strip())


def test_hole_4_out_of_disk_midway_stores_nothing_or_says_exactly_what(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A disk with room for half of a 1,501-event log: before, the first batch of 500 stayed
    stored and the error did not say so (a retry doubled them)."""
    from inspector.cli.commands import main

    log = tmp_path / "log.json"
    log.write_text(_openai_log(500), encoding="utf-8")
    total = 1 + 3 * 500
    root = tmp_path / "memory"
    assert (
        main(["--memory-dir", str(tmp_path / "full"), "import", "--format", "openai", str(log)])
        == 0
    )
    capsys.readouterr()
    room = (tmp_path / "full" / "session" / "events.jsonl").stat().st_size // 2
    real_write_all = core.store.session_store.write_all

    def disk_of(fd: int, payload: Any) -> None:
        nonlocal room
        data = bytes(payload)
        if len(data) > room:
            real_write_all(fd, data[:room])
            room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        room -= len(data)
        real_write_all(fd, data)

    monkeypatch.setattr(core.store.session_store, "write_all", disk_of)
    code = main(["--memory-dir", str(root), "import", "--format", "openai", str(log)])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 1, error
    stored = _events_in(root)
    said = re.search(r"([\d,]+) of ([\d,]+) events", error)
    if said is None:
        assert stored == 0, (
            f"{stored} of {total} events stored, and the error says nothing: {error}"
        )
    else:
        assert (int(said[1].replace(",", "")), int(said[2].replace(",", ""))) == (stored, total)
    assert "No space left on device" in error
    monkeypatch.undo()  # room again: the retry stores every event once
    assert main(["--memory-dir", str(root), "import", "--format", "openai", str(log)]) == 0
    assert _events_in(root) == total


def test_hole_4_a_replay_into_a_root_whose_passes_cannot_run_writes_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, CONFIG)
    mm.append({"type": "user_input", "content": "an earlier session"})
    mm.close()
    index = root / "session" / "chunks" / "index.yaml"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text("version: 1\nchunks: [unclosed\n", encoding="utf-8")
    log = tmp_path / "log.json"
    log.write_text(_openai_log(60), encoding="utf-8")
    before = (root / "session" / "events.jsonl").read_bytes()
    run = run_cli(root, "import", "--format", "openai", str(log), "--replay")
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert (root / "session" / "events.jsonl").read_bytes() == before


def test_hole_4_a_replay_whose_pass_fails_midway_says_exactly_what_was_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.errors import StoreError
    from inspector.cli.commands import main

    (tmp_path / "config" / "memory").mkdir(parents=True)
    (tmp_path / "config" / "memory" / "extraction.yaml").write_text(
        "session_compaction:\n  context_window: 1250\n  reserve_tokens: 0\n"
        "  keep_recent_tokens: 200\n  hot_window_events: 8\n",
        encoding="utf-8",
    )
    root = tmp_path / "memory"
    log = tmp_path / "log.json"
    log.write_text(_openai_log(40), encoding="utf-8")
    real_save = MemoryManager.save
    passes = 0

    def failing_second_pass(self: MemoryManager, *args: Any, **kwargs: Any) -> Any:
        nonlocal passes
        result = real_save(self, *args, **kwargs)
        if result.compacted:
            passes += 1
            if passes == 2:
                raise StoreError("cannot write chunks/index.yaml: No space left on device")
        return result

    monkeypatch.setattr(MemoryManager, "save", failing_second_pass)
    code = main(["--memory-dir", str(root), "import", "--format", "openai", str(log), "--replay"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 1, error
    said = re.search(r"([\d,]+) of ([\d,]+) events", error)
    assert said is not None, f"the error does not say what was stored: {error}"
    assert int(said[1]) == _transcript_events_stored(root)
    assert int(said[2]) == 1 + 3 * 40


def _transcript_events_stored(root: Path) -> int:
    """Distinct ids of the transcript's events (they carry meta.source) in the hot window and
    every chunk file."""
    session = root / "session"
    ids: set[str] = set()
    for path in [session / "events.jsonl", *sorted((session / "chunks").rglob("*.jsonl"))]:
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line) if line.strip() else {}
            if "source" in (event.get("meta") or {}):
                ids.add(event["id"])
    return len(ids)


# --- hole 5: linear-time action blocks --------------------------------------------------------


def _mini_log(reply: str) -> str:
    return json.dumps(
        {
            "messages": [
                {"role": "system", "content": "you are a bot"},
                {"role": "user", "content": "the task"},
                {"role": "assistant", "content": reply},
            ]
        }
    )


def test_hole_5_a_512_kb_reply_of_unclosed_fences_parses_in_linear_time() -> None:
    reply = "```bash\n" * (512 * 1024 // len("```bash\n"))
    start = time.perf_counter()
    transcript = parse_transcript(_mini_log(reply), "mini-swe-agent")
    elapsed = time.perf_counter() - start
    assert elapsed < 3.0, f"{elapsed:.1f} s for a 512 KB reply (quadratic: ~90 s)"
    assert [e["type"] for e in transcript.events()] == ["user_input", "assistant_output"]


_REFERENCE_ACTION = re.compile(r"```(?:bash|sh|mswea_bash_command)[ \t]*\n(.*?)\n```", re.DOTALL)
"""The pattern the importer used (quadratic): the linear scanner must find what it found."""

FENCE_SOUP = st.lists(
    st.sampled_from(["```", "``", "`", "bash", "sh", "mswea_bash_command", "\n", " ", "\t", "ls"]),
    max_size=60,
).map("".join)


@settings(deadline=None, max_examples=300)
@given(FENCE_SOUP)
def test_hole_5_the_action_scanner_finds_what_the_old_pattern_found(reply: str) -> None:
    from core.transcripts.importers import _actions

    expected = [(m.start(), m.end(), m.group(1)) for m in _REFERENCE_ACTION.finditer(reply)]
    assert [(a.start, a.end, a.command) for a in _actions(reply)] == expected
    events = parse_transcript(_mini_log(reply), "mini-swe-agent").events()
    calls = [e for e in events if e["type"] == "tool_call"]
    assert len(calls) == (1 if len(expected) == 1 else 0)


@pytest.mark.extended
@settings(deadline=None, max_examples=40)
@given(FENCE_SOUP.filter(bool))
def test_hole_5_fence_soup_repeated_to_256_kb_parses_in_linear_time(piece: str) -> None:
    reply = (piece * (256 * 1024 // len(piece) + 1))[: 256 * 1024]
    start = time.perf_counter()
    parse_transcript(_mini_log(reply), "mini-swe-agent")
    assert time.perf_counter() - start < 5.0


# --- hole 9: the memory root's name is untrusted ----------------------------------------------

HOSTILE_NAME = "mem\x1b]0;pwned\x07\x1b[31m\x9b2J"


def test_hole_9_import_and_demo_print_the_memory_roots_name_escaped(tmp_path: Path) -> None:
    root = tmp_path / HOSTILE_NAME
    run = run_cli(root, "import", "--format", "openai", str(DATA / "openai_chat.json"))
    assert run.returncode == 0, run.stderr
    assert not FORBIDDEN.search(run.stdout + run.stderr), repr(run.stdout + run.stderr)
    demo = run_cli(tmp_path / (HOSTILE_NAME + "demo"), "demo", "--no-tui", "--events", "30")
    assert demo.returncode == 0, demo.stderr
    assert not FORBIDDEN.search(demo.stdout + demo.stderr), repr(demo.stderr)


# --- hole 10: import edge cases and --limit ---------------------------------------------------


def _limit_memory() -> None:
    """1.5 GiB of address space: an unbounded read ends in MemoryError, not in the OOM killer
    taking other processes of a shared machine."""
    resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))


def test_hole_10_import_of_an_endless_file_stops_at_the_size_cap(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspector",
            "--memory-dir",
            str(tmp_path / "m"),
            "import",
            "--format",
            "openai",
            "/dev/zero",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=cli_env(),
        timeout=120,
        preexec_fn=_limit_memory,
    )
    assert proc.returncode == 2, proc.stderr
    error = proc.stderr.strip().splitlines()[-1]
    assert "/dev/zero" in error and "MiB" in error and "internal error" not in error
    assert not (tmp_path / "m").exists()


def test_hole_10_a_5000_digit_returncode_is_bad_input(tmp_path: Path) -> None:
    log = json.dumps(
        {
            "messages": [
                {"role": "user", "content": "the task"},
                {"role": "assistant", "content": "run it\n```bash\nls\n```"},
                {"role": "user", "content": f"<returncode>{'9' * 5000}</returncode>\nout"},
            ]
        }
    )
    with pytest.raises(BadInputError, match=r"^<string>:\d+: a <returncode> of 5,000 digits"):
        parse_transcript(log, "mini-swe-agent")
    path = tmp_path / "t.json"
    path.write_text(log, encoding="utf-8")
    run = run_cli(tmp_path / "m", "import", "--format", "mini-swe-agent", str(path))
    assert run.returncode == 2, run.stderr
    assert "internal error" not in run.error_line


def test_hole_10_import_dash_reads_stdin(tmp_path: Path) -> None:
    root = tmp_path / "m"
    text = (DATA / "openai_chat.json").read_text(encoding="utf-8")
    run = run_cli(root, "import", "--format", "openai", "-", "--json", stdin=text)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["source"] == "stdin"
    assert out["events_appended"] == _events_in(root) > 0


@pytest.mark.parametrize("value", ["-1", "0"])
def test_hole_10_recall_limit_message_and_check_agree(tmp_path: Path, value: str) -> None:
    run = run_cli(tmp_path / "m", "recall", "camera", "--limit", value)
    assert run.returncode == 2
    assert f"expected an integer ≥ 1, got {value}" in run.error_line


def test_hole_4_plain_import_anchors_the_figure_at_its_call_in_one_write(tmp_path: Path) -> None:
    """One append for the whole log, and the last figure still anchored after the events that
    came before its call (the trigger adds what followed by estimate, as before)."""
    from core.transcripts.replay import import_transcript
    from core.transcripts.transcript import ModelCall, Transcript

    def ev(n: int, etype: str = "user_input") -> dict[str, Any]:
        return {"type": etype, "role": "user", "content": f"event {n}"}

    calls = [
        ModelCall([ev(0)], [ev(1, "assistant_output")], 500),
        ModelCall([ev(2)], [ev(3, "assistant_output")], 700),
        ModelCall([ev(4)], [ev(5, "assistant_output")], None),
    ]
    mm = MemoryManager(tmp_path / "m", CONFIG)
    writes = 0
    real = mm.store.append_events

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal writes
        writes += 1
        return real(*args, **kwargs)

    mm.store.append_events = counting  # type: ignore[method-assign]
    stats = import_transcript(Transcript("openai", "t", calls, [ev(6)]), mm)
    assert (writes, stats.events_appended, stats.prompt_sizes_recorded) == (1, 7, 1)
    hot = mm.store.read_events().events
    state = mm.store.read_state()
    assert state.last_prompt_tokens == 700
    assert state.prompt_tokens_after_event_id == hot[2]["id"]  # "event 2", before call 2

    over = [ModelCall([ev(0)], [ev(1, "assistant_output")], 10**12 + 1)]
    with pytest.raises(BadInputError, match="nothing was written"):
        import_transcript(Transcript("openai", "t", over, []), mm)
    assert len(mm.store.read_events().events) == 7
    mm.close()
