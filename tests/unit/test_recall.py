"""Recall (contract §9): BM25 over summaries and event text, CJK bigrams, explicit source."""

from __future__ import annotations

import pytest

from core.errors import BadInputError
from core.events import Event
from core.recall.ranking import RecallDoc, RecallIndex, RecallResult, tokenize


def ev(eid: str, text: str, etype: str = "assistant_output", **extra: object) -> Event:
    return {"id": eid, "type": etype, "role": "assistant", "content": text, **extra}


WIFI_DOC = RecallDoc(
    "chunk_0001",
    "active",
    "User asked for the wifi password; found it on the router label.",
    [
        ev("a1", "What is the wifi password?", "user_input"),
        ev("a2", "Reading the router label.", "tool_call", name="read_label"),
        ev("a3", "The wifi password is hunter2.", "tool_result"),
        ev("a4", "Password shared with the user."),
    ],
)
ONCE_DOC = RecallDoc(
    "chunk_0002",
    "active",
    "Set up the printer.",
    [
        ev("b1", "Please set up the printer in the office.", "user_input"),
        ev("b2", "The printer joined the wifi network."),
        ev("b3", "Test page printed."),
    ],
)
CODE_DOC = RecallDoc(
    "chunk_0003",
    "active",
    "Fixed a crash in parse_config.",
    [
        ev("c1", "parse_config raised KeyError 'timeout' in src/config_loader.py"),
        ev("c2", "Added a default."),
    ],
)
PARTS_DOC = RecallDoc(
    "chunk_0004",
    "active",
    "Config review.",
    [ev("d1", "We parse the file, then config values are checked.")],
)
CJK_DOC = RecallDoc(
    "chunk_0005",
    "pending",
    "用户要求打开网络设置并连接家里的路由器。",
    [
        ev("e1", "请打开网络设置", "user_input"),
        ev("e2", "已打开设置页面"),
        ev("e3", "已连接到路由器"),
    ],
)
CJK_OTHER = RecallDoc(
    "chunk_0006",
    "active",
    "用户询问天气。",
    [ev("f1", "今天天气很好，网速也不错")],
)

ALL = [WIFI_DOC, ONCE_DOC, CODE_DOC, PARTS_DOC, CJK_DOC, CJK_OTHER]


def ids(result: RecallResult) -> list[str]:
    return [hit.chunk_id for hit in result.results]


def test_tokenize_words_identifiers_and_cjk_bigrams() -> None:
    assert tokenize("Open src/app_main.py") == [
        "open", "src", "app", "main", "py", "src/app_main.py", "app_main.py", "app_main",
    ]  # fmt: skip
    assert tokenize("node:internal/modules/run_main:98:5") == [
        "node", "internal", "modules", "run", "main", "98", "5",
        "node:internal/modules/run_main:98:5", "run_main",
    ]  # fmt: skip
    assert tokenize("UnicodeDecodeError") == ["unicodedecodeerror", "unicode", "decode", "error"]
    assert tokenize("网络设置 好") == ["网络", "络设", "设置", "好"]
    assert tokenize("ＷｉＦｉ") == [
        "wifi",
        "wi",
        "fi",
    ]  # full-width folds to ASCII; CamelCase parts
    assert tokenize("...  ---") == []


def test_topic_chunk_beats_a_passing_mention() -> None:
    result = RecallIndex(ALL).search("wifi password")
    assert ids(result)[:2] == ["chunk_0001", "chunk_0002"]
    assert result.results[0].score > result.results[1].score > 0


def test_exact_identifier_beats_its_parts() -> None:
    result = RecallIndex(ALL).search("parse_config")
    assert ids(result)[0] == "chunk_0003"
    assert "chunk_0004" in ids(result)  # the parts alone still match, lower
    assert result.results[0].score > result.results[1].score


def test_path_query() -> None:
    result = RecallIndex(ALL).search("src/config_loader.py")
    assert ids(result)[0] == "chunk_0003"
    assert [e["id"] for e in result.results[0].events] == ["c1"]


def test_cjk_query_by_bigrams() -> None:
    result = RecallIndex(ALL).search("网络设置")
    assert ids(result) == ["chunk_0005"]  # 网速 in chunk_0006 shares no bigram
    hit = result.results[0]
    assert hit.source == "pending"
    # e1 holds all of 网络设置; e2 (已打开设置页面) shares the bigram 设置; e3 none.
    assert [e["id"] for e in hit.events] == ["e1", "e2"]
    assert hit.summary == CJK_DOC.summary


def test_cjk_inside_mixed_text() -> None:
    doc = RecallDoc("x", "active", "", [ev("m1", "打开wifi设置")])
    result = RecallIndex([doc, WIFI_DOC]).search("wifi设置")
    assert ids(result)[0] == "x"
    assert [e["id"] for e in result.results[0].events] == ["m1"]


def test_matched_events_are_those_with_a_query_term_in_order() -> None:
    result = RecallIndex(ALL).search("password")
    hit = result.results[0]
    assert hit.chunk_id == "chunk_0001"
    assert [e["id"] for e in hit.events] == ["a1", "a3", "a4"]
    assert hit.events[0] is WIFI_DOC.events[0]


def test_word_inside_a_longer_word_does_not_match_an_event() -> None:
    doc = RecallDoc("x", "active", "the wifi", [ev("1", "wifipassword"), ev("2", "wifi on")])
    hit = RecallIndex([doc]).search("wifi").results[0]
    assert [e["id"] for e in hit.events] == ["2"]


def test_matched_events_are_capped() -> None:
    doc = RecallDoc("big", "active", "", [ev(str(i), f"router {i}") for i in range(50)])
    hit = RecallIndex([doc]).search("router").results[0]
    assert [e["id"] for e in hit.events] == [str(i) for i in range(20)]


def test_summary_only_match_has_no_events() -> None:
    result = RecallIndex(ALL).search("found")
    assert ids(result) == ["chunk_0001"]
    assert [e["id"] for e in result.results[0].events] == []


def test_name_and_arguments_are_searched() -> None:
    doc = RecallDoc(
        "t",
        "active",
        "",
        [{"id": "t1", "type": "tool_call", "name": "screenshot", "arguments": {"zoom": 3}}],
    )
    index = RecallIndex([doc])
    assert ids(index.search("screenshot")) == ["t"]
    assert ids(index.search("zoom")) == ["t"]


def test_pending_count_uses_source_only() -> None:
    docs = [
        RecallDoc("pending-7f3a", "active", "router firmware update", []),
        RecallDoc("chunk_0009", "pending", "router reboot", []),
        RecallDoc("chunk_0010", "active", "router logs", []),
    ]
    result = RecallIndex(docs).search("router", limit=5)
    assert {h.chunk_id: h.source for h in result.results} == {
        "pending-7f3a": "active",
        "chunk_0009": "pending",
        "chunk_0010": "active",
    }
    assert result.pending_chunks_recalled == 1
    data = result.to_json()
    assert data["pending_chunks_recalled"] == 1
    assert {r["chunk_id"]: r["source"] for r in data["results"]}["pending-7f3a"] == "active"
    assert set(data["results"][0]) == {"chunk_id", "source", "score", "summary", "events"}


def test_limit_and_tie_order() -> None:
    docs = [RecallDoc(f"c{i}", "active", "same text", []) for i in (3, 1, 2)]
    index = RecallIndex(docs)
    assert ids(index.search("same", limit=2)) == ["c1", "c2"]
    assert ids(index.search("same", limit=1)) == ["c1"]
    with pytest.raises(BadInputError):
        index.search("same", limit=0)


def test_empty_or_unknown_query_gives_nothing() -> None:
    index = RecallIndex(ALL)
    for query in ("", "   ", "!!!", "zebra"):
        result = index.search(query)
        assert result.results == [] and result.pending_chunks_recalled == 0
    assert RecallIndex([]).search("wifi").results == []


def test_bad_source_is_refused() -> None:
    with pytest.raises(ValueError):
        RecallDoc("x", "archive", "", [])  # type: ignore[arg-type]


def test_large_index_answers() -> None:
    """1,000 docs × 100 events: the right doc comes first (timing is measured, not asserted)."""
    docs = [
        RecallDoc(
            f"chunk_{d:04d}",
            "active",
            f"summary {d}",
            [ev(f"{d}-{i}", f"event {i} of chunk {d} filler text") for i in range(100)],
        )
        for d in range(1000)
    ]
    docs[617] = RecallDoc("chunk_0617", "active", "the needle zebra", docs[617].events)
    result = RecallIndex(docs).search("zebra needle")
    assert ids(result) == ["chunk_0617"]


def test_function_words_alone_match_nothing() -> None:
    """A query of common words must not surface a chunk just because it has them."""
    docs = [
        RecallDoc("chunk_0001", "active", "this is like the other one", []),
        RecallDoc("chunk_0002", "active", "wifi password for HomeNet", []),
    ]
    assert RecallIndex(docs).search("nothing-like-this").results == []
    assert [h.chunk_id for h in RecallIndex(docs).search("the wifi").results] == ["chunk_0002"]


# --- the tokenizer against the compound-by-compound walk it replaced ------------------------

_REF_CJK = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
    "\u3040-\u30ff\u31f0-\u31ff\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
)


def reference_tokens(text: str) -> list[str]:
    """Terms as specified: CJK bigrams, then each compound's parts, the compound and its
    joined pieces (split on `/ : @`, then on `.` and `-`), then CamelCase parts."""
    import re
    import unicodedata

    from core.recall.ranking import STOPWORDS, normalize

    original = unicodedata.normalize("NFKC", text)
    text = normalize(text)
    cjk_run = re.compile(f"[{_REF_CJK}]+")
    compound = re.compile(rf"(?:(?![{_REF_CJK}])[^\W_])+(?:[_.\-/:@]+(?:(?![{_REF_CJK}])[^\W_])+)*")
    out: list[str] = []
    for run in cjk_run.findall(text):
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    for match in compound.finditer(cjk_run.sub(" ", text)):
        parts = re.findall(r"[^\W_]+", match.group(0))
        out.extend(p for p in parts if p not in STOPWORDS)
        if len(parts) > 1:
            whole = match.group(0)
            out.append(whole)
            pieces: list[str] = []
            for seg in re.split(r"[/:@]+", whole):
                pieces.append(seg)
                pieces.extend(p for p in re.split(r"[.\-]+", seg) if "_" in p)
            out.extend(
                p for p in dict.fromkeys(pieces) if p != whole and re.search(r"[_.\-/:@]", p)
            )
    for word in re.findall(r"[A-Za-z0-9]+", original):
        camel = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", word)
        if len(camel) > 1 and re.search(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]", word):
            out.extend(p.lower() for p in camel if p.lower() not in STOPWORDS)
    return out


@pytest.mark.parametrize(
    "text",
    [
        "tail -f /var/log/app_main.log for the user@host.example",
        "会议记录 and 待办事项: Café-crème, naïve__x..y, a.b.c-d",
        "日本語のテキスト한국어 mixed_with-ascii/paths:8080",
        "trailing. joiners_ -only __ .. ::",
        "",
    ],
)
def test_tokenize_gives_the_terms_of_the_reference_walk(text: str) -> None:
    assert sorted(tokenize(text)) == sorted(reference_tokens(text))


def test_tokenize_matches_the_reference_on_random_text() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    alphabet = st.sampled_from([*"ab Z9_.-/:@ é会议记录日本한\n\t,;", "the", "log", "Ab", "XY"])

    @settings(max_examples=400, deadline=None)
    @given(st.lists(alphabet, max_size=40).map("".join))
    def check(text: str) -> None:
        assert sorted(tokenize(text)) == sorted(reference_tokens(text))

    check()
