"""summary.md / summary_archive.md rendering (contract §7) and reading summary.md back."""

from __future__ import annotations

import pytest

from core.summaries import RenderedSummaries, parse_summary_md, render_summary


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
    assert r.rolling_lines == [
        "[c1] Goal:",
        "- set up the router",
        "- port 8080",
        "[c2] \\# heading-like line",
        "second",
    ]
    assert r.summary_md == (
        "# Session History (compressed chunks)\n\n"
        "## Rolling Summary\n\n"
        "[c1] Goal:\n"
        "- set up the router\n"
        "- port 8080\n"
        "[c2] \\# heading-like line\n"
        "second\n\n"
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


def test_rolling_cap_counts_the_marker_and_keeps_newest_lines() -> None:
    chunks = [(f"c{i}", f"line a{i}\nline b{i}") for i in range(1, 7)]  # 6 chunks
    r = render(chunks, max_chunks=1, max_lines=4)
    # 5 chunks pushed out -> 10 folded lines; cap 4 = marker + 3 newest.
    assert r.rolling_lines == [
        "[… 7 earlier lines truncated]",
        "line b4",
        "[c5] line a5",
        "line b5",
    ]
    assert r.rolling_truncated == 7
    assert r.rolling_line_count == 4
    section = r.summary_md.split("## Rolling Summary\n\n")[1].split("\n\n## Recent Chunks")[0]
    assert section.splitlines() == r.rolling_lines
    assert r.summary_md.count("earlier lines truncated") == 1


def test_rolling_exactly_at_cap_has_no_marker() -> None:
    chunks = [("c1", "a\nb"), ("c2", "c"), ("c3", "d")]
    r = render(chunks, max_chunks=1, max_lines=3)
    assert r.rolling_lines == ["[c1] a", "b", "[c2] c"]
    assert r.rolling_truncated == 0


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
    r = render(chunks, max_chunks=3, max_lines=2)
    parsed = parse_summary_md(r.summary_md)
    assert parsed.problems == []
    assert parsed.rolling_lines == r.rolling_lines
    assert parsed.rolling_lines == ["[… 2 earlier lines truncated]", "oldest"]
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
