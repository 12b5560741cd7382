"""An in-memory model provider that plays the fake server's reply scripts, without HTTP.

It implements the ``Provider`` protocol the way the real providers do: events in order, a
``ToolCallReady`` as soon as a call is whole, one ``ReplyDone`` at the end, a ``ProviderError`` on
failure, and cancellation is the abort. Each request is checked with the fake server's strict history
rules, on the body ink would send (OpenAI Chat Completions or Anthropic Messages): a history the real
service would refuse fails the request with ``BadRequest``, as over HTTP. So the loop and the controller
are tested for their semantics (R1-R36) at in-process speed; what HTTP adds (streams, retries,
timeouts) is tested against the fake server.

A script is the fake server's: ``Reply`` objects of ``Text``, ``Thinking``, ``ToolCallStep``, ``Gate``,
``Pause`` and ``Disconnect`` steps, a ``Fault`` (``http``, ``context_overflow``, ``disconnect``), or a
string (a one-chunk text reply).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Literal

from ink.ai.anthropic_convert import anthropic_body
from ink.ai.assembly import MessageBuilder, tool_call
from ink.ai.errors import BadRequest, BadResponse, ConnectionFailed, ProviderError
from ink.ai.http_errors import error_for_status
from ink.ai.messages import StopReason, Usage
from ink.ai.openai_convert import openai_body
from ink.ai.provider import ModelRequest
from ink.ai.stream import ReplyDone, StreamEvent, TextDelta, ThinkingDelta, ToolCallReady
from tests.fakeserver import Disconnect, Fault, Gate, Pause, Reply, Text, Thinking, ToolCallStep
from tests.fakeserver.log import RecordedRequest
from tests.fakeserver.server import as_reply
from tests.fakeserver.strict import check_anthropic_history, check_openai_history

STOPS: dict[str, StopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "tool_use": "tool_use",
    "length": "length",
}


class ScriptExhausted(AssertionError):
    """A request came that no scripted reply answers: a test bug, failed loudly."""


class ScriptedProvider:
    """``protocol`` picks the body the requests are rendered as and the strict rules they are checked
    with (``openai`` or ``anthropic``). ``requests`` is the fake server's request log, kept in memory:
    ``outcome`` is ``completed``, ``client_left`` (the consumer stopped early: an abort), ``disconnected``
    or ``error``."""

    def __init__(self, *replies: Reply | Fault | str, protocol: Literal["openai", "anthropic"] = "openai"):
        self.name = f"scripted-{protocol}"
        self.protocol = protocol
        self._script: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.responder: Callable[[RecordedRequest], Reply | Fault | str] | None = None
        """Answers a request when the script is empty (as the fake server's ``responder``)."""
        self._arrived = asyncio.Event()
        self.script(*replies)

    # -- the fake server's scripting and log, in memory -------------------------------------------

    def script(self, *replies: Reply | Fault | str) -> None:
        """Queue replies, consumed one per request in order."""
        self._script.extend(as_reply(r) for r in replies)

    @property
    def pending(self) -> int:
        return len(self._script)

    def clear_script(self) -> int:
        dropped = len(self._script)
        self._script.clear()
        return dropped

    def user_texts(self) -> list[list[str]]:
        """The user-message texts of each request, in request order."""
        return [r.user_texts() for r in self.requests]

    async def wait_for_requests_async(self, n: int, timeout: float = 10.0) -> list[RecordedRequest]:
        async with asyncio.timeout(timeout):
            while len(self.requests) < n:
                self._arrived.clear()
                await self._arrived.wait()
        return self.requests[:n]

    # -- the Provider protocol -------------------------------------------------------------------

    async def aclose(self) -> None:
        pass

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        recorded = self._record(request)
        try:
            async for event in self._play(request, recorded):
                yield event
        except ProviderError as exc:
            recorded.error_message = exc.message
            recorded.finish("disconnected" if isinstance(exc, ConnectionFailed) else "error")
            raise
        except (GeneratorExit, asyncio.CancelledError):
            recorded.finish("client_left")
            raise
        recorded.finish("completed")

    def _record(self, request: ModelRequest) -> RecordedRequest:
        body = json.loads(
            json.dumps(anthropic_body(request) if self.protocol == "anthropic" else openai_body(request))
        )
        path = "/v1/messages" if self.protocol == "anthropic" else "/v1/chat/completions"
        recorded = RecordedRequest(len(self.requests), "POST", path, {}, body, b"", self.protocol)
        self.requests.append(recorded)
        self._arrived.set()
        return recorded

    async def _play(
        self, request: ModelRequest, recorded: RecordedRequest
    ) -> AsyncGenerator[StreamEvent, None]:
        check = check_anthropic_history if self.protocol == "anthropic" else check_openai_history
        problem = check(recorded.body)
        if problem is not None:
            raise BadRequest(problem, status=400, provider=self.name)
        if self._script:
            reply = self._script.popleft()
        elif self.responder is not None:
            reply = as_reply(self.responder(recorded))
        else:
            raise ScriptExhausted(f"scripted provider: request {recorded.index} has no scripted reply")
        fault = reply.fault
        if fault is not None and fault.kind != "disconnect":
            raise _fault_error(fault, self.name)
        builder = MessageBuilder(request.model, self.name)
        for index, step in enumerate(reply.steps):
            if fault is not None and index >= fault.after:
                break
            for event in await _step(step, builder, recorded.index, self.name):
                recorded.chunks_sent += 1
                yield event
        if fault is not None:
            raise ConnectionFailed("the stream broke off", provider=self.name)
        stop = STOPS.get(reply.stop_reason, "error")
        builder.usage = Usage(reply.usage.input_tokens, reply.usage.output_tokens)
        yield ReplyDone(builder.message(stop, "the service stopped the reply" if stop == "error" else None))


async def _step(step: object, builder: MessageBuilder, request: int, provider: str) -> Sequence[StreamEvent]:
    match step:
        case Text(text=text):
            builder.add_text(text)
            return [TextDelta(text)]
        case Thinking(text=text, signature=signature):
            builder.add_thinking(text)
            if signature is not None:
                builder.sign_thinking(signature)
            return [ThinkingDelta(text, signature)]
        case ToolCallStep(name=name, args=args, id=call_id):
            raw = args if isinstance(args, str) else json.dumps(args)
            call = tool_call(call_id or f"call-{request}-{name}", name, raw)
            builder.add_call(call)
            return [ToolCallReady(call)]
        case Gate():
            step.reached.set()
            # The fake server's gate is a threading.Event (tests open it from any thread): polled, so
            # that an abort cancels the wait at once (a thread blocked on it could not be cancelled).
            while not step.opened.is_set():  # noqa: ASYNC110
                await asyncio.sleep(0.001)
            return []
        case Pause(seconds=seconds):
            await asyncio.sleep(seconds)  # simulated slow generation, as in the fake server
            return []
        case Disconnect():
            raise ConnectionFailed("the connection was cut mid-reply", provider=provider)
    raise BadResponse(f"scripted provider cannot play {step!r}", provider=provider)


def _fault_error(fault: Fault, provider: str) -> ProviderError:
    """The error a real provider raises for this fault of the fake server (ink.ai.http_errors)."""
    if fault.kind == "context_overflow":
        return error_for_status(400, "prompt is too long for the context window", provider)
    message = fault.message or f"scripted {fault.kind} fault"
    if fault.kind != "http":
        return ConnectionFailed(message, provider=provider)
    return error_for_status(fault.status, message, provider, retry_after=fault.retry_after)
