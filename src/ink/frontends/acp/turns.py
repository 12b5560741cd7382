"""Which ``session/prompt`` request ends when: the bookkeeping between prompt requests and the run
controller's inputs. Pure: events in, answers out; the session writes them.

Every prompt request gets exactly one answer. A prompt is submitted to the controller (R8: idle starts a
run, running queues it as a follow-up) and remembered by its ``inputId``. Then:

- ``input_taken`` puts it in the history: it is *active*. A follow-up is taken only where the model
  stopped without tool calls (R10), so taking one ends the turns active before it with ``end_turn``.
- ``run_end`` ends the active turns with the run's outcome: ``completed`` -> ``end_turn``,
  ``max_iterations`` -> ``max_turn_requests``, ``aborted`` -> ``cancelled``, ``refused`` (an ``error``
  the service refused, ``run_end.refused``) -> ``refusal``, any other ``error`` -> an error answer.
  Prompts the run hands back (R22, R27: ``restoredInput``) end ``cancelled``: they were never run.
  Prompts still queued after a normal end stay waiting: the flush (R26) runs them next.
- ``input_restored`` (an abort during a ``!command``) and ``bang_end`` end bang lines and what they
  handed back.
- ``drain`` (the connection is closing) ends whatever is left ``cancelled``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypeAlias

import msgspec

from ink.frontends.acp.jsonrpc import RequestId

StopReason: TypeAlias = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
RUN_STOPS: dict[str, StopReason] = {
    "completed": "end_turn",
    "max_iterations": "max_turn_requests",
    "budget": "max_turn_requests",  # R45: a limit of the user's, as the turn limit is
    "aborted": "cancelled",
    "refused": "refusal",  # the wire's ``error`` with ``refused``: the service refused, nothing failed
}


class Answer(msgspec.Struct, frozen=True):
    """The answer to one prompt request: a stop reason, or (a failed run) an error message."""

    request_id: RequestId
    stop_reason: StopReason | None
    error: str | None = None


class PromptTurns:
    def __init__(self) -> None:
        self._waiting: dict[str, RequestId] = {}  # inputId -> the prompt request to answer
        self._active: list[str] = []  # inputIds in the history of the current run, not yet answered

    def __len__(self) -> int:
        return len(self._waiting)

    def submitted(self, input_id: str, request_id: RequestId) -> None:
        self._waiting[input_id] = request_id

    def taken(self, mode: str, input_ids: Iterable[str], finished: StopReason) -> list[Answer]:
        """Inputs entered the history. ``finished`` is how the turns a follow-up ends went."""
        answers: list[Answer] = []
        if mode == "follow_up" and self._active:
            answers = [Answer(r, finished) for r in self._pop(self._active)]
            self._active = []
        self._active += [i for i in input_ids if i in self._waiting]
        return answers

    def run_ended(
        self, stop: str, restored: Iterable[str], finished: StopReason, error: str | None = None
    ) -> list[Answer]:
        """The run settled with ``stop``; ``finished`` is the stop reason a completed run gives."""
        answers = self.restored(restored)
        active, self._active = self._active, []
        if stop == "error":
            message = error or "the run failed"
            return answers + [Answer(r, None, message) for r in self._pop(active)]
        reason = finished if stop == "completed" else RUN_STOPS.get(stop, "end_turn")
        return answers + [Answer(r, reason) for r in self._pop(active)]

    def restored(self, input_ids: Iterable[str]) -> list[Answer]:
        return [self._answer(i, "cancelled") for i in input_ids if i in self._waiting]

    def bang_ended(self, input_id: str | None, interrupted: bool) -> list[Answer]:
        if input_id is None or input_id not in self._waiting:
            return []
        return [self._answer(input_id, "cancelled" if interrupted else "end_turn")]

    def drain(self) -> list[Answer]:
        answers = [Answer(r, "cancelled") for r in self._waiting.values()]
        self._waiting.clear()
        self._active = []
        return answers

    def _answer(self, input_id: str, reason: StopReason) -> Answer:
        return Answer(self._waiting.pop(input_id), reason)

    def _pop(self, input_ids: Iterable[str]) -> list[RequestId]:
        return [self._waiting.pop(i) for i in input_ids if i in self._waiting]
