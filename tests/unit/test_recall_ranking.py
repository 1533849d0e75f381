"""Recall ranking that respects identifiers (issue 11): the chunk holding an exact identifier
or phrase comes first, however large it is; CJK bigrams; highlight offsets for the TUI."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from core.events import Event
from core.recall.ranking import RecallDoc, RecallIndex, highlight_spans, query_terms


def ev(eid: str, text: str, etype: str = "tool_result") -> Event:
    return {"id": eid, "type": etype, "role": "tool", "content": text}


def small_fix_chunk(n: int) -> RecallDoc:
    """A short chunk dense in the sub-words `apply`, `fix` and `py`, without `apply_fix.py`."""
    return RecallDoc(
        f"chunk_{n + 2:04d}",
        "active",
        f"Fix {n}: edited fix_{n}.py",
        [
            ev(f"s{n}a", f"fix py fix_{n}.py"),
            ev(f"s{n}b", "apply the fix again, ran py; fix ok"),
            ev(f"s{n}c", f"py -m fix_{n}"),
        ],
    )


def big_chunk() -> RecallDoc:
    """278 events; one of them (in the middle) is the only mention of apply_fix.py."""
    events = [
        ev(f"b{i}", f"step {i}: listed the repository, read tests, checked coverage numbers")
        for i in range(278)
    ]
    events[140] = ev("b140", "python scripts/apply_fix.py --dry-run printed 3 hunks", "tool_call")
    return RecallDoc("chunk_0001", "active", "Long exploration of the repository.", events)


def test_unique_identifier_in_a_large_chunk_comes_first() -> None:
    docs = [big_chunk(), *(small_fix_chunk(n) for n in range(5))]
    result = RecallIndex(docs).search("apply_fix.py", limit=5)
    assert next(h.chunk_id for h in result.results) == "chunk_0001"
    assert [e["id"] for e in result.results[0].events] == ["b140"]
    assert len(result.results) == 5  # the sub-word matches still follow


def test_identifier_inside_a_longer_joined_token() -> None:
    stack = RecallDoc(
        "chunk_0001",
        "active",
        "node crashed",
        [ev("n1", "at Module._compile (node:internal/modules/run_main:98:5)")],
    )
    words = RecallDoc(
        "chunk_0002",
        "active",
        "errands",
        [ev("w1", "run the main script, then run it again"), ev("w2", "main run done")],
    )
    result = RecallIndex([words, stack]).search("run_main")
    assert [h.chunk_id for h in result.results] == ["chunk_0001", "chunk_0002"]
    assert [e["id"] for e in result.results[0].events] == ["n1"]


def test_camelcase_error_name_and_its_parts() -> None:
    exact = RecallDoc("chunk_0001", "active", "", [ev("x1", "raised UnicodeDecodeError")])
    parts = RecallDoc("chunk_0002", "active", "", [ev("p1", "unicode error while decode")])
    index = RecallIndex([parts, exact])
    assert [h.chunk_id for h in index.search("UnicodeDecodeError").results] == [
        "chunk_0001",
        "chunk_0002",
    ]
    # A part of a CamelCase word finds it too, and the event counts as matched.
    hit = index.search("decode").results
    assert {h.chunk_id for h in hit} == {"chunk_0001", "chunk_0002"}
    assert all(h.events for h in hit)


def test_phrase_outranks_the_same_words_apart() -> None:
    apart = RecallDoc(
        "chunk_0001",
        "active",
        "log review",
        [ev("a1", "crash reported"), ev("a2", "log rotated, log crash counts")],
    )
    together = RecallDoc(
        "chunk_0002",
        "active",
        "",
        [ev("t1", "attached the crash log from the device")]
        + [ev(f"t{i}", f"filler line {i}") for i in range(2, 40)],
    )
    index = RecallIndex([apart, together])
    assert next(h.chunk_id for h in index.search('"crash log"').results) == "chunk_0002"
    assert next(h.chunk_id for h in index.search("crash log").results) == "chunk_0002"
    q = query_terms('please find "crash log" now')
    assert q.phrases == ("crash log",)


def test_cjk_bigrams_rank_the_chunk_holding_the_words() -> None:
    target = RecallDoc(
        "chunk_0002",
        "active",
        "",
        [ev(f"c{i}", "检查了日志") for i in range(30)] + [ev("c99", "夜跑入门计划已经发给用户")],
    )
    other = RecallDoc("chunk_0001", "active", "夜间模式", [ev("o1", "入门教程")])
    result = RecallIndex([other, target]).search("夜跑 入门计划")
    assert next(h.chunk_id for h in result.results) == "chunk_0002"
    assert [e["id"] for e in result.results[0].events] == ["c99"]


def test_summary_still_counts() -> None:
    by_summary = RecallDoc("chunk_0001", "active", "Rolled back the kubernetes deploy.", [])
    nothing = RecallDoc("chunk_0002", "active", "Other work.", [ev("z", "unrelated")])
    assert [
        h.chunk_id for h in RecallIndex([nothing, by_summary]).search("kubernetes").results
    ] == ["chunk_0001"]


def test_many_mentions_do_not_beat_one_exact_identifier() -> None:
    """A chunk repeating a plain word 200 times gains only a bounded share from it."""
    noisy = RecallDoc(
        "chunk_0001", "active", "", [ev(f"n{i}", "config loader config") for i in range(200)]
    )
    exact = RecallDoc("chunk_0002", "active", "", [ev("e1", "fixed config_loader.py today")])
    result = RecallIndex([noisy, exact]).search("config_loader.py config")
    assert next(h.chunk_id for h in result.results) == "chunk_0002"


def test_highlight_spans_mark_terms_and_phrases_in_the_original_text() -> None:
    text = "Ran apply_fix.py; the Crash Log says UnicodeDecodeError"
    spans = highlight_spans(text, '"crash log" apply_fix.py decode')
    marked = [text[a:b] for a, b in spans]
    assert "apply_fix.py" in marked
    assert "Crash Log" in marked
    assert "Decode" in marked
    assert highlight_spans("nothing here", "zebra") == []
    # Offsets are into the text as given, merged and in order.
    assert spans == sorted(spans)
    assert all(b <= c for (_, b), (c, _) in itertools.pairwise(spans))


def holds_whole(doc: RecallDoc, needles: tuple[str, ...]) -> bool:
    from core.recall.ranking import event_search_text, holds_exact

    texts = [doc.summary, *(event_search_text(e) for e in doc.events)]
    return any(holds_exact(t.lower(), n) for t in texts for n in needles)


def test_pruned_scoring_ranks_as_scoring_every_chunk() -> None:
    """The rarest-first scoring that skips a common word's postings for chunks that cannot
    reach the first places gives the ranking (and scores) of scoring every chunk."""
    import random

    from core.recall.ranking import (
        EXACT_CANDIDATES,
        PHRASE_WINDOW,
        analyze,
        idf,
        query_terms,
        term_score,
    )

    rng = random.Random(5)
    words = [f"w{i}" for i in range(40)] + ["apply_fix.py", "run_main", "TKT-9"]
    docs = [
        RecallDoc(
            f"chunk_{d:04d}",
            "active",
            " ".join(rng.choices(words, k=3)),
            [ev(f"{d}-{i}", " ".join(rng.choices(words, k=rng.randint(1, 12)))) for i in range(8)],
        )
        for d in range(120)
    ]
    index = RecallIndex(docs)
    stats = [analyze(d).stats for d in docs]
    # Several terms each, no blank (a blank would make a phrase, lifted after scoring). Each
    # is one token with parts, so the chunks holding it whole are lifted (the documented rule,
    # applied here to every chunk's full score).
    for query in ["w1/w2/w3", "apply_fix.py", "TKT-9", "run_main", "w3", "w0.w5.w7-w1"]:
        q = query_terms(query)
        df = {t: sum(t in s for s in stats) for t in q.weights}
        full = sorted(
            (
                (
                    -sum(
                        term_score(idf(len(docs), df[t]) * q.weights[t], *s[t])
                        for t in q.weights
                        if t in s
                    ),
                    d.chunk_id,
                )
                for d, s in zip(docs, stats, strict=True)
                if any(t in s for t in q.weights)
            ),
        )
        by_id = {d.chunk_id: d for d in docs}
        window = full[: 5 + PHRASE_WINDOW] if q.exact else full[:5]
        if q.exact_terms:
            holding = [
                x
                for x in full
                if x not in window and any(t in stats[int(x[1][6:])] for t in q.exact_terms)
            ]
            window = sorted([*window, *holding[:EXACT_CANDIDATES]])

        lift = -window[0][0]
        expected = sorted(
            (s - lift if holds_whole(by_id[cid], q.exact) else s, cid) for s, cid in window
        )[:5]
        got = index.search(query, limit=5).results
        assert [h.chunk_id for h in got] == [cid for _, cid in expected], query
        assert [h.score for h in got] == [pytest.approx(-s) for s, _ in expected], query


def test_the_ascii_fast_path_gives_the_general_tokenizers_terms() -> None:
    """`_ascii_terms` (and its counting twin) are shortcuts: on any ASCII text they give the
    terms the general (Unicode) path gives, so no text is indexed differently for being ASCII."""
    import random
    from collections import Counter

    from core.recall import ranking as r

    def general(text: str) -> list[str]:
        low = text.lower()
        tokens = r._tokens(low)
        if low != text:
            for word in r._CAMEL_WORD.findall(text):
                parts = [p.lower() for p in r._CAMEL_PART.findall(word)]
                if len(parts) > 1:
                    tokens.extend(p for p in parts if p not in r.STOPWORDS)
        return tokens

    rng = random.Random(11)
    pieces = ["a", "Z", "q", "0", "9", "_", ".", "-", "/", ":", "@", " ", "The", "in", "HTTPServer"]
    texts = [
        "node:internal/modules/run_main:98:5 UnicodeDecodeError in src/apply_fix.py",
        "XMLHttpRequest parseJSON v2.3.1 user@host TKT-7-14 ABCdef aB",
        *("".join(rng.choices(pieces, k=rng.randint(1, 16))) for _ in range(20_000)),
    ]
    for text in texts:
        assert r._ascii_terms(text) == general(text), text
        assert r._ascii_counts(text) == Counter(general(text)), text


# --- exact matches first (issue 19, cause 3) --------------------------------------------------

EXACT_CASES: list[tuple[str, str, list[str]]] = [
    # (query, the one event holding it verbatim, texts dense in its parts)
    (
        "this.agent.state.isStreaming",
        "if (this.agent.state.isStreaming) { return; }",
        [
            "this agent keeps its state; streaming state of this agent",
            "agent.state is streaming; isStreaming was set on the agent state",
            "the state of this agent: streaming, this.state, agent.state.mode",
        ],
    ),
    (
        "package.json",
        "bumped the version in package.json",
        [
            "json output of the package manager; package list as json",
            "package-lock.json and the json package; package json json",
            "packages/ai/tsconfig.json package entry",
        ],
    ),
    (
        "hideOAuthSelector",
        "call hideOAuthSelector() after login",
        [
            "hide the oauth selector; OAuthSelector component; hideSelector()",
            "showOAuthSelector and hideModelSelector, the oauth selector hides",
            "selector hide oauth; hide OAuth; oauthSelector state",
        ],
    ),
    (
        "loadContextFileFromDir",
        "export function loadContextFileFromDir(dir: string)",
        [
            "load the context file from the dir; loadContextFile(); contextFile",
            "loadContextFiles walks each dir; fromDir helper; load context",
            "context file load from dir; FileFromDir; loadFile(dir)",
        ],
    ),
    (
        "../coding-agent/test/compaction.test.ts",
        "npx vitest run ../coding-agent/test/compaction.test.ts",
        [
            "coding-agent test: compaction test ts; test/compaction.ts",
            "../coding-agent/test/session.test.ts and the compaction tests",
            "compaction.test.ts in packages/agent/test; coding-agent compaction",
        ],
    ),
]


FILE_DUMP = " ".join(f"line{i} const value{i} = compute(input{i});" for i in range(150))
"""A long tool result (a file read whole), as real sessions hold: one mention in it weighs
little against short texts full of the query's parts."""


def exact_docs(target: str, parts: list[str]) -> list[RecallDoc]:
    """The target chunk: 60 events of filler and one long file dump holding the query once;
    then one short chunk per text dense in the query's parts, each repeated."""
    events = [ev(f"t{i}", f"step {i}: read files, ran the tests, all green") for i in range(60)]
    half = len(FILE_DUMP) // 2
    events[30] = ev("t30", f"{FILE_DUMP[:half]} {target} {FILE_DUMP[half:]}")
    docs = [RecallDoc("chunk_0009", "active", "A long session.", events)]
    for n, text in enumerate(parts):
        docs.append(
            RecallDoc(
                f"chunk_{n + 1:04d}",
                "active",
                text,
                [ev(f"p{n}-{i}", text) for i in range(3)],
            )
        )
    return docs


@pytest.mark.parametrize("query,target,parts", EXACT_CASES, ids=[c[0] for c in EXACT_CASES])
def test_the_chunk_holding_the_whole_query_comes_first(
    query: str, target: str, parts: list[str]
) -> None:
    result = RecallIndex(exact_docs(target, parts)).search(query, limit=5)
    assert result.results[0].chunk_id == "chunk_0009", [h.chunk_id for h in result.results]
    assert [e["id"] for e in result.results[0].events] == ["t30"]
    assert len(result.results) > 1  # the chunks with only its parts still follow


@pytest.mark.parametrize(
    "query,text",
    [
        ("./src/core/agent-session.ts", "edited src/core/agent-session.ts"),
        ("src/core/agent-session.ts", "edited ./src/core/agent-session.ts"),
        ("@packages/coding-agent/README.md", "read packages/coding-agent/README.md"),
        ("~/.pi/agent/settings.json", "cat ~/.pi/agent/settings.json"),
        ("~/.pi/agent/settings.json", "wrote /Users/mario/.pi/agent/settings.json"),
    ],
)
def test_a_leading_dot_slash_at_or_tilde_does_not_hide_the_exact_match(
    query: str, text: str
) -> None:
    parts = [
        "src core agent session ts; the agent session core; session.ts in core",
        "packages coding agent readme md; README of the agent packages",
        "pi agent settings json; agent settings; settings.json of pi",
    ]
    result = RecallIndex(exact_docs(text, parts)).search(query, limit=5)
    assert result.results[0].chunk_id == "chunk_0009", [h.chunk_id for h in result.results]


def test_a_longer_name_holding_the_query_is_not_an_exact_match() -> None:
    """`fix.py` inside `apply_fix.py`, `bgGreen` inside `bgGreenBright`: the chunk that holds
    the name itself comes first."""
    for query, longer, itself in [
        ("fix.py", "ran apply_fix.py twice", "opened fix.py"),
        ("bgGreen", "theme.bgGreenBright(text)", "theme.bgGreen(text)"),
    ]:
        longer_doc = RecallDoc("chunk_0001", "active", "", [ev("l1", longer)] * 3)
        exact = exact_docs(itself, [])[0]
        got = RecallIndex([longer_doc, exact]).search(query, limit=5).results
        assert next(h.chunk_id for h in got) == "chunk_0009", query


def test_persistent_and_in_memory_recall_agree_on_exact_queries(tmp_path: Path) -> None:
    """Through a memory root: the persistent index (chunks/recall.sqlite) and the in-memory
    build answer alike, and the chunk whose file dump holds the query comes first."""
    from core.config import CompactionConfig
    from core.manager import MemoryManager

    root = tmp_path / "m"
    config = CompactionConfig(count_compress_after_events=8, hot_window_events=3)
    mm = MemoryManager(root, config)
    half = len(FILE_DUMP) // 2

    def turn(n: int, texts: list[str]) -> None:
        mm.begin_run(f"turn {n}: look at the code")
        for i, text in enumerate(texts):
            cid = f"c{n}-{i}"
            mm.append({"type": "tool_call", "name": "read", "tool_call_id": cid, "arguments": {}})
            mm.append({"type": "tool_result", "name": "read", "tool_call_id": cid, "content": text})
        mm.commit_run(f"done with turn {n}")
        mm.wait_for_maintenance()
        assert mm.save(force=True).compacted

    for n, (_query, target, _parts) in enumerate(EXACT_CASES):
        turn(n, [f"{FILE_DUMP[:half]} {target} {FILE_DUMP[half:]}"])
    for n, (_query, _target, parts) in enumerate(EXACT_CASES):
        turn(10 + n, parts)
    mm.close()
    for query, target, _parts in EXACT_CASES:
        fresh = MemoryManager(root, config, read_only=True)
        persisted = fresh.recall(query, limit=10)
        plain = MemoryManager(root, config, read_only=True)
        plain.persistent_recall = False
        assert persisted == plain.recall(query, limit=10), query
        assert len(persisted.results) > 1, query
        (event,) = persisted.results[0].events
        assert target in str(event.get("content")), query


def test_an_exact_query_reads_only_the_chunks_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every chunk holds `package.json`: checking them all would read every chunk file; the
    check goes best first and stops at the limit."""
    from core.index.chunk_files import read_chunk_events
    from core.jsonl import CorruptLine
    from core.manager import MemoryManager
    from core.recall import service as recall_service
    from core.store.paths import MemoryPaths
    from tests.helpers.recall import config

    root = tmp_path / "m"
    mm = MemoryManager(root, config())
    for p in range(4):
        for n in range(3 * p, 3 * p + 3):
            mm.begin_run(f"turn {n}: bump the version in package.json to 1.{n}")
            cid = f"k{n}"
            mm.append({"type": "tool_call", "name": "edit", "tool_call_id": cid, "arguments": {}})
            mm.append({"type": "tool_result", "tool_call_id": cid, "content": f"1.{n} written"})
            mm.commit_run(f"package.json now says 1.{n}")
            mm.wait_for_maintenance()
        assert mm.save(force=True).compacted
    mm.close()
    reads: list[str] = []
    real = read_chunk_events

    def counting(paths: MemoryPaths, chunk_id: str) -> tuple[list[Event], list[CorruptLine]]:
        reads.append(chunk_id)
        return real(paths, chunk_id)

    monkeypatch.setattr(recall_service, "read_chunk_events", counting)
    fresh = MemoryManager(root, config(), read_only=True)
    hits = fresh.recall("package.json", limit=2).results
    assert len(hits) == 2
    assert len(list((root / "session" / "chunks").glob("chunk_*.jsonl"))) >= 4
    assert sorted(reads) == sorted(h.chunk_id for h in hits)
