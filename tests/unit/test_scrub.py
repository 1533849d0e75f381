"""Screenshot scrubbing (contract §2): payload out, metadata kept, marked, idempotent, pure."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.scrub import strip_screenshot_data

PAYLOAD = "iVBORw0KGgoAAAANSUhEUgAA" * 200


def screenshot_result(**overrides: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": "ev_1",
        "type": "tool_result",
        "role": "tool",
        "name": "screenshot",
        "tool_call_id": "c1",
        "content": {
            "data": PAYLOAD,
            "width": 1280,
            "height": 800,
            "format": "png",
            "size": 48213,
            "action_output": "captured",
        },
        "x_custom": [1, 2],
    }
    event.update(overrides)
    return event


def test_named_screenshot_loses_data_and_keeps_everything_else() -> None:
    out = strip_screenshot_data(screenshot_result())
    assert out["content"] == {
        "width": 1280,
        "height": 800,
        "format": "png",
        "size": 48213,
        "action_output": "captured",
    }
    assert out["meta"] == {"scrubbed": True}
    for key in ("id", "type", "role", "name", "tool_call_id", "x_custom"):
        assert out[key] == screenshot_result()[key]


def test_named_screenshot_with_data_only_is_scrubbed() -> None:
    out = strip_screenshot_data(screenshot_result(content={"data": PAYLOAD}))
    assert out["content"] == {}
    assert out["meta"]["scrubbed"] is True


@pytest.mark.parametrize("beside", ["width", "height", "format"])
def test_data_beside_image_metadata_is_scrubbed_whatever_the_tool_name(beside: str) -> None:
    event = screenshot_result(name="capture_screen", content={"data": PAYLOAD, beside: 1})
    out = strip_screenshot_data(event)
    assert out["content"] == {beside: 1}
    assert out["meta"]["scrubbed"] is True


@pytest.mark.parametrize("name", ["screenshot", "take_photo"])
def test_json_string_content_is_scrubbed_and_written_back_compact(name: str) -> None:
    text = json.dumps({"data": PAYLOAD, "width": 10, "format": "png", "caption": "主页"}, indent=2)
    out = strip_screenshot_data(screenshot_result(name=name, content="  \n" + text))
    assert out["content"] == '{"width":10,"format":"png","caption":"主页"}'
    assert out["meta"]["scrubbed"] is True


def test_existing_meta_keys_are_kept() -> None:
    event = screenshot_result(meta={"run": "r1", "scrubbed": False})
    out = strip_screenshot_data(event)
    assert out["meta"] == {"run": "r1", "scrubbed": True}


def test_input_is_never_mutated() -> None:
    event = screenshot_result(meta={"run": "r1"})
    before = copy.deepcopy(event)
    out = strip_screenshot_data(event)
    assert event == before
    assert out["content"] is not event["content"]
    assert out["meta"] is not event["meta"]


def test_applying_twice_equals_once() -> None:
    for event in (
        screenshot_result(),
        screenshot_result(content=json.dumps({"data": "x", "height": 2})),
        screenshot_result(name="other", content={"data": "x", "format": "jpg"}),
    ):
        once = strip_screenshot_data(event)
        assert strip_screenshot_data(once) == once


@pytest.mark.parametrize(
    "event",
    [
        # a tool_result carrying data, but nothing says it is an image
        {"type": "tool_result", "name": "fetch", "content": {"data": "abc", "status": 200}},
        {"type": "tool_result", "name": "fetch", "content": '{"data": "abc", "rows": 3}'},
        # not a tool_result at all
        {"type": "tool_call", "name": "screenshot", "arguments": {"data": "x", "width": 1}},
        {"type": "tool_call", "name": "upload", "content": {"data": "x", "width": 1}},
        {"type": "user_input", "content": {"data": "x", "width": 1}},
        {"type": "assistant_output", "name": "screenshot", "content": {"data": "x"}},
    ],
)
def test_other_events_are_returned_unchanged(event: dict[str, Any]) -> None:
    before = copy.deepcopy(event)
    out = strip_screenshot_data(event)
    assert out == before
    assert "meta" not in out


@pytest.mark.parametrize(
    "content",
    [
        None,
        [{"data": "x", "width": 1}],
        42,
        3.5,
        True,
        "plain text output",
        "{not json",
        '{"a": ',
        "[1, 2, 3]",
        '  ["data", "width"]',
        "{" * 10_000,
        '{"a":' * 5_000 + "1" + "}" * 5_000,
        "x" * 2_000_000,
        "",
    ],
)
def test_odd_content_on_a_screenshot_result_never_raises(content: Any) -> None:
    event = screenshot_result(content=content)
    out = strip_screenshot_data(event)
    assert out["content"] == content
    assert "meta" not in out


def test_screenshot_result_without_data_is_left_as_is() -> None:
    """Nothing was dropped, so it is not marked (a scrubbed event is one that lost a payload)."""
    event = screenshot_result(content={"width": 1, "height": 2})
    assert strip_screenshot_data(event) == event


def test_meta_that_is_not_an_object_is_not_overwritten() -> None:
    out = strip_screenshot_data(screenshot_result(meta="kept as is"))
    assert "data" not in out["content"]
    assert out["meta"] == "kept as is"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
image_like = st.fixed_dictionaries(
    {"data": st.text(max_size=30)},
    optional={
        "width": st.integers(),
        "height": st.integers(),
        "format": st.text(max_size=4),
        "size": st.integers(),
    },
)
contents = st.one_of(
    image_like,
    image_like.map(json.dumps),
    json_values,
    json_values.map(json.dumps),
    st.text(max_size=50),
)
events = st.fixed_dictionaries(
    {
        "type": st.just("tool_result") | st.sampled_from(["tool_call", "user_input", "odd", ""]),
        "content": contents,
        "name": st.just("screenshot") | st.text(max_size=8) | st.none(),
    },
    optional={
        "meta": st.one_of(st.none(), st.dictionaries(st.text(max_size=5), json_values, max_size=2)),
        "role": st.sampled_from(["tool", "user"]),
    },
)


@settings(deadline=None)  # a loaded CI machine must not fail on time
@given(events)
def test_scrub_is_idempotent_pure_and_total(event: dict[str, Any]) -> None:
    before = copy.deepcopy(event)
    once = strip_screenshot_data(event)
    assert event == before
    assert strip_screenshot_data(once) == once
    content = once["content"]
    if isinstance(content, dict) and "data" in content:
        assert not (once.get("type") == "tool_result" and once.get("name") == "screenshot")
        assert not (
            once.get("type") == "tool_result" and {"width", "height", "format"} & set(content)
        )
    if once is not event:
        assert once["meta"]["scrubbed"] is True
        assert {k: v for k, v in once.items() if k not in ("content", "meta")} == {
            k: v for k, v in event.items() if k not in ("content", "meta")
        }
