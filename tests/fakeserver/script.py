"""The protocol-neutral script of a fake model reply.

A ``Reply`` is a list of steps (text, thinking, tool calls, and control steps such as gates and
disconnects) plus usage, stop reason and an optional fault. The server renders it into whichever
protocol the request used (OpenAI Chat Completions or Anthropic Messages), one SSE event per step piece.

    Reply([text("Hello "), text("world"), tool_call("read", {"path": "a.txt"}, pieces=3)],
          usage=Usage(input_tokens=10, output_tokens=5))
    Fault.http(429, retry_after=0.01)       # an HTTP error answer instead of a stream
    Reply([text("Hi")], fault=Fault.disconnect_after(2))

Control steps are honoured at their position in the stream: ``gate`` holds the stream open until the
test opens it (the server notices the client leaving meanwhile), ``disconnect`` cuts the connection,
``malformed`` writes a broken event, ``pause`` sleeps (simulated slowness only).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias


@dataclass(frozen=True)
class Usage:
    """Token counts the fake reports; rendered as each protocol spells them (OpenAI's prompt_tokens
    includes cached tokens, Anthropic reports them apart)."""

    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Thinking:
    """Reasoning text. Anthropic: a thinking block closed with a ``signature_delta`` (unless ``signature``
    is None); OpenAI-compatible: ``reasoning_content`` deltas (the signature is not sent)."""

    text: str
    signature: str | None = "sig-fake"


@dataclass(frozen=True)
class ToolCallStep:
    """A tool call whose JSON arguments arrive split in ``pieces`` chunks. ``args`` given as a string is
    sent verbatim (to script malformed arguments)."""

    name: str
    args: Mapping[str, Any] | str
    id: str | None = None
    pieces: int = 3


@dataclass(frozen=True)
class Disconnect:
    """Cut the connection here, mid-stream (no terminating chunk). ``clean``: end the HTTP body properly
    instead, as a proxy that gives up might, so only the protocol's own end event is missing."""

    clean: bool = False


@dataclass(frozen=True)
class Malformed:
    """Write one SSE ``data:`` line with this raw payload (invalid JSON or a wrong shape)."""

    raw: str = '{"broken": '
    event: str | None = None


@dataclass(frozen=True)
class Raw:
    """Write these bytes as they are (for SSE framing tests)."""

    data: bytes


@dataclass(frozen=True)
class Pause:
    """Sleep inside the server: simulated slow generation, never used for test synchronisation."""

    seconds: float


@dataclass(frozen=True)
class Chatter:
    """From here on, events that carry no content, every ``interval``, until the client leaves (cut after
    ``seconds``, so a test bug fails instead of hanging); each counts in ``chunks_sent``. Per protocol
    (``tests/fakeserver/contentless.py``): OpenAI chunks with empty ``choices``, a role-only delta and
    ``""`` deltas; Anthropic ``ping``, an empty text block with an empty delta, an empty ``message_delta``;
    Responses ``response.in_progress`` and ``""`` deltas; SSE comments for all."""

    interval: float = 0.01
    seconds: float = 30.0


class Gate:
    """A point where the stream holds until the test opens it.

    ``reached`` is set when the stream arrives here (everything before has been written and flushed);
    ``open()`` lets it continue. While held, the server watches the socket and records a client that
    leaves. If never opened within ``timeout`` seconds the server cuts the connection, so a test bug
    shows up as a failure instead of a hang.
    """

    def __init__(self, timeout: float = 30.0) -> None:
        self.reached = threading.Event()
        self.opened = threading.Event()
        self.timeout = timeout

    def open(self) -> None:
        self.opened.set()

    def wait_reached(self, timeout: float = 10.0) -> None:
        """Block until the stream is held here. Raises ``TimeoutError``."""
        if not self.reached.wait(timeout):
            raise TimeoutError("the fake server's stream never reached the gate")

    async def wait_reached_async(self, timeout: float = 10.0) -> None:
        import asyncio

        await asyncio.to_thread(self.wait_reached, timeout)


Step: TypeAlias = Text | Thinking | ToolCallStep | Gate | Disconnect | Malformed | Raw | Pause | Chatter
FaultKind: TypeAlias = Literal[
    "http", "disconnect", "end", "malformed", "stall", "context_overflow", "hang", "keep_alive", "empty"
]


@dataclass(frozen=True)
class Fault:
    """A failure of one reply. Build with the static constructors."""

    kind: FaultKind
    status: int = 0
    message: str | None = None
    retry_after: float | None = None
    error_type: str | None = None
    code: str | None = None
    after: int = 0
    raw: str = '{"broken": '
    gate: Gate | None = None
    seconds: float = 30.0  # hang / keep_alive: how long before the server gives up itself
    interval: float = 0.01  # keep_alive: between two keep-alives

    @staticmethod
    def http(
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        error_type: str | None = None,
        code: str | None = None,
    ) -> Fault:
        """An HTTP error answer in the protocol's error format; ``retry_after`` becomes the header."""
        return Fault("http", status, message, retry_after, error_type, code)

    @staticmethod
    def context_overflow() -> Fault:
        """400 with the words and code each real service uses for a prompt that does not fit."""
        return Fault("context_overflow", 400)

    @staticmethod
    def disconnect_after(chunks: int) -> Fault:
        return Fault("disconnect", after=chunks)

    @staticmethod
    def end_after(chunks: int) -> Fault:
        """End the HTTP body cleanly after ``chunks`` events: the reply's last events never come."""
        return Fault("end", after=chunks)

    @staticmethod
    def malformed_after(chunks: int, raw: str = '{"broken": ') -> Fault:
        return Fault("malformed", after=chunks, raw=raw)

    @staticmethod
    def stall_after(chunks: int, gate: Gate) -> Fault:
        return Fault("stall", after=chunks, gate=gate)

    @staticmethod
    def hang(seconds: float = 30.0) -> Fault:
        """Read the request and answer nothing, not even headers, until the client leaves (or
        ``seconds`` pass: then cut, so a test bug fails instead of hanging)."""
        return Fault("hang", seconds=seconds)

    @staticmethod
    def keep_alive(interval: float = 0.01, seconds: float = 30.0) -> Fault:
        """Answer 200 and then only keep-alives, every ``interval``, until the client leaves: SSE comment
        lines, and for Anthropic also ``ping`` events. Each keep-alive counts in ``chunks_sent``."""
        return Fault("keep_alive", seconds=seconds, interval=interval)

    @staticmethod
    def empty() -> Fault:
        """Answer 200 with an event-stream body that ends at once, holding no event."""
        return Fault("empty")


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``stop`` is neutral (``stop``, ``tool_use``, ``length``) or a protocol's own
    value passed through; derived as ``tool_use`` when the reply has calls, else ``stop``.
    ``chunk_delay`` sleeps between chunks (benches, latency realism)."""

    steps: Sequence[Step] = ()
    usage: Usage = field(default_factory=Usage)
    stop: str | None = None
    fault: Fault | None = None
    chunk_delay: float = 0.0
    model: str | None = None
    linger: Gate | None = None  # held open at this gate after the protocol's last event
    report_usage: bool = True  # False: the OpenAI-style dialects send no usage at all (some servers don't)

    @property
    def stop_reason(self) -> str:
        if self.stop is not None:
            return self.stop
        return "tool_use" if any(isinstance(s, ToolCallStep) for s in self.steps) else "stop"


def text(value: str) -> Text:
    return Text(value)


def thinking(value: str, signature: str | None = "sig-fake") -> Thinking:
    return Thinking(value, signature)


def tool_call(
    name: str, args: Mapping[str, Any] | str, *, id: str | None = None, pieces: int = 3
) -> ToolCallStep:
    return ToolCallStep(name, args, id, pieces)


def chatter(interval: float = 0.01, seconds: float = 30.0) -> Chatter:
    return Chatter(interval, seconds)


def gate(timeout: float = 30.0) -> Gate:
    return Gate(timeout)


def disconnect() -> Disconnect:
    return Disconnect()


def malformed(raw: str = '{"broken": ', event: str | None = None) -> Malformed:
    return Malformed(raw, event)


def pause(seconds: float) -> Pause:
    return Pause(seconds)


def say(*parts: str, usage: Usage | None = None) -> Reply:
    """Shorthand: a text-only reply, one chunk per part."""
    return Reply([Text(p) for p in parts], usage=usage or Usage())


def call(name: str, args: Mapping[str, Any], *, id: str | None = None, say_first: str = "") -> Reply:
    """Shorthand: a reply with one tool call (optionally preceded by some text)."""
    steps: list[Step] = [Text(say_first)] if say_first else []
    steps.append(ToolCallStep(name, args, id))
    return Reply(steps)
