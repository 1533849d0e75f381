"""What summaries say, read as a person would (issue 19): every edited file stays named (the
file record), edits made through the shell count, identifiers stay whole, and the content
fixes (Goal, outcome, decisions, constraints, next steps, paths) each on a small fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.compaction.filerecord import (
    FileRecord,
    record_from_extra,
    record_lines,
    record_room,
    update_record,
)
from core.compaction.runs import (
    extract_identifiers,
    identifier_sources,
    shell_edit_paths,
    split_runs,
)
from core.compaction.summaries import render_summary, render_summary_md_window
from core.config import CompactionConfig
from core.events import Event
from core.maintenance.compaction_pass import PassResult
from core.manager import MemoryManager
from core.summarizer import ExtractiveSummarizer
from tests.helpers.paths import TRANSCRIPTS

EX = ExtractiveSummarizer()


def user(text: str, **extra: object) -> Event:
    return {"type": "user_input", "role": "user", "content": text, **extra}


def said(text: str) -> Event:
    return {"type": "assistant_output", "role": "assistant", "content": text}


def call(cid: str, name: str, args: object, **extra: object) -> Event:
    return {"type": "tool_call", "role": "assistant", "name": name, "tool_call_id": cid,
            "arguments": args, **extra}  # fmt: skip


def done(cid: str, content: object = "ok") -> Event:
    return {"type": "tool_result", "role": "tool", "tool_call_id": cid, "content": content}


def section(text: str, name: str) -> list[str]:
    lines = text.split("\n")
    if name not in lines:
        return []
    out: list[str] = []
    for line in lines[lines.index(name) + 1 :]:
        if line and not line.startswith((" ", "-")):
            break
        out.append(line)
    return out


# --------------------------------------------------------------------------- shell edits


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo hi > notes.md", ["notes.md"]),
        ("printf x >> log/out.txt", ["log/out.txt"]),
        ("make 2>&1 | tee build.log", ["build.log"]),
        ("tee -a a.txt b.txt < in.txt", ["a.txt", "b.txt"]),
        ("sed -i 's/a/b/' src/m.py", ["src/m.py"]),
        ("sed -i.bak -e 's/a/b/' -e 's/c/d/' src/m.py src/n.py", ["src/m.py", "src/n.py"]),
        ("touch src/__init__.py", ["src/__init__.py"]),
        ("cp template.py src/new.py", ["src/new.py"]),
        ("mv old.py src/renamed.py", ["src/renamed.py"]),
        ("cat > src/app.py <<'EOF'\nx = 1 > 2\nprint('>> y')\nEOF", ["src/app.py"]),
        ("cd src/project && echo 'x = 1' > file.py", ["src/project/file.py"]),
        ("cd /repo && touch a.py; cd sub; touch b.py", ["/repo/a.py", "/repo/sub/b.py"]),
        (
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n"
            "*** Add File: src/b.py\n+z\n*** End Patch\nEOF",
            ["src/a.py", "src/b.py"],
        ),
        ("ls > /dev/null 2>&1", []),
        ("pytest -q 2> err.log", []),
        ('echo "a > b" && grep -n x src/a.py', []),
        ("python gen.py > $OUT", []),
        ("sed -n 1,20p src/a.py", []),
        ("echo 'unclosed > quote", []),
        # BSD sed's `-i ''`: the script is not a file (a real pi session on macOS)
        (
            "cd /r/src && sed -i '' 's|from \"../a.js\"|from \"./a.js\"|g' core/x.ts",
            ["/r/src/core/x.ts"],
        ),
        ("sed -i '' -e 's/a/b/' f.py", ["f.py"]),
        ("cd src && mv a.ts b.ts utils/", ["src/utils/a.ts", "src/utils/b.ts"]),
        ("mv compaction.ts core", ["core/compaction.ts"]),
        ("mv utils/config.ts .", ["config.ts"]),
        ("mv tools oauth core/", []),
        ("mv theme/* modes/theme/", []),
        ("cp Makefile.in Makefile", ["Makefile"]),
        ("cd /r/src\n\n# fix the imports > later\nsed -i '' 's/a/b/' x.ts", ["/r/src/x.ts"]),
        ("echo a \\\n  > out.txt", ["out.txt"]),
    ],
)
def test_shell_edit_paths(command: str, expected: list[str]) -> None:
    assert shell_edit_paths(command) == expected


def test_a_shell_edit_is_a_runs_edit_resolved_against_cd_and_cwd() -> None:
    events = [
        user("Create the package skeleton.", meta={"cwd": "/home/dev/proj"}),
        call("c1", "bash", {"command": "cd src/project && touch __init__.py"}),
        done("c1", ""),
        call("c2", "bash", {"command": "echo 'x = 1' > /home/dev/proj/setup.cfg"}),
        done("c2", ""),
        call("c3", "write", {"path": "/home/dev/proj/README.md", "content": "x"}),
        done("c3"),
        call("c4", "bash", {"command": "ls -la"}),
        done("c4", "total 0"),
    ]
    (run,) = split_runs(events)
    assert run.edits == ["src/project/__init__.py", "setup.cfg", "README.md"]
    assert run.commands[-1] == "ls -la"
    text = EX.summarize(events)
    assert "edited: src/project/__init__.py, setup.cfg, README.md" in text
    assert "/home/dev/proj/README.md" not in text, "written relative to the known cwd"


# --------------------------------------------------------------------------- file record


def test_the_record_accumulates_every_edited_file_across_chunks() -> None:
    first = update_record(None, [user("a"), call("1", "edit", {"path": "a.py"}), done("1"),
                                 call("2", "read", {"path": "docs/x.md"}), done("2")])  # fmt: skip
    second = update_record(
        record_from_extra(first.to_extra()),
        [call("3", "bash", {"command": "touch b.py"}), done("3"),
         call("4", "edit", {"path": "docs/x.md"}), done("4"),
         call("5", "grep", {"pattern": "foo bar"}), done("5")],
    )  # fmt: skip
    assert second.modified == ["a.py", "b.py", "docs/x.md"]
    assert second.read == [], "a file modified later is not listed as only read"
    assert second.modified_total == 3
    assert record_from_extra(second.to_extra()) == second
    assert update_record(None, [user("hi"), said("hello")]).to_extra() is None


def test_record_lines_name_every_file_while_the_room_lasts() -> None:
    paths = [f"packages/coding-agent/src/module_{n:02d}/file_{n:02d}.ts" for n in range(30)]
    record = FileRecord(modified=paths, read=["docs/a.md"], modified_total=30, read_total=1)
    lines = record_lines(record, record_room(40))
    assert len(lines) <= record_room(40) == 13
    text = "\n".join(lines)
    assert all(p in text for p in paths) and "more" not in text
    assert lines[-1] == "[files] read: docs/a.md"
    assert all(len(line) // 4 <= 80 for line in lines)
    small = record_lines(record, 3)
    assert len(small) == 3 and "(+" in "".join(small) and paths[-1] in "".join(small)
    assert record_lines(record, record_room(2)) == []


def test_summary_md_keeps_the_record_in_the_rolling_summary_and_counts_it() -> None:
    summaries = [
        (f"c{n}", f"Goal:\n- r{n}\nProgress:\n- Request: r{n}\n  edited: f{n}.py\n  outcome: ok")
        for n in range(12)
    ]
    files = {"modified": [f"f{n}.py" for n in range(12)], "read": []}
    kwargs = {"summary_max_chunks": 2, "max_rolling_summary_lines": 6}
    r = render_summary(summaries, files=files, **kwargs)
    assert len(r.rolling_lines) == 6, "the record counts in max_rolling_summary_lines"
    assert r.rolling_lines[0].startswith("[… ") and r.rolling_lines[-1].startswith("[files]")
    assert all(f"f{n}.py" in r.summary_md for n in range(12))
    window = render_summary_md_window(
        len(summaries),
        lambda i: summaries[i],
        lambda i: 1,
        10,
        files=files,
        **kwargs,
    )
    assert window == r.summary_md


def config(**changes: object) -> CompactionConfig:
    base: dict[str, object] = {
        "context_window": 6000,
        "reserve_tokens": 1000,
        "compress_at_percent": 60,
        "keep_recent_tokens": 600,
        "count_compress_after_events": 16,
        "summary_max_chunks": 1,
        "max_rolling_summary_lines": 60,
    }
    base.update(changes)
    return CompactionConfig(**base)  # type: ignore[arg-type]


def test_every_edited_file_stays_named_after_its_chunk_is_folded(tmp_path: Path) -> None:
    """Six long-named files a run (more than a Rolling Summary line holds), half of them
    through the shell; after every pass every compacted edit is named in summary.md."""
    mm = MemoryManager(tmp_path / "memory", config())
    edited: dict[str, str] = {}
    missing: list[str] = []
    passes = 0

    def check(result: PassResult) -> None:
        nonlocal passes
        if not result.compacted:
            return
        passes += 1
        session = tmp_path / "memory" / "session"
        text = (session / "summary.md").read_text(encoding="utf-8")
        hot = (session / "events.jsonl").read_text(encoding="utf-8")
        for eid, path in edited.items():
            if eid not in hot and path not in text:
                missing.append(path)

    mm.on_pass = check
    n = 0
    for r in range(6):
        mm.begin_run(f"Run {r}: split the billing module {r} into smaller files.")
        for k in range(6):
            n += 1
            path = f"services/billing/src/module_{r:02d}/part_{k:02d}_implementation.py"
            if k % 2:
                event = call(f"c{n}", "bash", {"command": f"cat > {path} <<'EOF'\nx = 1\nEOF"})
            else:
                event = call(f"c{n}", "write", {"path": path, "content": "x = 1\n" * 40})
            stored = mm.append(event)
            edited[stored["id"]] = path
            mm.append(done(f"c{n}", "ok " + "." * 400))
            mm.save()
        mm.commit_run(f"Module {r} is split.")
        mm.wait_for_maintenance(30)
        mm.save()
    mm.close()
    assert passes >= 5
    assert missing == []
    session = tmp_path / "memory" / "session"
    text = (session / "summary.md").read_text(encoding="utf-8")
    hot = (session / "events.jsonl").read_text(encoding="utf-8")
    rolling = text.split("## Rolling Summary")[1].split("## Recent Chunks")[0]
    compacted = [path for eid, path in edited.items() if eid not in hot]
    assert len(compacted) >= 24
    record = "\n".join(ln for ln in rolling.split("\n") if ln.startswith("[files]"))
    assert all(path in record for path in compacted), "the record names them all"
    assert "more" not in record


# --------------------------------------------------------------------------- content fixes


def test_a_short_follow_up_is_never_the_goal() -> None:
    events = [
        user("Fix the CRLF handling in packages/tools/edit-diff.ts so mixed endings match."),
        call("1", "edit", {"path": "packages/tools/edit-diff.ts"}),
        done("1"),
        said("Fixed; the tests pass."),
        user("check again"),
        call("2", "bash", {"command": "npm test"}),
        done("2", "all passed"),
        said("Still passing."),
    ]
    goal = section(EX.summarize(events), "Goal:")
    assert (
        goal[0] == "- Fix the CRLF handling in packages/tools/edit-diff.ts so mixed endings match."
    )
    assert "- (latest: check again)" in goal
    alone = section(EX.summarize(events[4:], previous_summary="Goal:\n- Ship v2\n"), "Goal:")
    assert alone[0] == "- Ship v2", "a range of only follow-ups keeps the earlier goal"


def test_a_documents_outcome_is_its_lead_in_not_its_last_line() -> None:
    document = "Here are the meeting notes you asked for.\n\n# Weekly sync\n" + "\n".join(
        f"- item {n}: discussed topic {n}" for n in range(14)
    )
    events = [user("Write up the weekly sync notes."), said(document)]
    outcome = next(ln for ln in EX.summarize(events).split("\n") if "outcome:" in ln)
    assert "Here are the meeting notes you asked for." in outcome
    assert "item 13" not in outcome and "lines" in outcome


def test_key_decisions_hold_what_was_decided_not_status_remarks() -> None:
    events = [
        user("Why does findCutPoint return undefined?"),
        said("Let me look at `findCutPoint`."),
        call("1", "read", {"path": "src/compaction.ts"}),
        done("1", "code"),
        said("First I'll reproduce it with the existing tests. Adding a test for it."),
        call("2", "bash", {"command": "npm test"}),
        done("2", "1 failed"),
        said("The problem is in `findCutPoint`: it assumes the entry exists."),
        call("3", "edit", {"path": "src/compaction.ts"}),
        done("3"),
        said("Fixed; tests pass."),
    ]
    decisions = section(EX.summarize(events), "Key Decisions:")
    assert decisions == ["- The problem is in `findCutPoint`: it assumes the entry exists."]


def test_critical_context_holds_no_json_keys_colours_ids_or_split_paths() -> None:
    events = [
        user(
            'The settings file "/Users/Jo Smith/app/config/settings.json" has '
            '{"user_id": "U0248213", "accent": "#00aaff", "theme": "#000"} for user_48213; '
            "why is `loadSettings` ignoring it? See #412."
        ),
        said("It reads the wrong key (see `parseTheme`)."),
    ]
    text = EX.summarize(events)
    for bad in ('"user_id"', "U0248213", "#00", "#000", "user_48213", "Smith/app"):
        assert f" {bad}," not in text and not text.rstrip().endswith(bad)
    idents = extract_identifiers(str(events[0]["content"]))
    assert "/Users/Jo Smith/app/config/settings.json" in idents
    assert "loadSettings" in idents and "#412" in idents
    assert not any(i in ("user_id", "U0248213", "#00", "#000", "user_48213") for i in idents)
    assert extract_identifiers("a `x: deferred initialization to` b `(see` c `ok.name`") == [
        "ok.name"
    ]


def test_a_constraint_in_a_pasted_log_is_not_the_users() -> None:
    events = [
        user(
            "The deploy fails, log below. Please don't touch the CI config.\n"
            "2026-11-30 10:01:02 ERROR value must be at most 10 (got 12)\n"
            "[WARN] retries should never exceed the budget\n"
        ),
        said("Looking."),
    ]
    constraints = section(EX.summarize(events), "Constraints & Preferences:")
    assert constraints == ["- Please don't touch the CI config."]


def test_later_requests_stay_whole_in_the_rolling_summary() -> None:
    request = (
        "After the refactor, make sure the exporter writes one CSV per account, keeps the "
        "header row identical to the old format and never drops the currency column."
    )
    first = f"Goal:\n- {request}\nProgress:\n- Request: {request}\n  outcome: Done."
    r = render_summary([("c1", first), ("c2", "x")], summary_max_chunks=1,
                       max_rolling_summary_lines=10)  # fmt: skip
    assert r.rolling_lines == [f"[c1] {request} → Done."]


def test_next_steps_are_never_a_question_and_say_when_nothing_is_pending() -> None:
    answered = [
        user("Bump the version to 2.1."),
        call("1", "edit", {"path": "pyproject.toml"}),
        done("1"),
        said("Bumped to 2.1. Want me to also tag the release next?"),
    ]
    steps = section(EX.summarize(answered), "Next Steps:")
    assert steps == ["- None pending: the latest request has its outcome above."]
    unanswered = [user("Migrate the settings loader to pydantic."),
                  call("1", "read", {"path": "src/settings.py"}), done("1", "code")]  # fmt: skip
    steps = section(EX.summarize(unanswered), "Next Steps:")
    assert steps == ["- Continue: Migrate the settings loader to pydantic."]
    planned = [user("Fix the flaky test."), said("Fixed the race. Next I'll run the full suite.")]
    assert section(EX.summarize(planned), "Next Steps:") == ["- Next I'll run the full suite."]


def test_long_absolute_paths_are_written_relative_to_the_cwd_once() -> None:
    root = "/home/dev/work/very-long-project-name"
    events = [
        user("Rename the helper.", meta={"cwd": root}),
        call("1", "edit", {"path": f"{root}/src/helpers/strings.py"}),
        done("1"),
        call("2", "read", {"path": f"{root}/src/helpers/__init__.py"}),
        done("2", "x"),
        said("Renamed."),
    ]
    text = EX.summarize(events)
    assert "edited: src/helpers/strings.py" in text and root not in text
    record = update_record(None, events)
    lines = record_lines(record, 5)
    assert lines[0] == f"[files] paths relative to: {root}"
    assert "[files] modified: src/helpers/strings.py" in lines


def test_a_heredoc_body_is_content_not_command_or_edits() -> None:
    command = "cat <<'EOF' > repro.py\nx = 1 > 2\nprint(x)  # >> y\nEOF\npython repro.py"
    events = [user("Reproduce the bug."), call("1", "bash", {"command": command}), done("1")]
    (run,) = split_runs(events)
    assert run.edits == ["repro.py"]
    assert run.commands == ["cat <<'EOF' > repro.py ; python repro.py …(4 lines)"]


def test_a_run_that_stopped_on_an_announcement_has_no_outcome() -> None:
    """ "Let me run the failing tests." is what the agent was about to do, not how the run
    ended: it is shown as `last said:`, and Next Steps says to continue the request."""
    events = [
        user("Fix the flaky retry test."),
        call("1", "read", {"path": "tests/test_retry.py"}),
        done("1", "code"),
        said("THOUGHT: Let me run the failing tests."),
    ]
    text = EX.summarize(events)
    assert "  last said: Let me run the failing tests." in text
    assert "outcome:" not in text
    assert section(text, "Next Steps:") == ["- Continue: Fix the flaky retry test."]
    concluded = [*events[:3], said("THOUGHT: The retry reused a stale clock. Fixed it.")]
    assert "  outcome: The retry reused a stale clock. Fixed it." in EX.summarize(concluded)


def test_repair_rebuilds_the_file_record_from_the_chunk_files(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, config())
    written: list[str] = []
    for r in range(3):
        mm.begin_run(f"Run {r}: add the parser module {r}.")
        for k in range(6):
            path = f"src/parser_{r}/part_{k}.py"
            written.append(path)
            mm.append(call(f"c{r}{k}", "bash", {"command": f"echo x > {path}"}))
            mm.append(done(f"c{r}{k}", "ok " + "." * 400))
            mm.save()
        mm.commit_run(f"Parser {r} added.")
        mm.wait_for_maintenance(30)
    session = root / "session"
    before = (session / "summary.md").read_text(encoding="utf-8")
    record = [line for line in before.split("\n") if line.startswith("[files]")]
    assert record, "the record is in summary.md from the first pass on"
    (session / "chunks" / "index.yaml").write_text("chunks: [unclosed", encoding="utf-8")
    assert mm.repair().get("index_rebuilt") == 1
    after = (session / "summary.md").read_text(encoding="utf-8")
    assert [line for line in after.split("\n") if line.startswith("[files]")] == record
    mm.close()


def test_a_name_cut_by_the_read_limit_is_not_a_name() -> None:
    output = "x " * 996 + "CouponExpiredError raised"  # the limit falls inside the name
    events = [user("Why?"), call("1", "grep", {"pattern": "Coupon"}), done("1", output)]
    _said_used, shown = identifier_sources(events)
    assert not any(i.startswith("CouponExp") for i in shown)


def test_an_overflowing_record_keeps_the_newest_and_counts_the_rest() -> None:
    paths = [f"pkg/m{n:03d}/file_{n:03d}.py" for n in range(100)]
    lines = record_lines(FileRecord(paths, [], None, 130, 0), 4)
    text = "\n".join(lines)
    assert len(lines) == 4 and "pkg/m099/file_099.py" in text and "pkg/m000/" not in text
    shown = sum(p in text for p in paths)
    assert f"(+{130 - shown} more modified earlier" in lines[-1]


def test_a_key_in_a_file_name_never_reaches_the_record(tmp_path: Path) -> None:
    token = "ghp_" + "a1B2" * 9
    mm = MemoryManager(tmp_path / "memory", config())
    for r in range(3):
        mm.begin_run(f"Run {r}: save the token file.")
        for k in range(6):
            mm.append(call(f"c{r}{k}", "write", {"path": f"keys/{token}_{r}{k}.txt"}))
            mm.append(done(f"c{r}{k}", "ok " + "." * 400))
            mm.save()
        mm.commit_run("Saved.")
        mm.wait_for_maintenance(30)
    mm.close()
    session = tmp_path / "memory" / "session"
    text = (session / "summary.md").read_text(encoding="utf-8")
    index = (session / "chunks" / "index.yaml").read_text(encoding="utf-8")
    assert "[files] modified: keys/ghp_…[redacted]" in text
    assert token not in text and token not in index


def test_a_pi_sessions_cwd_makes_its_paths_relative() -> None:
    from core.transcripts.importers import load_transcript

    data = TRANSCRIPTS / "pi_session.jsonl"
    events = load_transcript(data, "pi").events()
    assert events and all(e["meta"]["cwd"] == "/home/ana/src/tally" for e in events)
    edit = [
        *events[:1],
        call(
            "1",
            "write",
            {"path": "/home/ana/src/tally/src/tally/cli.py"},
            meta={"cwd": "/home/ana/src/tally"},
        ),
        done("1"),
    ]
    (run,) = split_runs(edit)
    assert run.edits == ["src/tally/cli.py"]
    from bench.quality.metrics import edited_paths

    assert edited_paths(edit[1]) == ["src/tally/cli.py"], "the harness counts the same path"


def test_commands_leave_the_known_cwd_out_of_their_paths() -> None:
    root = "/home/dev/work/project"
    events = [
        user("Check the status.", meta={"cwd": root}),
        call("1", "bash", {"command": f"cd {root} && git status && cat {root}/src/a.py"}),
        done("1", "clean"),
        said("Clean."),
    ]
    assert "ran: cd . && git status && cat src/a.py" in EX.summarize(events)


def test_key_names_of_folded_runs_stay_named_in_the_record() -> None:
    events = [
        user("Why does `loadSettings` ignore SETTINGS_PATH?"),
        call("1", "read", {"path": "src/settings.py"}),
        done("1", "code"),
        said("The problem is in `parseTheme`: it reads `themeName` before `loadSettings`."),
        call("2", "edit", {"path": "src/settings.py", "old": "themeName", "new": "theme_name"}),
        done("2"),
        said("Fixed."),
    ]
    record = update_record(None, events)
    # Names the run's request and outcome already show are not repeated; the others are kept.
    assert {"parseTheme", "themeName", "theme_name"} <= set(record.names)
    assert "loadSettings" not in record.names and "src/settings.py" not in record.names
    assert record_from_extra(record.to_extra()) == record
    lines = record_lines(record, 6)
    assert any(line.startswith("[names] ") and "parseTheme" in line for line in lines)
    many = FileRecord(["a.py"], [], None, 1, 0, [f"name_{n:03d}_identifier" for n in range(160)])
    lines = record_lines(many, 9)
    names = [line for line in lines if line.startswith("[names]")]
    assert 1 <= len(names) <= 4 and "name_159_identifier" in names[-1] + names[0]
    assert all(len(line) // 4 <= 80 for line in lines)


def test_names_hold_no_colours_or_bare_extensions_but_keep_issue_numbers() -> None:
    """A theme session's `#282832`, `#00d7ff` and `.json` are not names of the work; `#123` is."""
    from core.compaction.runs import extract_identifiers

    text = (
        "Set borderMuted to #282832 and accent to #00d7ff in dark.json; every .json and "
        "/*.json under themes/ loads; fixes #123 (see #4567)."
    )
    idents = extract_identifiers(text)
    assert "borderMuted" in idents and "dark.json" in idents
    assert "#123" in idents and "#4567" in idents
    for bad in ("#282832", "#00d7ff", ".json", "/*.json"):
        assert bad not in idents, (bad, idents)
