"""Events of the run controller, on top of the loop's events (docs/design/CONTRACT.md "Run events").

``RunEvent`` is everything a frontend receives: the loop's ``AgentEvent`` union plus the controller's own
events below. All are frozen, tagged by ``type``, with a JSON form from ``event_to_json``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import msgspec

from ink.agent.budget import BudgetKind, BudgetScope, BudgetStop
from ink.agent.events import (
    AgentEvent,
    HoldPoint,
    InputTaken,
    MessageEnd,
    MessageStart,
    Notice,
    PlanEntry,
    PlanUpdate,
    ResumeReason,
    RetryEvent,
    RunHeld,
    RunPaused,
    RunResumed,
    Source,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCancelling,
    ToolEnd,
    ToolRunning,
    ToolSettled,
    ToolStart,
    ToolUpdate,
    event_to_json,
)
from ink.ai.messages import Usage
from ink.tools.jobs import JobEnd, JobInfo, JobStart
from ink.tools.processes import Survivor
from ink.vocabulary import Decision, InputMode, RunStop

# The loop's events too: a frontend reads every event it receives from this one module.
__all__ = [
    "AgentEvent",
    "BudgetStop",
    "HoldPoint",
    "InputTaken",
    "JobEnd",
    "JobInfo",
    "JobStart",
    "MessageEnd",
    "MessageStart",
    "Notice",
    "PlanEntry",
    "PlanUpdate",
    "ResumeReason",
    "RetryEvent",
    "RunEvent",
    "RunHeld",
    "RunPaused",
    "RunResumed",
    "Source",
    "Survivor",
    "TextDeltaEvent",
    "ThinkingDeltaEvent",
    "ToolCancelling",
    "ToolEnd",
    "ToolRunning",
    "ToolSettled",
    "ToolStart",
    "ToolUpdate",
    "event_to_json",
]


class QueuedInput(msgspec.Struct, frozen=True):
    """An input waiting in the queue (R30)."""

    input_id: str
    text: str
    mode: InputMode


class AbortReceipt(msgspec.Struct, frozen=True):
    """What an abort did (R34): calls cancelled before start, interrupted, abandoned after the grace,
    processes still alive, inputs handed back; and the files the run changed (what a rewind restores),
    when workspace checkpoints are on (None: not known). ``jobs_running``: the background jobs the
    interrupt left running, as it should (R43: it ends the foreground calls, not the jobs). ``message``:
    what stopped the run said (reason ``hook``: a hook's ``stopReason``, docs/hooks.md)."""

    reason: str
    not_started: tuple[str, ...] = ()
    interrupted: tuple[str, ...] = ()
    abandoned: tuple[str, ...] = ()
    survivors: tuple[Survivor, ...] = ()
    restored: tuple[str, ...] = ()
    changed_files: tuple[str, ...] | None = None
    jobs_running: tuple[JobInfo, ...] = ()
    message: str | None = None


class RunStart(msgspec.Struct, frozen=True):
    """A run started."""

    run_id: str
    source: Source | None = None
    type: Literal["run_start"] = "run_start"


class RunEnd(msgspec.Struct, frozen=True):
    """A run ended: why, what it cost, and what an abort handed back (R22, R34)."""

    run_id: str
    stop_reason: RunStop
    restored_input: tuple[QueuedInput, ...] = ()
    usage: Usage = msgspec.field(default_factory=Usage)
    error: str | None = None
    receipt: AbortReceipt | None = None
    truncated: bool | None = None  # True: the run's last reply was cut by the model's output token limit
    refused: bool | None = None  # True: the ``error`` is the service refusing the reply (a content filter)
    budget: BudgetStop | None = None  # stop reason ``budget``: the limit used up (R45)
    source: Source | None = None
    type: Literal["run_end"] = "run_end"


class BudgetWarning(msgspec.Struct, frozen=True):
    """R45: ``used`` reached 80 % of a limit (``kind`` cost in USD, tokens, or time in seconds) of the run
    or the session (``scope``); said once per limit (a run limit: once per run). At 100 % the run ends at
    its next safe point with stop reason ``budget``."""

    kind: BudgetKind
    scope: BudgetScope
    used: float
    limit: float
    source: Source | None = None
    type: Literal["budget_warning"] = "budget_warning"


class QueueUpdate(msgspec.Struct, frozen=True):
    """The queue changed: what is waiting now (R32)."""

    queue: tuple[QueuedInput, ...]
    source: Source | None = None
    type: Literal["queue_update"] = "queue_update"


class InputRestored(msgspec.Struct, frozen=True):
    """Input handed back while no run is active (an abort during a bang line)."""

    restored_input: tuple[QueuedInput, ...]
    source: Source | None = None
    type: Literal["input_restored"] = "input_restored"


class BangStart(msgspec.Struct, frozen=True):
    """A ``!command`` line started."""

    command: str
    input_id: str | None = None
    source: Source | None = None
    type: Literal["bang_start"] = "bang_start"


class BangEnd(msgspec.Struct, frozen=True):
    """``exit_code`` is ``null`` when the command never exited by itself (killed, or could not start)."""

    command: str
    output: str
    exit_code: int | None
    input_id: str | None = None
    interrupted: bool | None = None
    source: Source | None = None
    type: Literal["bang_end"] = "bang_end"
    json_always: ClassVar[tuple[str, ...]] = ("exit_code",)  # written as null when None (ink.ai.jsonform)


class PermissionRequest(msgspec.Struct, frozen=True):
    """``reason``: why the policy asks (a bash command, a write outside the workspace, ...).
    ``remember``: the rule an ``always`` answer stores, in the words of the rules files (None: ``always``
    remembers nothing beyond this call)."""

    request_id: str
    tool_call_id: str
    name: str
    args: Mapping[str, Any]
    reason: str | None = None
    source: Source | None = None
    remember: str | None = None
    type: Literal["permission_request"] = "permission_request"


class PermissionResolved(msgspec.Struct, frozen=True):
    """A permission question was answered (by the user, a timeout or an abort)."""

    request_id: str
    decision: Decision
    source: Source | None = None
    type: Literal["permission_resolved"] = "permission_resolved"


class RewindEnd(msgspec.Struct, frozen=True):
    """A rewind ended: ``ok``, or ``error`` and nothing changed (``changed_outside``: the
    files changed outside ink that made it refuse). ``written``/``removed``: files restored and files
    removed; ``undo``: the checkpoint that undoes them. Undone inputs come back in ``input_restored``."""

    input_id: str
    ok: bool
    files: bool
    conversation: bool
    error: str | None = None
    changed_outside: tuple[str, ...] | None = None
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    undo: str | None = None
    source: Source | None = None
    type: Literal["rewind_end"] = "rewind_end"


class ElicitationRequest(msgspec.Struct, frozen=True):
    """An MCP server asks the user something (``elicitation/create``, docs/mcp.md): ``message``, and the
    ``schema`` of the answer (a flat object of strings, numbers, booleans and choices). Answered by RPC
    ``elicitation_response {id, action: accept|decline|cancel, content?}`` or the terminal UI's form."""

    id: str
    server: str
    message: str
    schema: Mapping[str, Any]
    source: Source | None = None
    type: Literal["elicitation_request"] = "elicitation_request"


class ElicitationResolved(msgspec.Struct, frozen=True):
    """A server's question was answered (``action``: accept, decline or cancel: by the user, a timeout,
    an abort, or the server withdrawing it)."""

    id: str
    action: str
    source: Source | None = None
    type: Literal["elicitation_resolved"] = "elicitation_resolved"


ControllerEvent: TypeAlias = (
    RunStart
    | RunEnd
    | QueueUpdate
    | InputRestored
    | BangStart
    | BangEnd
    | PermissionRequest
    | PermissionResolved
    | RewindEnd
    | ElicitationRequest
    | ElicitationResolved
    | JobStart
    | JobEnd
    | BudgetWarning
)
RunEvent: TypeAlias = AgentEvent | ControllerEvent
RunEventListener = Callable[[RunEvent], None]
