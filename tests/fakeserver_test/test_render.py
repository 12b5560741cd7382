"""Both protocols render the same neutral script as the real services stream it."""

from __future__ import annotations

import json

from tests.fakeserver import FakeModelServer, Reply, Usage, text, thinking, tool_call
from tests.fakeserver_test.client import (
    anthropic_body,
    anthropic_events,
    openai_body,
    openai_chunks,
    post,
)

SCRIPT = Reply(
    [
        thinking("let me "),
        thinking("see"),
        text("Hello "),
        text("world"),
        tool_call("read", {"path": "a.txt"}, id="c1", pieces=3),
        tool_call("bash", {"command": "ls -la"}, id="c2", pieces=4),
    ],
    usage=Usage(input_tokens=11, output_tokens=7, cache_read_tokens=5, cache_write_tokens=3),
)


def test_openai_stream_shape(fake_server: FakeModelServer) -> None:
    fake_server.script(SCRIPT)
    response = post(fake_server, "openai", openai_body())
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = openai_chunks(response)
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert deltas[0]["role"] == "assistant"
    assert "".join(d.get("content") or "" for d in deltas) == "Hello world"
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == "let me see"
    calls: dict[int, dict[str, str]] = {}
    pieces: dict[int, int] = {}
    for d in deltas:
        for tc in d.get("tool_calls", []):
            entry = calls.setdefault(tc["index"], {"id": "", "name": "", "args": ""})
            entry["id"] += tc.get("id", "")
            entry["name"] += tc.get("function", {}).get("name", "")
            entry["args"] += tc["function"]["arguments"]
            pieces[tc["index"]] = pieces.get(tc["index"], 0) + bool(tc["function"]["arguments"])
    assert calls[0] == {"id": "c1", "name": "read", "args": json.dumps({"path": "a.txt"})}
    assert json.loads(calls[1]["args"]) == {"command": "ls -la"}
    assert pieces == {0: 3, 1: 4}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    usage = chunks[-1]["usage"]
    assert chunks[-1]["choices"] == []
    assert usage["prompt_tokens"] == 16 and usage["prompt_tokens_details"]["cached_tokens"] == 5
    assert usage["completion_tokens"] == 7


def test_openai_without_include_usage_sends_no_usage_chunk(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply([text("hi")]))
    body = openai_body()
    del body["stream_options"]
    chunks = openai_chunks(post(fake_server, "openai", body))
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_anthropic_stream_shape(fake_server: FakeModelServer) -> None:
    fake_server.script(SCRIPT)
    events = anthropic_events(post(fake_server, "anthropic", anthropic_body()))
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["message_start", "ping"]
    assert kinds[-2:] == ["message_delta", "message_stop"]
    start_usage = events[0]["message"]["usage"]
    assert start_usage["input_tokens"] == 11
    assert start_usage["cache_read_input_tokens"] == 5
    assert start_usage["cache_creation_input_tokens"] == 3
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    assert events[-2]["usage"]["output_tokens"] == 7
    blocks = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert blocks[2]["id"] == "c1" and blocks[2]["input"] == {}
    deltas = [e for e in events if e["type"] == "content_block_delta"]
    by_index: dict[int, list[dict[str, str]]] = {}
    for d in deltas:
        by_index.setdefault(d["index"], []).append(d["delta"])
    assert "".join(d.get("thinking", "") for d in by_index[0]) == "let me see"
    assert by_index[0][-1] == {"type": "signature_delta", "signature": "sig-fake"}
    assert "".join(d["text"] for d in by_index[1]) == "Hello world"
    assert json.loads("".join(d["partial_json"] for d in by_index[2])) == {"path": "a.txt"}
    assert len([d for d in by_index[3] if d["partial_json"]]) == 4
    stops = [e["index"] for e in events if e["type"] == "content_block_stop"]
    assert stops == [0, 1, 2, 3]


def test_anthropic_text_reply_ends_turn(fake_server: FakeModelServer) -> None:
    fake_server.script("just text")
    events = anthropic_events(post(fake_server, "anthropic", anthropic_body()))
    assert events[-2]["delta"]["stop_reason"] == "end_turn"


def test_explicit_stop_reason_is_mapped_per_protocol(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply([text("cut")], stop="length"), Reply([text("cut")], stop="length"))
    chunks = openai_chunks(post(fake_server, "openai", openai_body()))
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    events = anthropic_events(post(fake_server, "anthropic", anthropic_body()))
    assert events[-2]["delta"]["stop_reason"] == "max_tokens"


def test_malformed_tool_arguments_are_sent_verbatim(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply([tool_call("read", '{"path": ', pieces=2)]))
    chunks = openai_chunks(post(fake_server, "openai", openai_body()))
    args = "".join(
        tc["function"]["arguments"]
        for c in chunks
        if c["choices"]
        for tc in c["choices"][0]["delta"].get("tool_calls", [])
    )
    assert args == '{"path": '
