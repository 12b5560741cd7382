"""Events the agent loop emits while a run goes on (R1-R7).

Each event is frozen data tagged by ``type`` with a JSON form (``event_to_json``) shared by stream-json,
RPC and the session log. ``source`` names the sub-agent an event comes from; top-level events have none
(R7). Names and fields follow docs/design/CONTRACT.md and never change once shipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias

import msgspec

from ink.ai.jsonform import to_json
from ink.ai.messages import AssistantMessage, ToolResult, Usage
from ink.vocabulary import InputMode


class Source(msgspec.Struct, frozen=True):
    """Which sub-agent an event comes from (R7): ``id`` names one run of it (the id of the ``task`` call
    that started it), ``agent`` its type (``explore``, ...). Top-level events have no source."""

    id: str
    agent: str


class TakenInput(msgspec.Struct, frozen=True):
    """One queued input as the loop took it: its id and text."""

    input_id: str
    text: str


class MessageStart(msgspec.Struct, frozen=True):
    """The model began a reply."""

    role: Literal["assistant"] = "assistant"
    source: Source | None = None
    type: Literal["message_start"] = "message_start"


class TextDeltaEvent(msgspec.Struct, frozen=True):
    """A piece of the reply's text, as it streams."""

    text: str
    source: Source | None = None
    type: Literal["text_delta"] = "text_delta"


class ThinkingDeltaEvent(msgspec.Struct, frozen=True):
    """A piece of the reply's reasoning, as it streams."""

    text: str
    source: Source | None = None
    type: Literal["thinking_delta"] = "thinking_delta"


class MessageEnd(msgspec.Struct, frozen=True):
    """The reply is complete: the whole message and its usage."""

    message: AssistantMessage
    usage: Usage
    source: Source | None = None
    type: Literal["message_end"] = "message_end"


class ToolStart(msgspec.Struct, frozen=True):
    """The loop began handling a call (R2)."""

    tool_call_id: str
    name: str
    args: Mapping[str, Any]
    source: Source | None = None
    type: Literal["tool_start"] = "tool_start"


class ToolRunning(msgspec.Struct, frozen=True):
    """A concurrent call passed its checks and got an execution slot (R3, R5)."""

    tool_call_id: str
    source: Source | None = None
    type: Literal["tool_running"] = "tool_running"


class ToolUpdate(msgspec.Struct, frozen=True):
    """A running call's output so far: a bounded tail (``ink.agent.live``), throttled. Shown, never sent
    to the model; the result at ``tool_settled``/``tool_end`` replaces it."""

    tool_call_id: str
    output: str
    source: Source | None = None
    type: Literal["tool_update"] = "tool_update"


class ToolSettled(msgspec.Struct, frozen=True):
    """A concurrent call's result exists; the UI may show it now (R3, R6)."""

    tool_call_id: str
    result: ToolResult
    source: Source | None = None
    type: Literal["tool_settled"] = "tool_settled"


class ToolEnd(msgspec.Struct, frozen=True):
    """The call's result, in call order (R3). ``shown``: it was already shown at this call's
    ``tool_settled`` (R6), so a frontend shows it now only when this is False."""

    tool_call_id: str
    result: ToolResult
    shown: bool = False
    source: Source | None = None
    type: Literal["tool_end"] = "tool_end"


class ToolCancelling(msgspec.Struct, frozen=True):
    """An aborted tool has not returned yet; ink waits at most ``grace_seconds`` for it (R20, R34)."""

    tool_call_id: str
    grace_seconds: float
    source: Source | None = None
    type: Literal["tool_cancelling"] = "tool_cancelling"


class RetryEvent(msgspec.Struct, frozen=True):
    """The request failed before anything streamed and is sent again after ``delay_seconds``."""

    attempt: int
    delay_seconds: float
    error: str
    source: Source | None = None
    type: Literal["retry"] = "retry"


class InputTaken(msgspec.Struct, frozen=True):
    """User input entered the history (R31): clients clear their "pending" marks on this."""

    mode: InputMode
    inputs: tuple[TakenInput, ...]
    source: Source | None = None
    type: Literal["input_taken"] = "input_taken"


class Notice(msgspec.Struct, frozen=True):
    """Something the user should know that is not an error of the run (compaction, a truncation)."""

    text: str
    level: Literal["info", "warning"] = "info"
    source: Source | None = None
    type: Literal["notice"] = "notice"


PlanStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
PLAN_STATUSES: tuple[PlanStatus, ...] = ("pending", "in_progress", "completed")


class PlanEntry(msgspec.Struct, frozen=True):
    """One step of the model's plan: what it is, and how far it got."""

    content: str
    status: PlanStatus


class PlanUpdate(msgspec.Struct, frozen=True):
    """The model's plan as it stands now, whole (the ``plan`` tool was called): a checklist for the user,
    kept in the session and shown again on resume. ``explanation``: why it changed, when the model says."""

    entries: tuple[PlanEntry, ...]
    explanation: str | None = None
    source: Source | None = None
    type: Literal["plan_update"] = "plan_update"


HoldPoint: TypeAlias = Literal["model_call", "tool_call"]
"""Where a paused run holds: before a model call, or before a tool call starts."""
ResumeReason: TypeAlias = Literal["resume", "abort", "end"]
"""Why a pause ended: resumed; the run (or the sub-agent) was aborted; its work ended while paused."""


class RunPaused(msgspec.Struct, frozen=True):
    """A pause took effect (R44): from now on no model call and no tool call of the run (or of the
    sub-agent ``source`` names) starts; what streams or runs already finishes."""

    source: Source | None = None
    type: Literal["run_paused"] = "run_paused"


class RunHeld(msgspec.Struct, frozen=True):
    """The paused run reached a safe point and waits there (``at``): nothing of it is in flight but what
    had started before that point (the other calls of a batch already running)."""

    at: HoldPoint
    source: Source | None = None
    type: Literal["run_held"] = "run_held"


class RunResumed(msgspec.Struct, frozen=True):
    """The pause ended (``reason``): what waited goes on as if there had been no pause."""

    reason: ResumeReason = "resume"
    source: Source | None = None
    type: Literal["run_resumed"] = "run_resumed"


AgentEvent: TypeAlias = (
    MessageStart
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | MessageEnd
    | ToolStart
    | ToolRunning
    | ToolUpdate
    | ToolSettled
    | ToolEnd
    | ToolCancelling
    | RetryEvent
    | InputTaken
    | Notice
    | RunPaused
    | RunHeld
    | RunResumed
    | PlanUpdate
)
Emit: TypeAlias = Callable[[AgentEvent], None]


def event_to_json(event: object) -> dict[str, Any]:
    data = to_json(event)
    assert isinstance(data, dict)
    return data
