"""summary.md / summary_archive.md rendering (contract §7) and reading summary.md back."""

from __future__ import annotations

import pytest

from core.compaction.summaries import (
    ROLLING_LINE_TOKENS,
    RenderedSummaries,
    parse_summary_md,
    render_summary,
    summary_md_bound,
)
from core.config import CompactionConfig, SummarizerConfig
from core.tokens import estimate_tokens


def render(
    chunks: list[tuple[str, str]], max_chunks: int = 3, max_lines: int = 100
) -> RenderedSummaries:
    return render_summary(
        chunks, summary_max_chunks=max_chunks, max_rolling_summary_lines=max_lines
    )


def test_no_chunks_renders_nothing() -> None:
    r = render([])
    assert r.summary_md == ""
    assert r.archive_md == ""
    assert r.recent_ids == [] and r.archived_ids == [] and r.rolling_lines == []
    assert r.rolling_line_count == 0 and r.rolling_truncated == 0


def test_one_chunk_exact_text() -> None:
    r = render([("chunk_0001", "Goal:\n- fix the wifi")])
    assert r.summary_md == (
        "# Session History (compressed chunks)\n"
        "\n"
        "## Rolling Summary\n"
        "\n"
        "## Recent Chunks\n"
        "\n"
        "- **chunk_0001**\n"
        "  Goal:\n"
        "  - fix the wifi\n"
    )
    assert r.archive_md == ""
    assert r.recent_ids == ["chunk_0001"]


def test_up_to_max_chunks_all_recent_oldest_first_blank_lines_kept() -> None:
    chunks = [("c1", "first\n\nafter a blank line   "), ("c2", "second"), ("c3", "third")]
    r = render(chunks, max_chunks=3)
    assert r.summary_md == (
        "# Session History (compressed chunks)\n\n"
        "## Rolling Summary\n\n"
        "## Recent Chunks\n\n"
        "- **c1**\n"
        "  first\n"
        "\n"
        "  after a blank line\n"
        "\n"
        "- **c2**\n"
        "  second\n"
        "\n"
        "- **c3**\n"
        "  third\n"
    )
    assert all(line == line.rstrip() for line in r.summary_md.splitlines())
    assert r.archived_ids == [] and r.rolling_lines == []


def test_more_than_max_pushes_oldest_out_to_archive_and_rolling() -> None:
    chunks = [
        ("c1", "Goal:\n- set up the router\n\n- port 8080"),
        ("c2", "# heading-like line\nsecond"),
        ("c3", "third"),
        ("c4", "fourth\n  indented"),
    ]
    r = render(chunks, max_chunks=2)
    assert r.recent_ids == ["c3", "c4"]
    assert r.archived_ids == ["c1", "c2"]
    # Free text without run entries folds to one line per chunk, its label first (so a
    # summary can never forge a heading).
    assert r.rolling_lines == [
        "[c1] Goal: / - set up the router / - port 8080",
        "[c2] # heading-like line / second",
    ]
    assert r.summary_md == (
        "# Session History (compressed chunks)\n\n"
        "## Rolling Summary\n\n"
        "[c1] Goal: / - set up the router / - port 8080\n"
        "[c2] # heading-like line / second\n\n"
        "## Recent Chunks\n\n"
        "- **c3**\n"
        "  third\n\n"
        "- **c4**\n"
        "  fourth\n"
        "    indented\n"
    )
    assert r.archive_md == (
        "# Session History Archive (chunks pushed out of summary.md)\n\n"
        "- **c1**\n"
        "  Goal:\n"
        "  - set up the router\n"
        "\n"
        "  - port 8080\n\n"
        "- **c2**\n"
        "  # heading-like line\n"
        "  second\n"
    )


def run_summary(n: int, *, edits: int = 2, outcome: str = "done") -> str:
    paths = ", ".join(f"src/pkg{n}/mod_{k}.py" for k in range(edits))
    return (
        f"Goal:\n- request {n}\nProgress:\n- Request: request {n}: make the thing {n} work\n"
        f"  edited: {paths}\n  ran: pytest -q\n  outcome: {outcome} {n}"
    )


def test_rolling_summary_is_one_line_per_run_with_its_edited_paths() -> None:
    two_runs = (
        "Goal:\n- second\nProgress:\n- Request: first request\n  edited: a/x.py\n"
        "  outcome: fixed x\n- Request: second request\n  read: b/y.py\n"
        "  error: ValueError: bad y\nKey Decisions:\n- use y\nCritical Context:\n- identifiers: q"
    )
    r = render([("c1", two_runs), ("c2", "x")], max_chunks=1)
    assert r.rolling_lines == [
        "[c1] first request · edited: a/x.py → fixed x",
        "[c1] second request → error: ValueError: bad y",
    ]


def test_a_split_turn_continued_in_the_next_chunk_is_one_rolling_line() -> None:
    first = (
        "Goal:\n- A\nProgress:\n- Request: A task\n  edited: a.py\n  outcome: A done\n\n---\n\n"
        "Turn Context (split turn):\nOriginal request:\n- B task\nEarly progress:\n"
        "- edited: b1.py, b2.py\nContext for the retained suffix:\n- Last tool call: edit"
    )
    second = (
        "Turn Context (split turn):\nOriginal request:\n- B task\nEarly progress:\n"
        "- edited: b3.py\n"
    )
    third = "Goal:\n- B task\nProgress:\n- Continued: B task\n  edited: b4.py\n  outcome: B done"
    r = render([("c1", first), ("c2", second), ("c3", third), ("c4", "x")], max_chunks=1)
    assert r.rolling_lines == [
        "[c1] A task · edited: a.py → A done",
        "[c1–c3] B task · edited: b1.py, b2.py, b3.py, b4.py → B done",
    ]
    open_turn = render([("c1", first), ("c2", "x")], max_chunks=1)
    assert open_turn.rolling_lines[-1] == (
        "[c1] B task · edited: b1.py, b2.py → (continued in Recent Chunks)"
    )


def test_a_split_turn_that_ended_without_a_word_is_never_in_progress() -> None:
    """Only the newest folded line can go on below; an older one without an outcome ended
    (its next request followed), so it says nothing rather than "(in progress)"."""
    first = (
        "Turn Context (split turn):\nOriginal request:\n- B task\nEarly progress:\n"
        "- edited: b1.py\n"
    )
    second = "Goal:\n- C task\nProgress:\n- Request: C task\n  outcome: C done"
    r = render([("c1", first), ("c2", second), ("c3", "x")], max_chunks=1)
    assert r.rolling_lines == ["[c1] B task · edited: b1.py", "[c2] C task → C done"]
    assert not any("in progress" in line for line in r.rolling_lines)


def test_text_quoting_the_marker_does_not_split_a_summary() -> None:
    summary = (
        "Goal:\n- x\nProgress:\n- Request: why does Turn Context (split turn): show twice?\n"
        "  edited: a.py\n- Request: second one\n  edited: b.py"
    )
    r = render([("c1", summary), ("c2", "x")], max_chunks=1)
    assert r.rolling_lines == [
        "[c1] why does Turn Context (split turn): show twice? · edited: a.py",
        "[c1] second one · edited: b.py",
    ]


def test_rolling_lines_are_bounded_and_keep_paths_whole() -> None:
    long = run_summary(1, edits=30, outcome="finished " + "very " * 100)
    (line,) = render([("chunk_0001", long), ("c2", "x")], max_chunks=1).rolling_lines
    assert estimate_tokens(line) <= ROLLING_LINE_TOKENS
    shown = line.split(" · edited: ")[1].split(" (+")[0].split(", ")
    assert all(path.startswith("src/pkg1/mod_") and path.endswith(".py") for path in shown)
    assert "more)" in line


def test_a_cjk_request_leaves_room_for_the_paths() -> None:
    request = (
        "请把发票模块的四舍五入改成银行家舍入法，并且为每一种货币都补上回归测试，不要改动导出的格式"
        * 2
    )
    summary = f"Goal:\n- x\nProgress:\n- Request: {request}\n  edited: src/invoice/round.py"
    (line,) = render([("c1", summary), ("c2", "x")], max_chunks=1).rolling_lines
    assert line.startswith("[c1] " + request[:40])
    assert line.endswith("· edited: src/invoice/round.py")
    assert estimate_tokens(line) <= ROLLING_LINE_TOKENS


def test_rolling_cap_counts_the_marker_and_keeps_newest_whole_entries() -> None:
    chunks = [(f"chunk_{i:04d}", run_summary(i)) for i in range(1, 7)]  # 6 chunks
    r = render(chunks, max_chunks=1, max_lines=4)
    # 5 chunks pushed out -> 5 run lines; cap 4 = marker + the 3 newest, each with its label.
    assert r.rolling_lines[0] == "[… 2 earlier lines truncated]"
    assert [line.split("]")[0] + "]" for line in r.rolling_lines[1:]] == [
        "[chunk_0003]",
        "[chunk_0004]",
        "[chunk_0005]",
    ]
    assert "src/pkg5/mod_0.py, src/pkg5/mod_1.py" in r.rolling_lines[-1]
    assert r.rolling_truncated == 2
    assert r.rolling_line_count == 4
    section = r.summary_md.split("## Rolling Summary\n\n")[1].split("\n\n## Recent Chunks")[0]
    assert section.splitlines() == r.rolling_lines
    assert r.summary_md.count("earlier lines truncated") == 1


def test_rolling_exactly_at_cap_has_no_marker() -> None:
    chunks = [("c1", "a\nb"), ("c2", "c"), ("c3", "d"), ("c4", "e")]
    r = render(chunks, max_chunks=1, max_lines=3)
    assert r.rolling_lines == ["[c1] a / b", "[c2] c", "[c3] d"]
    assert r.rolling_truncated == 0


@pytest.mark.parametrize(("max_chunks", "max_tokens", "max_lines"), [(2, 200, 4), (8, 1024, 100)])
def test_summary_md_stays_within_its_bound_whatever_the_session_length(
    max_chunks: int, max_tokens: int, max_lines: int
) -> None:
    config = CompactionConfig(
        summary_max_chunks=max_chunks,
        max_rolling_summary_lines=max_lines,
        summarizer=SummarizerConfig(max_summary_tokens=max_tokens),
    )
    bound = summary_md_bound(config)
    assert bound == 24 + max_lines * 81 + max_chunks * (max_tokens + -(-max_tokens // 4) + 17)
    # Summaries at their budget, some of many one-character lines (indenting each line two
    # spaces would otherwise triple them), some of long CJK runs.
    shapes = [
        "x\n" * (2 * max_tokens),
        run_summary(0, edits=60, outcome="字" * max_tokens),
        "Goal:\n- " + "word " * max_tokens,
    ]
    chunks = [(f"chunk_{i:04d}", shapes[i % 3]) for i in range(300)]
    for n in (1, max_chunks, 50, 300):
        r = render_summary(
            chunks[:n],
            summary_max_chunks=max_chunks,
            max_rolling_summary_lines=max_lines,
            max_summary_tokens=max_tokens,
        )
        assert estimate_tokens(r.summary_md) <= bound, n
        assert parse_summary_md(r.summary_md).problems == []


def test_empty_summary_folds_to_a_placeholder_line() -> None:
    r = render([("c1", "   \n"), ("c2", "x")], max_chunks=1)
    assert r.rolling_lines == ["[c1] (no summary)"]
    assert "- **c1**\n" in r.archive_md


def test_rerender_is_deterministic() -> None:
    chunks = [(f"c{i}", f"s{i}") for i in range(10)]
    assert render(chunks) == render(chunks)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        render_summary([("c", "s")], summary_max_chunks=0, max_rolling_summary_lines=10)
    with pytest.raises(ValueError):
        render_summary([("c", "s")], summary_max_chunks=1, max_rolling_summary_lines=1)


def test_parse_round_trip() -> None:
    chunks = [
        ("c1", "old\nolder\noldest"),
        ("c2", "Goal:\n- x"),
        ("c3", "multi\n\n  indented\nend"),
        ("chunk_0004", ""),
    ]
    r = render([("a", "zero"), ("b", "one"), *chunks], max_chunks=3, max_lines=2)
    parsed = parse_summary_md(r.summary_md)
    assert parsed.problems == []
    assert parsed.rolling_lines == r.rolling_lines
    assert parsed.rolling_lines == ["[… 2 earlier lines truncated]", "[c1] old / older / oldest"]
    assert parsed.rolling_truncated == r.rolling_truncated == 2
    assert parsed.recent == [(cid, s) for cid, s in chunks[1:]]


def test_parse_empty_rolling() -> None:
    parsed = parse_summary_md(render([("c1", "x")]).summary_md)
    assert parsed.rolling_lines == [] and parsed.recent == [("c1", "x")]
    assert parsed.problems == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello world",
        "## Recent Chunks\n- **a**\n  x\nstray text\n- **a**\n",
        "# Session History (compressed chunks)\n## Rolling Summary\n- **x**\n",
        "\x00\x01 - ** ** \n## Rolling Summary\n## Rolling Summary\n  \n",
    ],
)
def test_parse_never_raises_and_reports_problems(text: str) -> None:
    parsed = parse_summary_md(text)
    assert parsed.problems


def test_parse_hand_edited_keeps_what_makes_sense() -> None:
    text = (
        "# Session History (compressed chunks)\n\n## Rolling Summary\n\nr1\n\n"
        "## Recent Chunks\n\nnot in an entry\n- **a**\n  one\nunindented\n- **a**\n  two\n"
    )
    parsed = parse_summary_md(text)
    assert parsed.rolling_lines == ["r1"]
    assert parsed.recent == [("a", "one\nunindented"), ("a", "two")]
    assert any("outside a chunk entry" in p for p in parsed.problems)
    assert any("listed twice" in p for p in parsed.problems)
