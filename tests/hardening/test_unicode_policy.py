"""The replacement policy itself (ink.ai.unicode, docs/security.md "Input boundaries")."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from ink.ai.messages import AssistantMessage, TextBlock, ThinkingBlock, ToolCall, ToolResult, UserMessage
from ink.ai.unicode import decode_bytes, sendable_json, sendable_message, sendable_text


def test_each_kind_of_surrogate_has_one_replacement() -> None:
    assert sendable_text("a\udce9b") == "a\\xe9b"  # surrogate escape: the byte it stands for
    assert sendable_text("a\ud800b\udc00") == "a\ufffdb\ufffd"  # any other lone surrogate
    assert sendable_text("\ud83d\ude00") == "\U0001f600"  # a split pair is joined
    assert decode_bytes(b"caf\xe9 \xc3\xa9") == "caf\\xe9 \u00e9"


def test_text_without_surrogates_is_returned_as_the_same_object() -> None:
    text = "plain \u00e9 text"
    assert sendable_text(text) is text
    message = UserMessage("fine")
    assert sendable_message(message) is message


def test_every_text_a_message_carries_is_made_sendable() -> None:
    call = ToolCall("c1", "x", {"k\ud800": ["v\udce9"]})
    reply = AssistantMessage(
        (TextBlock("t\ud800"), ThinkingBlock("th\udfff", "sig"), call),
        "tool_use",
        error_message="e\ud800",
    )
    fixed = sendable_message(reply)
    json.dumps([repr(fixed)]).encode("utf-8")
    assert fixed.content == (
        TextBlock("t\ufffd"),
        ThinkingBlock("th\ufffd", "sig"),
        ToolCall("c1", "x", {"k\ufffd": ["v\\xe9"]}),
    )
    assert fixed.error_message == "e\ufffd"
    result = sendable_message(ToolResult("c1", "read", "out\udcff"))
    assert result.output == "out\\xff"


def test_a_json_text_without_surrogate_escapes_is_not_walked() -> None:
    value = {"a": ["b"]}
    assert sendable_json(value, '{"a":["b"]}') is value
    assert sendable_json(json.loads('{"a":["\\ud800"]}'), '{"a":["\\ud800"]}') == {"a": ["\ufffd"]}


@given(st.text())
def test_any_text_becomes_encodable_and_clean_text_is_unchanged(text: str) -> None:
    fixed = sendable_text(text)
    fixed.encode("utf-8")
    assert sendable_text(fixed) == fixed
    if "\\" not in text:  # escapes are the only thing the policy adds
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return
        assert fixed == text


@given(st.binary())
def test_any_bytes_decode_to_encodable_text_that_names_them(data: bytes) -> None:
    text = decode_bytes(data)
    text.encode("utf-8")
    if b"\\" not in data:  # then every backslash is an escape, and the escapes give the bytes back
        unescaped = re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(0xDC00 + int(m.group(1), 16)), text)
        assert unescaped.encode("utf-8", "surrogateescape") == data
