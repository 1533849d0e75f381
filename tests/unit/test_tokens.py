"""Token estimate (contract §3): cjk + ceil(other / 4), and the per-event estimate."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.tokens import EVENT_OVERHEAD_TOKENS, estimate_event_tokens, estimate_tokens

# The contract's ranges, written out independently of core/tokens.py.
CJK_RANGES = [
    (0x3400, 0x4DBF),  # Han Extension A
    (0x4E00, 0x9FFF),  # Han
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0x20000, 0x2FA1F),  # Han Extension B .. compatibility supplement
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x31F0, 0x31FF),  # katakana phonetic extensions
    (0x1100, 0x11FF),  # Hangul jamo
    (0x3130, 0x318F),  # Hangul compatibility jamo
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0xFF00, 0xFFEF),  # half-width and full-width forms
]


def reference_estimate(text: str) -> int:
    cjk = 0
    other = 0
    for ch in text:
        if any(lo <= ord(ch) <= hi for lo, hi in CJK_RANGES):
            cjk += 1
        else:
            other += 1
    return cjk + math.ceil(other / 4)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("你好世界", 4),  # Han
        ("㐀䶿", 2),  # Extension A, first and last
        ("\U00020000\U0002a6d6", 2),  # Extension B (non-BMP)
        ("\U0002fa1f", 1),  # last of the supplement
        ("豈\ufaff", 2),  # compatibility ideographs
        ("ひらがな", 4),  # hiragana
        ("カタカナ", 4),  # katakana
        ("ㇰㇿ", 2),  # katakana phonetic extensions
        ("\u1100\u11ff", 2),  # Hangul jamo
        ("ㄱㆎ", 2),  # Hangul compatibility jamo
        ("한국어", 3),  # Hangul syllables
        ("、。「」\u3000", 5),  # CJK punctuation, ideographic space
        ("ＡＢＣ！ｶ", 5),  # full-width forms and a half-width katakana
    ],
)
def test_each_cjk_script_counts_one_per_code_point(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected


@pytest.mark.parametrize(
    "cp",
    [
        0x33FF,
        0x4DC0,
        0x4DFF,
        0xA000,
        0xF8FF,
        0xFB00,
        0x1FFFF,
        0x2FA20,
        0x3100,
        0x2FFF,
        0x31EF,
        0x3200,
        0x10FF,
        0x1200,
        0x312F,
        0x3190,
        0xABFF,
        0xD7B0,
        0xFEFF,
        0xFFF0,
    ],
)
def test_code_points_just_outside_the_ranges_count_as_other(cp: int) -> None:
    assert estimate_tokens(chr(cp) * 4) == 1
    assert estimate_tokens(chr(cp) * 5) == 2


@pytest.mark.parametrize(
    "cp",
    [
        0x3400,
        0x4DBF,
        0x4E00,
        0x9FFF,
        0xF900,
        0xFAFF,
        0x20000,
        0x2FA1F,
        0x3040,
        0x30FF,
        0x31F0,
        0x31FF,
        0x1100,
        0x11FF,
        0x3130,
        0x318F,
        0xAC00,
        0xD7AF,
        0x3000,
        0x303F,
        0xFF00,
        0xFFEF,
    ],
)
def test_first_and_last_code_point_of_each_range_count_as_cjk(cp: int) -> None:
    assert estimate_tokens(chr(cp) * 4) == 4


@pytest.mark.parametrize(("n", "expected"), [(0, 0), (1, 1), (2, 1), (3, 1), (4, 1), (5, 2)])
def test_other_characters_round_up_per_four(n: int, expected: int) -> None:
    assert estimate_tokens("a" * n) == expected
    assert estimate_tokens("é" * n) == expected  # Latin beyond ASCII: same rule


def test_empty_string_is_zero() -> None:
    assert estimate_tokens("") == 0


def test_emoji_and_lone_surrogate_are_other() -> None:
    assert estimate_tokens("😀") == 1
    assert estimate_tokens("😀😀😀😀😀") == 2
    assert estimate_tokens("\ud800") == 1


def test_mixed_text_adds_cjk_to_rounded_up_other() -> None:
    # 你好 (2 cjk) + "hello, " (7 other) + 世界 (2 cjk) + "!" (1 other) → 4 + ceil(8/4)
    assert estimate_tokens("你好hello, 世界!") == 6
    # other is counted across the whole text, not per run: 3 runs of 1 char → ceil(3/4) = 1
    assert estimate_tokens("a中b中c") == 3


@settings(deadline=None)  # a loaded CI machine must not fail on time
@given(st.text())
def test_matches_a_naive_per_character_count(text: str) -> None:
    assert estimate_tokens(text) == reference_estimate(text)


@settings(deadline=None)  # a loaded CI machine must not fail on time
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(min_codepoint=0x1000, max_codepoint=0x12000),
            st.characters(min_codepoint=0x1FFF0, max_codepoint=0x2FA30),
            st.sampled_from("ab \n"),
        )
    )
)
def test_matches_the_reference_near_the_ranges(text: str) -> None:
    assert estimate_tokens(text) == reference_estimate(text)


def _parts(event: dict[str, object]) -> int:
    """The contract's estimate without the overhead."""
    content = event.get("content")
    text = (
        content
        if isinstance(content, str)
        else json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    )
    total = reference_estimate(text)
    if isinstance(event.get("name"), str):
        total += reference_estimate(str(event["name"]))
    args = event.get("arguments")
    if args is not None:
        total += reference_estimate(
            args
            if isinstance(args, str)
            else json.dumps(args, ensure_ascii=False, separators=(",", ":"))
        )
    return total


def test_event_overhead_is_a_documented_constant_of_at_most_eight() -> None:
    assert 0 <= EVENT_OVERHEAD_TOKENS <= 8
    assert estimate_event_tokens({"type": "user_input", "content": ""}) == EVENT_OVERHEAD_TOKENS


def test_string_content_is_counted_as_is() -> None:
    event = {"type": "user_input", "content": "你好 world"}
    # 2 cjk + ceil(6/4) = 4
    assert estimate_event_tokens(event) == 4 + EVENT_OVERHEAD_TOKENS


def test_object_content_is_counted_as_compact_json_keeping_utf8() -> None:
    event = {"type": "tool_result", "content": {"k": "中文"}}
    # {"k":"中文"} → 2 cjk + 8 other ({"k":""}) → 2 + 2
    assert estimate_event_tokens(event) == 4 + EVENT_OVERHEAD_TOKENS
    # with \u escapes it would be 22 ASCII characters instead (6 tokens): not what is counted
    assert estimate_event_tokens(event) != 6 + EVENT_OVERHEAD_TOKENS


def test_name_and_compact_arguments_are_counted() -> None:
    event = {
        "type": "tool_call",
        "name": "search",
        "arguments": {"q": "天气", "n": 3},
        "content": None,
    }
    # content null → "null" (1); name "search" (2); {"q":"天气","n":3} → 2 cjk + 14 other (4)
    assert estimate_event_tokens(event) == 1 + 2 + 6 + EVENT_OVERHEAD_TOKENS


def test_string_arguments_are_counted_as_is() -> None:
    event = {"type": "tool_call", "name": "ab", "arguments": '{"x": 1}', "content": ""}
    assert estimate_event_tokens(event) == 1 + 2 + EVENT_OVERHEAD_TOKENS


@settings(deadline=None)  # a loaded CI machine must not fail on time
@given(
    content=st.one_of(
        st.none(),
        st.text(),
        st.dictionaries(st.text(max_size=5), st.one_of(st.text(), st.integers()), max_size=4),
        st.lists(st.integers(), max_size=4),
    ),
    name=st.one_of(st.none(), st.text(max_size=10)),
    arguments=st.one_of(st.none(), st.text(max_size=20), st.dictionaries(st.text(), st.text())),
)
def test_event_estimate_is_parts_plus_the_same_overhead(
    content: object, name: str | None, arguments: object
) -> None:
    event: dict[str, object] = {"type": "tool_call", "content": content}
    if name is not None:
        event["name"] = name
    if arguments is not None:
        event["arguments"] = arguments
    assert estimate_event_tokens(event) == _parts(event) + EVENT_OVERHEAD_TOKENS
