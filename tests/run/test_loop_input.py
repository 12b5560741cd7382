"""The loop's input seam (``LoopInput``): when the loop asks for input and when it reports a commit
(R9-R12, R31), proven on the loop alone with the scripted model."""

from __future__ import annotations

from collections.abc import Sequence

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent, InputTaken
from ink.agent.history import History
from ink.agent.loop import LoopSetup, PendingInput, PromptCheck, PromptHook, run_loop
from tests.events import events_of
from tests.fakeserver import say
from tests.scripted_provider import ScriptedProvider


class RecordingInput:
    """Hands out scripted inputs and writes down every call, with the events emitted so far."""

    def __init__(self, steering: list[list[str]], follow_ups: list[list[str]], events: list[AgentEvent]):
        self.steering, self.follow_ups, self.events = steering, follow_ups, events
        self.calls: list[tuple[str, tuple[str, ...], int]] = []

    def take_steering(self) -> Sequence[PendingInput]:
        return self._take("steer", self.steering)

    def take_follow_ups(self) -> Sequence[PendingInput]:
        return self._take("follow_up", self.follow_ups)

    def committed(self, input_ids: Sequence[str]) -> None:
        self.calls.append(("committed", tuple(input_ids), len(events_of(self.events, InputTaken))))

    def _take(self, mode: str, waiting: list[list[str]]) -> Sequence[PendingInput]:
        texts = waiting.pop(0) if waiting else []
        self.calls.append((mode, tuple(texts), len(events_of(self.events, InputTaken))))
        return [PendingInput(t, t, "steer" if mode == "steer" else "follow_up") for t in texts]


async def run(model: ScriptedProvider, inputs: RecordingInput, on_prompt: PromptHook | None = None) -> str:
    loop_setup = LoopSetup(model, model="m", system_prompt="test", on_prompt=on_prompt)
    first = [PendingInput("first", "first", "steer")]
    result = await run_loop(History(), first, loop_setup, AbortSignal(), inputs.events.append, inputs)
    return result.stop_reason


async def test_R31_a_commit_is_reported_before_its_input_taken_and_R11_R12_the_order_of_takes(
    model: ScriptedProvider,
) -> None:
    model.script(say("one"), say("two"), say("three"))
    events: list[AgentEvent] = []
    inputs = RecordingInput(steering=[[], [], ["s1"]], follow_ups=[["f1"]], events=events)
    assert await run(model, inputs) == "completed"
    assert inputs.calls == [
        ("committed", ("first",), 0),  # R31: committed, then announced
        ("steer", (), 1),  # R9 (a): before the first model call
        ("steer", (), 1),  # R11: the would-end point asks steering first...
        ("follow_up", ("f1",), 1),  # ...then follow-ups
        ("committed", ("f1",), 1),
        # R12: no steer poll before the call that answers f1
        ("steer", ("s1",), 2),  # the would-end point again: a steer this time, so no follow-up asked
        ("committed", ("s1",), 2),
        ("steer", (), 3),
        ("follow_up", (), 3),
    ]
    assert model.user_texts() == [["first"], ["first", "f1"], ["first", "f1", "s1"]]


async def test_R30_an_input_the_prompt_hook_holds_back_is_never_committed(model: ScriptedProvider) -> None:
    async def hold_back_all(pending: Sequence[PendingInput], signal: AbortSignal) -> PromptCheck:
        return PromptCheck(accepted=())

    events: list[AgentEvent] = []
    inputs = RecordingInput(steering=[], follow_ups=[], events=events)
    assert await run(model, inputs, on_prompt=hold_back_all) == "completed"
    assert inputs.calls == [] and events == [] and model.requests == []
