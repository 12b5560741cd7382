"""One failure channel (R18, R27): a run that fails ends ``refused`` or ``error`` with one typed error
(``RunError``), whatever failed; an abort is an outcome with no error. On the wire a refusal is an
``error`` (docs/design/CONTRACT.md fixes ``run_end.stopReason``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from ink.agent.abort import AbortSignal
from ink.agent.history import History
from ink.agent.loop import LoopSetup, PendingInput, RunError, run_loop
from ink.ai.errors import Refused, ServerError
from ink.ai.jsonform import to_json
from ink.ai.provider import ModelRequest
from ink.ai.stream import StreamEvent
from ink.run.controller import RunController
from ink.run.events import RunEnd
from tests.events import events_of
from tests.fakeserver import Fault, Reply, say, text, tool_call
from tests.run.harness import Harness
from tests.scripted_provider import ScriptedProvider


async def loop_of(model: ScriptedProvider) -> tuple[str, RunError | None]:
    setup = LoopSetup(model, model="m", system_prompt="test")
    first = [PendingInput("in-1", "go", "steer")]
    result = await run_loop(History(), first, setup, AbortSignal(), lambda e: None)
    return result.stop_reason, result.error


async def test_R27_a_reply_the_service_refused_ends_refused_with_its_error(model: ScriptedProvider) -> None:
    model.script(Reply([text("I can't"), tool_call("read", {"x": "1"})], stop="content_filter"))
    stop, error = await loop_of(model)
    assert stop == "refused"
    assert error is not None and error.stop == "refused" and isinstance(error.cause, Refused)


async def test_R27_a_provider_failure_ends_error_with_the_providers_error(model: ScriptedProvider) -> None:
    model.script(Fault.http(500, "the service broke"))
    stop, error = await loop_of(model)
    assert stop == "error" and error is not None and "the service broke" in str(error)
    assert isinstance(error.cause, ServerError)


async def test_R27_on_the_wire_a_refusal_is_an_error_with_its_words(model: ScriptedProvider) -> None:
    h = Harness(model)
    model.script(Reply([text("no")], stop="content_filter"), say("fine"))
    h.controller.submit("go")
    await h.settled()
    [end] = events_of(h.events, RunEnd)
    assert end.stop_reason == "error" and end.error is not None and "Refused" in end.error
    assert end.receipt is None  # R18: a failure is not an abort


class BrokenProvider:
    """A provider with a bug: it raises what no provider may raise."""

    name = "broken"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        raise RuntimeError("a bug")
        yield  # pragma: no cover - makes this an async generator


async def test_R27_a_bug_of_ink_is_the_same_error_channel() -> None:
    controller = RunController(LoopSetup(BrokenProvider(), model="m", system_prompt="test"))
    ends: list[RunEnd] = []
    controller.subscribe(lambda e: ends.append(e) if isinstance(e, RunEnd) else None)
    controller.submit("go")
    await controller.wait_idle()
    [end] = ends
    assert end.stop_reason == "error" and end.error == "internal error: RuntimeError: a bug"


async def test_R27_a_refusal_on_the_wire_says_refused_and_a_failure_does_not(model: ScriptedProvider) -> None:
    h = Harness(model)
    model.script(Reply([text("no")], stop="content_filter"), Fault.http(500, "broken"), say("fine"))
    h.controller.submit("go")
    await h.settled()
    h.controller.submit("again")
    await h.settled()
    refused, failed = events_of(h.events, RunEnd)
    assert refused.stop_reason == failed.stop_reason == "error"
    assert to_json(refused)["refused"] is True and "refused" not in to_json(failed)  # the wire's spelling
