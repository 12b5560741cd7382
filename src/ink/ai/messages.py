"""Provider-neutral conversation messages.

Every request to every provider is built from a list of these, and every headless mode shows them in
their JSON form (``to_json``). Messages are tagged by ``role``, content blocks by ``type``. All are frozen:
the history is changed by appending or replacing messages, never by mutating one.

JSON names are camelCase (``toolCallId``, ``isError``), Python names snake_case; ``jsonform`` converts.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import msgspec

from ink.ai.depth import MAX_JSON_DEPTH, too_deep
from ink.ai.details import ToolDetail, detail_from_json
from ink.ai.jsonform import to_json

StopReason: TypeAlias = Literal["stop", "length", "tool_use", "error", "aborted"]
UsageAccuracy: TypeAlias = Literal["estimated", "missing"]


class Usage(msgspec.Struct, frozen=True):
    """Token counts of one model call or a sum of several. ``cost_usd``: their price in US dollars, set
    once where a reply is assembled (``ink.ai.models.priced``); None when the model's prices are unknown,
    so a sum with an unknown part is unknown, never a silent zero.

    ``accuracy`` is None when the service reported the counts. ``"missing"``: it reported none (some
    compatible servers never do), so the zeros mean *unknown*; ``"estimated"``: counted by ink from the
    characters sent and received (a reply cut off by an abort or an error, before the service's count
    came). A sum is as accurate as its least accurate part."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = 0.0
    reasoning_tokens: int = 0  # the part of output_tokens the model spent reasoning (where reported)
    accuracy: UsageAccuracy | None = None
    json_always: ClassVar[tuple[str, ...]] = ("cost_usd",)  # written as null when unknown (ink.ai.jsonform)

    def __add__(self, other: Usage) -> Usage:
        known = self.cost_usd is not None and other.cost_usd is not None
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            (self.cost_usd or 0.0) + (other.cost_usd or 0.0) if known else None,
            self.reasoning_tokens + other.reasoning_tokens,
            _less_accurate(self.accuracy, other.accuracy),
        )

    @property
    def counts(self) -> bool:
        """True when the call used any tokens (one aborted before anything arrived costs nothing)."""
        tokens = (self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens)
        return any(tokens)

    @property
    def context_tokens(self) -> int:
        """Tokens the model had in its window for this call: prompt (cached or not) plus its reply."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens


def _less_accurate(a: UsageAccuracy | None, b: UsageAccuracy | None) -> UsageAccuracy | None:
    return "missing" if "missing" in (a, b) else a or b


class TextBlock(msgspec.Struct, frozen=True):
    """Text of an assistant message."""

    text: str
    type: Literal["text"] = "text"


class ThinkingBlock(msgspec.Struct, frozen=True):
    """Model reasoning. ``signature`` is Anthropic's opaque proof, required when the block is sent back.
    ``redacted``: reasoning the service encrypted (Anthropic ``redacted_thinking``); ``signature`` then
    holds its ``data``, which must be sent back unchanged in a tool loop."""

    thinking: str
    signature: str | None = None
    redacted: bool | None = None
    type: Literal["thinking"] = "thinking"


class ToolCall(msgspec.Struct, frozen=True):
    """``arguments_error`` says why the arguments the model sent could not be used (invalid or cut-off
    JSON, nesting too deep); ``arguments`` is then empty and the call is answered with that error
    instead of being run, so the model can send it again (docs/security.md, "Input boundaries")."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    arguments_error: str | None = None
    type: Literal["tool_call"] = "tool_call"


class ToolImage(msgspec.Struct, frozen=True):
    """An image a tool returned (an MCP server's screenshot, say) or the user attached: base64 ``data`` of
    ``mime_type``. Sent to models that take images (``ModelInfo.images``); for the others, the text of the
    message that carries it names it."""

    mime_type: str
    data: str
    type: Literal["image"] = "image"


AssistantBlock: TypeAlias = TextBlock | ThinkingBlock | ToolCall
UserKind: TypeAlias = Literal["prompt", "interruption", "summary", "context"]  # context: a hook added it


class UserMessage(msgspec.Struct, frozen=True):
    """Text from the user. ``kind`` marks ink's own user-role messages: the interruption marker (R23)
    and a compaction summary. ``input_id`` links a prompt to its ledger entry (R30, R31). ``images``: the
    images the user attached (``@shot.png``), sent to models that take images; the text names each one,
    so a model that does not take them still knows they were there."""

    text: str
    input_id: str | None = None
    kind: UserKind = "prompt"
    timestamp: float = msgspec.field(default_factory=time.time)
    images: tuple[ToolImage, ...] | None = None
    role: Literal["user"] = "user"


class AssistantMessage(msgspec.Struct, frozen=True):
    """One reply of the model: its blocks, why it stopped, and what it cost."""

    content: tuple[AssistantBlock, ...]
    stop_reason: StopReason
    model: str = ""
    provider: str = ""
    usage: Usage = msgspec.field(default_factory=Usage)
    error_message: str | None = None
    timestamp: float = msgspec.field(default_factory=time.time)
    role: Literal["assistant"] = "assistant"

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolCall))


class ToolResult(msgspec.Struct, frozen=True):
    """The one result of one tool call: a history message and the payload of ``tool_settled`` /
    ``tool_end``. ``interrupted`` is set only when an abort stopped the tool (R17, R33). ``details``: what
    the user is shown besides ``output`` (``ink.ai.details``); only ``output`` is ever sent to the model."""

    tool_call_id: str
    name: str
    output: str
    is_error: bool = False
    duration_ms: int = 0
    interrupted: bool | None = None
    details: tuple[ToolDetail, ...] | None = None
    images: tuple[ToolImage, ...] | None = None
    role: Literal["tool_result"] = "tool_result"


Message: TypeAlias = UserMessage | AssistantMessage | ToolResult


def message_to_json(message: Message) -> dict[str, Any]:
    data = to_json(message)
    assert isinstance(data, dict)
    return data


def message_from_json(data: Mapping[str, Any]) -> Message:
    """Parse the JSON form back. Raises ``ValueError`` with the reason on anything malformed."""
    try:
        match data["role"]:
            case "user":
                return UserMessage(
                    text=str(data["text"]),
                    input_id=data.get("inputId"),
                    kind=_user_kind(data.get("kind", "prompt")),
                    timestamp=float(data.get("timestamp", 0.0)),
                    images=_images_from_json(data.get("images")),
                )
            case "assistant":
                return AssistantMessage(
                    content=tuple(_block_from_json(b) for b in data["content"]),
                    stop_reason=data["stopReason"],
                    model=str(data.get("model", "")),
                    provider=str(data.get("provider", "")),
                    usage=usage_from_json(data.get("usage") or {}),
                    error_message=data.get("errorMessage"),
                    timestamp=float(data.get("timestamp", 0.0)),
                )
            case "tool_result":
                return ToolResult(
                    tool_call_id=str(data["toolCallId"]),
                    name=str(data["name"]),
                    output=str(data["output"]),
                    is_error=bool(data.get("isError", False)),
                    duration_ms=int(data.get("durationMs", 0)),
                    interrupted=data.get("interrupted"),
                    images=_images_from_json(data.get("images")),
                    details=_details_from_json(data.get("details")),
                )
            case other:
                raise ValueError(f"unknown message role {other!r}")
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed message: {exc!r}") from exc


def _details_from_json(value: object) -> tuple[ToolDetail, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ValueError("tool result details must be a list")
    return tuple(detail_from_json(item) for item in value)


def _images_from_json(data: Any) -> tuple[ToolImage, ...] | None:
    if not data:
        return None
    return tuple(ToolImage(str(item["mimeType"]), str(item["data"])) for item in data)


def _user_kind(value: object) -> UserKind:
    if value in ("prompt", "interruption", "summary", "context"):
        return value
    raise ValueError(f"unknown user message kind {value!r}")


def _block_from_json(data: Mapping[str, Any]) -> AssistantBlock:
    match data["type"]:
        case "text":
            return TextBlock(str(data["text"]))
        case "thinking":
            return ThinkingBlock(str(data["thinking"]), data.get("signature"), data.get("redacted") or None)
        case "tool_call":
            args = data["arguments"]
            if not isinstance(args, Mapping):
                raise ValueError("tool call arguments must be an object")
            problem = data.get("argumentsError")
            if too_deep(args):
                args, problem = {}, f"the arguments nest deeper than {MAX_JSON_DEPTH} levels"
            return ToolCall(
                str(data["id"]), str(data["name"]), dict(args), None if problem is None else str(problem)
            )
        case other:
            raise ValueError(f"unknown content block type {other!r}")


def usage_from_json(data: Mapping[str, Any]) -> Usage:
    return Usage(
        input_tokens=int(data.get("inputTokens", 0)),
        output_tokens=int(data.get("outputTokens", 0)),
        cache_read_tokens=int(data.get("cacheReadTokens", 0)),
        cache_write_tokens=int(data.get("cacheWriteTokens", 0)),
        cost_usd=None if data.get("costUsd", 0.0) is None else float(data.get("costUsd", 0.0)),
        reasoning_tokens=int(data.get("reasoningTokens", 0)),
        accuracy=_accuracy(data.get("accuracy")),
    )


def _accuracy(value: object) -> UsageAccuracy | None:
    if value is None or value in ("estimated", "missing"):
        return value
    raise ValueError(f"unknown usage accuracy {value!r}")
