"""Messages and stores for the session tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ink.ai.anthropic_convert import anthropic_body
from ink.ai.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    message_to_json,
)
from ink.ai.openai_convert import openai_body
from ink.ai.provider import ModelRequest, ToolSpec
from ink.store import SessionStore
from tests.fakeserver import check_anthropic_history, check_openai_history

READ = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def store(tmp_path: Path, **kwargs: Any) -> SessionStore:
    return SessionStore(tmp_path / "sessions", **kwargs)


def project(tmp_path: Path, name: str = "project") -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def calls(*ids: str) -> AssistantMessage:
    return AssistantMessage(
        (TextBlock("Let me look."), *(ToolCall(i, "read", {"path": f"{i}.txt"}) for i in ids)),
        "tool_use",
        model="fake-model",
        provider="openai",
        usage=Usage(100, 20, 5, 1),
    )


def result(call_id: str, output: str = "contents") -> ToolResult:
    return ToolResult(call_id, "read", output, duration_ms=3)


def answer(text: str = "Done.") -> AssistantMessage:
    return AssistantMessage(
        (TextBlock(text),), "stop", model="fake-model", provider="openai", usage=Usage(50, 5)
    )


def conversation() -> list[Message]:
    """Every kind of message the history holds."""
    return [
        UserMessage("fix the bug", input_id="in-1"),
        AssistantMessage(
            (
                ThinkingBlock("hmm", signature="sig"),
                TextBlock("Looking."),
                ToolCall("c1", "read", {"path": "a"}),
            ),
            "tool_use",
            model="fake-model",
            provider="anthropic",
            usage=Usage(10, 5, 2, 1),
        ),
        ToolResult("c1", "read", "partial", is_error=True, duration_ms=7, interrupted=True),
        UserMessage("[interrupted by the user]", kind="interruption"),
        UserMessage("summary of before", kind="summary"),
        answer(),
    ]


def as_json(messages: list[Message] | tuple[Message, ...]) -> list[dict[str, Any]]:
    return [message_to_json(m) for m in messages]


def strict_errors(messages: list[Message] | tuple[Message, ...]) -> list[str | None]:
    """What the fake server's strict mode says of a request built from ``messages``, per protocol."""
    request = ModelRequest("fake-model", "be brief", list(messages), (READ,), 1000)
    return [check_openai_history(openai_body(request)), check_anthropic_history(anthropic_body(request))]


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()
