"""A deliberately small SSE client for testing the fake server on its own (independent of ink.ai)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.fakeserver import FakeModelServer


def openai_body(messages: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-fake",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": messages or [{"role": "user", "content": "hi"}],
        **extra,
    }


def anthropic_body(messages: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-fake",
        "max_tokens": 100,
        "stream": True,
        "messages": messages or [{"role": "user", "content": "hi"}],
        **extra,
    }


def post(server: FakeModelServer, protocol: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    path = "/chat/completions" if protocol == "openai" else "/v1/messages"
    return httpx.post(server.base_url(protocol) + path, json=body, headers=headers, timeout=10)


def sse_events(response: httpx.Response) -> list[tuple[str | None, str]]:
    """``(event name, data)`` pairs of a complete SSE body."""
    out: list[tuple[str | None, str]] = []
    for block in response.text.split("\n\n"):
        if not block.strip():
            continue
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        out.append((name, "\n".join(data)))
    return out


def openai_chunks(response: httpx.Response) -> list[Any]:
    events = [data for _, data in sse_events(response)]
    assert events[-1] == "[DONE]"
    return [json.loads(d) for d in events[:-1]]


def anthropic_events(response: httpx.Response) -> list[dict[str, Any]]:
    out = []
    for name, data in sse_events(response):
        obj = json.loads(data)
        assert obj["type"] == name, "the SSE event name matches the data's type"
        out.append(obj)
    return out
