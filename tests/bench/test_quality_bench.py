"""The quality harness (python -m bench.quality): its metrics on tiny hand-made cases, the
corpus against its generator, and one small corpus transcript end to end."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bench.quality import __main__ as cli
from bench.quality import metrics as m
from bench.quality.generate import CORPUS_DIR, GENERATORS
from bench.quality.harness import (
    CORPUS,
    REAL_CORPUS,
    TARGETS,
    Report,
    Tracker,
    overall,
    run,
    run_entry,
    settings,
)
from bench.quality.real_corpus import SOURCES
from core.events import Event
from core.maintenance.compaction_pass import PassResult
from core.transcripts.importers import FORMATS, load_transcript


def _event(etype: str, content: object = None, **extra: object) -> dict[str, object]:
    return {"type": etype, "content": content, **extra}


# --- requests and paths named ---------------------------------------------------------------


def test_a_summary_missing_a_request_lowers_the_figure() -> None:
    requests = [
        _event("user_input", "Auto-compaction crashes when the session has a branch summary"),
        _event("user_input", "The edit tool fails on files with CRLF line endings (PI-1187)."),
        _event(
            "user_input",
            "日本向けに価格表示を円にしたいです。format_yen を追加して、税込み表示にしてください。",
        ),
    ]
    keys = [m.request_key(e) for e in requests]
    assert keys[0] == "Auto-compaction crashes when the session"
    all_named = (
        "- Auto-compaction crashes when the session has…\n- The edit tool fails on files\n"
        "  with CRLF line endings\n- 日本向けに価格表示を円にしたいです。format_yen を追加して、"
        "税込み表示にしてください。"
    )
    assert m.named_fraction(keys, all_named) == 1.0
    one_missing = all_named.replace("The edit tool", "The edit")
    assert m.named_fraction(keys, one_missing) == pytest.approx(2 / 3)
    assert m.named_fraction([], all_named) is None


def test_edited_paths_are_whole_and_as_written() -> None:
    edit = _event(
        "tool_call",
        name="edit",
        arguments={"path": "packages/coding-agent/src/core/agent-session.ts", "oldText": "a"},
    )
    assert m.edited_paths(edit) == ["packages/coding-agent/src/core/agent-session.ts"]
    summary = "edited core/agent-session.ts"
    assert m.named_fraction(m.edited_paths(edit), summary) == 0.0
    sed = _event(
        "tool_call", name="bash", arguments={"command": "sed -i 's/int(/round(/' src/m/fields.py"}
    )
    assert m.edited_paths(sed) == ["src/m/fields.py"]
    heredoc = _event(
        "tool_call",
        name="bash",
        arguments={"command": "cat <<'EOF' > /testbed/reproduce_issue.py\nprint(1) > x.py\nEOF"},
    )
    assert m.edited_paths(heredoc) == ["/testbed/reproduce_issue.py"]
    noise = _event(
        "tool_call",
        name="bash",
        arguments={"command": "python -m pytest tests/a.py 2>&1 > /dev/null | tail -30"},
    )
    assert m.edited_paths(noise) == []
    read = _event("tool_call", name="read", arguments={"path": "src/a.py"})
    assert m.edited_paths(read) == []


# --- identifiers -----------------------------------------------------------------------------


def test_identifiers_come_from_what_was_said_and_used_not_from_tool_results() -> None:
    said = _event("user_input", "findCutPoint returns undefined (#412), see PI-1187 at 540, 1210")
    call = _event(
        "tool_call", name="bash", arguments={"command": "rg -n apply_fix src/fix_utils.py"}
    )
    result = _event("tool_result", "def secret_helper_name(): pass  # TODO in ImportedThing")
    assert m.said_identifiers(said) == {"findCutPoint", "#412", "PI-1187"}
    assert {"apply_fix", "src/fix_utils.py"} <= m.said_identifiers(call)
    assert m.said_identifiers(result) == set()
    assert m.identifiers("commit 4f8a00b3 at (540, 1210)") == set()
    assert m.kept_fraction({"findCutPoint", "PI-1187"}, "fixed findCutPoint") == 0.5


# --- mechanics ---------------------------------------------------------------------------------


def test_fragments_of_longer_names_are_not_identifiers() -> None:
    """Neither a dotted tail inside a longer file name nor a name cut by the 200-character
    limit on argument values is an identifier of its own."""
    assert "text.test.ts" not in m.identifiers("wrote packages/tui/test/truncated-text.test.ts")
    assert "compaction.test.ts" in m.identifiers("npx vitest compaction.test.ts")
    assert m.identifiers("fixes #412; colour #008800") == {"#412"}
    body = "x " * 95 + "const errorMessages = []"  # the cut falls inside errorMessages
    call = _event("tool_call", name="bash", arguments={"command": body})
    got = m.said_identifiers(call)
    assert not any(i.startswith("errorMess") for i in got), got
    whole = _event("tool_call", name="bash", arguments={"command": "echo errorMessages"})
    assert "errorMessages" in m.said_identifiers(whole)


def test_percentile_interpolates() -> None:
    assert m.percentile([], 0.5) is None
    assert m.percentile([3.0], 0.9) == 3.0
    assert m.percentile([4.0, 1.0, 2.0, 3.0], 0.5) == pytest.approx(2.5)
    assert m.percentile([float(i) for i in range(11)], 0.9) == pytest.approx(9.0)


def test_a_doubled_or_lost_id_is_counted() -> None:
    got = m.check_ids(["t-00000", "t-00001", "t-00002"], ["t-00000", "t-00000", "t-00002", "x"])
    assert got.lost == ["t-00001"]
    assert got.doubled == ["t-00000"]
    assert got.unexpected == ["x"]
    clean = m.check_ids(["a", "b"], ["b", "a"])
    assert (clean.lost, clean.doubled, clean.unexpected) == ([], [], [])


def test_a_split_tool_pair_is_counted() -> None:
    places: dict[str, Sequence[m.Event]] = {
        "hot window": [_event("tool_result", "ok", tool_call_id="T1")],
        "chunk_0001": [
            _event("tool_call", tool_call_id="T1", name="bash"),
            _event("tool_call", tool_call_id="T2", name="bash"),
            _event("tool_result", "ok", tool_call_id="T2"),
            _event("tool_call", tool_call_id="T3", name="bash"),  # no result ever came
        ],
    }
    assert m.split_tool_pairs(places) == ["T1"]


# --- summaries -----------------------------------------------------------------------------------


def test_nested_summaries_are_found_and_clean_ones_are_not() -> None:
    labels = set(m.SUMMARY_LABELS)
    clean = "Goal:\n- fix the footer\nProgress:\n  Done:\n  - edit(footer.ts)\nNext Steps:\n- none"
    assert not m.nested_in_chunk_summary(clean, labels)
    issue_line = (
        "- (system_event) Original request: - (the pinned root input…) Early progress: - (sys"
    )
    assert m.nested_line(issue_line, labels)
    assert m.nested_line("- Done: tests pass. Original request: - fix it", labels)
    resummarised = "Goal:\n- fix it\nProgress:\n- Original request:\n- (the pinned root)"
    assert m.nested_in_chunk_summary(resummarised, labels)
    split = "Goal:\n- a\n\n---\n\nTurn Context (split turn):\nOriginal request:\n- b"
    assert not m.nested_in_chunk_summary(split, labels)
    twice = "Goal:\n- a\n\n---\n\nTurn Context (split turn):\nx\nTurn Context (split turn):\ny"
    assert m.nested_in_chunk_summary(twice, labels)
    summary_md = (
        "# Session History (compressed chunks)\n\n## Rolling Summary\n\n"
        "- chunk_0001: fix footer → done\n"
        "- chunk_0002: Goal: x Turn Context (split turn): Original request: y\n\n"
        "## Recent Chunks\n\n- **chunk_0003**\n  Turn Context (split turn):\n  Original request:\n"
    )
    assert m.nested_rolling(summary_md, labels) == [
        "- chunk_0002: Goal: x Turn Context (split turn): Original request: y"
    ]


def test_coordinates_and_hashes_count_as_noise() -> None:
    assert m.noise_count("tapped (540, 1210) then x=96, y=1410; commit 4f8a00b3") == 3
    assert m.noise_count("edited src/a.py (PI-1187), 3 tests, 2026-11-30, deadbeef") == 0


def test_summaries_over_budget_use_the_token_estimate() -> None:
    assert m.over_budget({"c1": "x" * 4096, "c2": "x" * 4097}, 1024) == ["c2"]


def test_recall_candidates_occur_in_exactly_one_chunk() -> None:
    chunks: dict[str, Sequence[m.Event]] = {
        "chunk_0001": [_event("user_input", "fix src/apply_fix.py please")],
        "chunk_0002": [_event("user_input", "now fix.py and fix_utils.py")],
        "chunk_0003": [_event("tool_result", "fix_utils.py was read here")],
    }
    unique = m.unique_identifiers(chunks)
    assert unique["src/apply_fix.py"] == "chunk_0001"
    assert "fix_utils.py" not in unique  # said in chunk 2, also in chunk 3's tool output
    assert "fix.py" not in unique  # a substring of apply_fix.py in chunk 1


def test_overall_pools_fractions_and_keeps_the_worst() -> None:
    a = Report("a", "pi", requests_named_min=0.5, requests_named_final=1.0, requests_compacted=3)
    b = Report("b", "pi", requests_named_min=0.9, requests_named_final=0.0, requests_compacted=1)
    a.max_prompt_ratio, b.max_prompt_ratio = 0.7, 1.1
    a.events_lost, b.events_lost = 0, 2
    got = overall([a, b])
    assert got["requests_named_min"] == 0.5
    assert got["requests_named_final"] == 0.75
    assert got["max_prompt_ratio"] == 1.1
    assert got["events_lost"] == 2


# --- the corpus --------------------------------------------------------------------------------


def test_committed_corpus_matches_its_generator() -> None:
    for name, make in GENERATORS.items():
        assert (CORPUS_DIR / name).read_text(encoding="utf-8") == make(), name
    assert set(GENERATORS) == {p.name for p in CORPUS_DIR.iterdir()}
    assert {e.file for e in CORPUS} == set(GENERATORS)


@pytest.mark.parametrize("entry", CORPUS, ids=lambda e: e.name)
def test_every_corpus_file_imports(entry: object) -> None:
    from bench.quality.harness import CorpusEntry

    assert isinstance(entry, CorpusEntry)
    t = load_transcript(CORPUS_DIR / entry.file, entry.fmt)
    assert len(t.calls) >= 60
    assert all(c.prompt_tokens for c in t.calls)


# --- end to end --------------------------------------------------------------------------------


SMALL = next(e for e in CORPUS if e.name == "swe-marshmallow")


def test_harness_runs_one_corpus_transcript_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--only", SMALL.name, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    r = doc["transcripts"][SMALL.name]
    assert r["passes"] >= 1 and r["compactions"] >= 1
    assert r["events_lost"] == 0 and r["events_doubled"] == 0 and r["tool_pairs_split"] == 0
    assert r["paths_edited"] > 0 and r["paths_named_final"] is not None
    assert 0 < r["max_prompt_ratio"] < 2
    assert set(doc["targets"]) == {t.key for t in TARGETS}
    assert doc["targets"]["events_lost"]["met"] is True
    assert r["group"] == "generated" and list(doc["groups"]) == ["generated"]
    assert doc["groups"]["generated"]["transcripts"] == [SMALL.name]
    assert r["calibration_samples"] >= r["calls"] - 1  # every figure but the cold start's
    assert r["calibration_error_median"] is not None and r["calibration_error_p90"] is not None
    assert r["back_to_back_passes"] >= 0 and r["passes_grew_prompt"] >= 0
    assert doc["settings"][SMALL.name]["context_window"] == 32768
    assert cli.main(["--only", SMALL.name]) == 0
    text = capsys.readouterr().out
    assert "hit@5" in text and "met" in text
    assert cli.main(["--only", "nope"]) == 2


class ForgetfulSummarizer:
    """Keeps nothing: every figure that depends on the summary must drop to zero."""

    name = "forgetful"

    def summarize(self, events: Sequence[Event], **kw: Any) -> str:
        return "Goal:\n- (nothing kept)"


def test_a_summarizer_that_keeps_nothing_scores_zero() -> None:
    r = run_entry(SMALL, summarizer=ForgetfulSummarizer())
    assert r.compactions >= 1
    # The file record (core.compaction.filerecord) is built from the events, not by the summarizer:
    # it
    # still names every edited path and the runs' key names; the rest is the summaries' part.
    assert r.paths_named_final == 1.0 and r.paths_named_min == 1.0
    assert r.identifiers_kept is not None and r.identifiers_kept < 0.7
    assert run_entry(SMALL).identifiers_kept == 1.0
    assert r.events_lost == 0  # the mechanics do not depend on the summary
    doc = run([SMALL])
    assert doc["overall"]["paths_named_final"] > 0.0  # the real summarizer names some


def test_quick_subset_is_small() -> None:
    quick = [e for e in CORPUS if e.quick]
    assert 1 <= len(quick) < len(CORPUS)
    assert all((CORPUS_DIR / e.file).stat().st_size < 300_000 for e in quick)


def test_corpus_is_a_few_megabytes_at_most() -> None:
    total = sum(p.stat().st_size for p in Path(CORPUS_DIR).iterdir())
    assert total < 4_000_000


class NestingSummarizer:
    """Summarises whatever it gets, labels and all, one line per event: what the issue saw
    before summaries were built per run."""

    name = "nesting"

    def summarize(self, events: Sequence[Event], *, kind: str = "history", **kw: Any) -> str:
        lines = [
            f"- ({e.get('type')}) {' '.join(str(e.get('content') or '').split())}" for e in events
        ]
        if kind == "turn_prefix":
            # The span's first event (a later pass: the earlier synthetic event) goes under Early
            # progress too: a continued turn's chunk keeps no Original request bullet (contract
            # §5, Turn start), and the nesting must still show in the chunk summary.
            return "Original request:\n" + lines[0] + "\nEarly progress:\n" + "\n".join(lines[:4])
        return "Goal:\n" + "\n".join(lines)


def test_a_summarizer_that_nests_is_caught() -> None:
    r = run_entry(SMALL, summarizer=NestingSummarizer())
    assert r.compactions >= 2
    assert r.nested_summaries >= 1  # the first pass's split-turn event, summarised again
    assert r.events_lost == 0 and r.tool_pairs_split == 0


# --- pass storms, passes that grow the prompt, calibration -------------------------------------


def test_tracker_counts_back_to_back_passes_grown_prompts_and_calibration_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "session").mkdir()
    report = Report("t", "pi")
    tracker = Tracker(tmp_path, settings(32768, 10000), report)
    no_pass, compacted = PassResult(compacted=False), PassResult(compacted=True)
    for call, passed in [(0, False), (1, True), (2, True), (3, True), (4, False), (5, True)]:
        if passed:
            tracker.around_pass(500, no_pass)
        tracker.before_call(call, None)  # type: ignore[arg-type]
    assert report.back_to_back_passes == 2  # calls 2 and 3 each came right after a pass
    assert tracker.pass_calls == [1, 2, 3, 5]
    # The prompt (hot window + summary.md, empty here: 0) after a compacting pass.
    tracker.around_pass(10, compacted)
    assert report.passes_grew_prompt == 0
    tracker.around_pass(0, compacted)
    assert report.passes_grew_prompt == 1 and tracker.grew == ["0→0"]
    tracker.recorded(150, 100)  # the first figure after the passes above
    tracker.recorded(None, 100)  # cold start: nothing predicted
    tracker.recorded(90, 100)
    assert tracker.calibration_errors == [pytest.approx(0.5), pytest.approx(0.1)]
    assert tracker.calibration_errors_after_pass == [pytest.approx(0.5)]


def test_real_sessions_are_reported_apart_and_skipped_when_absent(tmp_path: Path) -> None:
    assert {e.file for e in REAL_CORPUS} <= set(SOURCES)
    assert all(e.group == "real" for e in REAL_CORPUS)
    assert {e.name for e in REAL_CORPUS}.isdisjoint({e.name for e in CORPUS})
    first = REAL_CORPUS[0]
    (tmp_path / first.file).write_text("not the session\n", encoding="utf-8")
    doc = run(REAL_CORPUS, real=tmp_path)
    assert doc["transcripts"] == {}
    real = doc["groups"]["real"]
    assert set(real["skipped"]) == {e.name for e in REAL_CORPUS}
    assert "sha256" in real["skipped"][first.name]
    missing = next(e for e in REAL_CORPUS if e.file != first.file and e.fmt == "mini-swe-agent")
    assert "not present" in real["skipped"][missing.name]
    claude = next(e for e in REAL_CORPUS if e.fmt == "claude-code")
    if claude.fmt not in FORMATS:
        assert "not importable yet" in real["skipped"][claude.name]
    assert real["overall"]["transcripts"] == 0 and real["overall"]["skipped"] == len(REAL_CORPUS)
    assert cli.main(["--group", "real", "--real-dir", str(tmp_path / "nope")]) == 2


def test_a_real_session_that_does_not_import_is_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from bench.quality import real_corpus

    entry = next(e for e in REAL_CORPUS if e.fmt == "openai")
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "function", "name": "f", "content": "ok"},  # legacy: the importer refuses it
    ]
    path = tmp_path / entry.file
    path.write_text(json.dumps(messages), encoding="utf-8")
    source = dataclasses.replace(SOURCES[entry.file], sha256=real_corpus.sha256_of(path))
    monkeypatch.setitem(SOURCES, entry.file, source)
    report = run_entry(entry, real=tmp_path)
    assert report.skipped is not None and report.skipped.startswith("does not import: ")
    assert "function" in report.skipped
