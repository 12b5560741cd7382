"""Permission questions: the round trip between a tool call and the user, the same in every frontend.

The broker emits ``permission_request`` and waits for ``answer``. A question that gets no answer within
``timeout_seconds`` is a denial; an abort while it is open answers it as ``cancelled`` (the call is then
not executed). The policy (what needs asking) lives elsewhere and calls ``ask``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from ink.agent.abort import AbortSignal
from ink.agent.events import Source
from ink.ai.messages import ToolCall
from ink.run.events import PermissionRequest, PermissionResolved, RunEvent
from ink.vocabulary import Answer, Decision


class UnknownRequest(Exception):
    """``answer`` named a request that is not open (never asked, or already answered)."""


class OpenQuestion(msgspec.Struct, frozen=True):
    """A permission question waiting for an answer."""

    request_id: str
    tool_call_id: str
    name: str
    args: Mapping[str, Any]
    reason: str = ""
    remember: str | None = None


class PermissionBroker:
    def __init__(self, emit: Callable[[RunEvent], None], timeout_seconds: float | None = 300.0) -> None:
        self._emit = emit
        self.timeout_seconds = timeout_seconds
        self._open: dict[str, tuple[OpenQuestion, asyncio.Future[Answer]]] = {}
        self._ids = itertools.count(1)

    def open_questions(self) -> list[OpenQuestion]:
        return [question for question, _ in self._open.values()]

    async def ask(
        self,
        call: ToolCall,
        signal: AbortSignal,
        reason: str = "",
        source: Source | None = None,
        remember: str | None = None,
    ) -> Decision:
        """Ask the user about ``call`` (``reason``: why it needs asking; ``source``: the sub-agent whose
        call it is, R7; ``remember``: the rule an ``always`` answer stores, shown with the question).
        Never raises for a missing answer: returns the decision."""
        if signal.aborted:
            return "cancelled"
        request_id = f"perm-{next(self._ids)}"
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        question = OpenQuestion(request_id, call.id, call.name, call.arguments, reason, remember)
        self._open[request_id] = (question, future)
        remove = signal.on_abort(lambda _reason: future.cancel())
        self._emit(
            PermissionRequest(
                request_id, call.id, call.name, call.arguments, reason or None, source, remember
            )
        )
        decision: Decision
        try:
            decision = await asyncio.wait_for(asyncio.shield(future), self.timeout_seconds)
        except TimeoutError:
            decision = "timeout"
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not future.cancelled() or (task is not None and task.cancelling()):
                raise  # not our abort's doing: only the code that cancelled may absorb it
            decision = "cancelled"
        finally:
            remove()
            self._open.pop(request_id, None)
        self._emit(PermissionResolved(request_id, decision, source))
        return decision

    def answer(self, request_id: str, answer: Answer) -> None:
        """Resolve an open question. Raises ``UnknownRequest`` when it is not open."""
        entry = self._open.get(request_id)
        if entry is None or entry[1].done():
            raise UnknownRequest(f"no open permission request {request_id!r}")
        entry[1].set_result(answer)
