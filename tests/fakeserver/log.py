"""The request log: what each request was, and what happened to its answer.

Times are ``time.monotonic()`` of this process, so an in-process test can compare them with its own
measurements (for example the moment it cancelled a stream).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

Protocol = Literal["openai", "anthropic", "responses", "unknown"]


class Flag(threading.Event):
    """A ``threading.Event`` that is also truthy when set, so ``if request.finished:`` means what it says
    (a plain Event object would always be true)."""

    def __bool__(self) -> bool:
        return self.is_set()


Outcome = Literal["in_progress", "completed", "client_left", "disconnected", "error", "gate_timeout"]


@dataclass(eq=False)
class RecordedRequest:
    """One request the fake server received.

    ``peer`` is the client's (host, port): equal ports mean one reused connection.
    ``outcome``: ``completed`` (the whole stream was written), ``client_left`` (the client closed the
    connection before the end: write failure, or EOF seen while the stream was held or paused),
    ``disconnected`` (the script cut the connection), ``error`` (an HTTP error answer: scripted fault,
    strict mode, auth, script exhausted; ``error_message`` holds its message), ``gate_timeout``.
    """

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw_body: bytes
    protocol: Protocol
    peer: tuple[str, int] = ("", 0)
    received_at: float = field(default_factory=time.monotonic)
    status: int = 0
    outcome: Outcome = "in_progress"
    error_message: str | None = None
    chunks_sent: int = 0
    client_left_at: float | None = None
    finished_at: float | None = None
    finished: Flag = field(default_factory=Flag)
    client_left: Flag = field(default_factory=Flag)

    def finish(self, outcome: Outcome) -> None:
        now = time.monotonic()
        if outcome == "client_left":
            self.client_left_at = now
            self.client_left.set()
        self.outcome = outcome
        self.finished_at = now
        self.finished.set()

    def wait_finished(self, timeout: float = 10.0) -> Outcome:
        """Block until the answer is over; returns the outcome. Raises ``TimeoutError``."""
        if not self.finished.wait(timeout):
            raise TimeoutError(f"request {self.index} still in progress after {timeout}s")
        return self.outcome

    async def wait_finished_async(self, timeout: float = 10.0) -> Outcome:
        return await asyncio.to_thread(self.wait_finished, timeout)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation in Chat Completions / Messages shape; a Responses ``input`` is mapped to it
        (user and assistant messages, ``tool`` results, assistant ``tool_calls``) so the helpers below
        read all three protocols."""
        if self.protocol == "responses":
            return _responses_as_messages(self.body)
        msgs = self.body.get("messages") if isinstance(self.body, dict) else None
        return msgs if isinstance(msgs, list) else []

    def user_texts(self) -> list[str]:
        """Texts of the user messages in order (both protocols), tool results excluded. One user message
        with several text blocks gives one entry per block."""
        out: list[str] = []
        for m in self.messages:
            if m.get("role") == "user":
                out.extend(_texts(m.get("content")))
        return out

    def tool_results(self) -> list[tuple[str, str]]:
        """``(tool_call_id, text)`` of every tool result in the request, in order (both protocols)."""
        out: list[tuple[str, str]] = []
        for m in self.messages:
            if m.get("role") == "tool":
                out.append((str(m.get("tool_call_id")), "".join(_texts(m.get("content")))))
            elif m.get("role") == "user" and isinstance(m.get("content"), list):
                for block in m["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        out.append((str(block.get("tool_use_id")), "".join(_texts(block.get("content")))))
        return out

    def tool_call_ids(self) -> list[str]:
        """Ids of the assistant tool calls in the request, in order (both protocols)."""
        out: list[str] = []
        for m in self.messages:
            if m.get("role") != "assistant":
                continue
            for call in m.get("tool_calls") or []:
                out.append(str(call.get("id")))
            if isinstance(m.get("content"), list):
                out.extend(str(b.get("id")) for b in m["content"] if b.get("type") == "tool_use")
        return out

    @property
    def system(self) -> str:
        """The system prompt, wherever the protocol puts it."""
        if self.protocol == "anthropic" and isinstance(self.body, dict):
            return "".join(_texts(self.body.get("system")))
        if self.protocol == "responses" and isinstance(self.body, dict):
            return str(self.body.get("instructions") or "")
        return "".join(
            t
            for m in self.messages
            if m.get("role") in ("system", "developer")
            for t in _texts(m.get("content"))
        )


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") in ("text", "input_text") and isinstance(b.get("text"), str)
    ]


def _responses_as_messages(body: Any) -> list[dict[str, Any]]:
    items = body.get("input") if isinstance(body, dict) else None
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    out: list[dict[str, Any]] = []
    for item in items if isinstance(items, list) else []:
        kind = item.get("type", "message")
        if kind == "message":
            content = item.get("content")
            if isinstance(content, list):
                content = [{"type": "text", "text": p.get("text")} for p in content if isinstance(p, dict)]
            out.append({"role": item.get("role"), "content": content})
        elif kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")})
        elif kind == "function_call":
            out.append({"role": "assistant", "tool_calls": [{"id": item.get("call_id")}]})
    return out
