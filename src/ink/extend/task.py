"""The ``task`` tool: the model hands a self-contained job to a sub-agent (docs/subagents.md).

A sub-agent is the same loop (``run_loop``) with its own history, its type's system prompt and tools,
and its own abort signal, linked to the run's: an abort of the run reaches every sub-agent and their
tools (R17, R35), and one sub-agent can be stopped or steered alone (``SubAgents.abort`` / ``steer``),
after which the parent gets an honest result with the partial work (R33). Every event of a sub-agent is
re-emitted with ``source = Source(call id, type)`` (R7); its model calls count into the run's usage.

A sub-agent starts from the set-up its parent run started with (``ctx.setup``), never from whatever the
app would give the next run: a model switched while the run goes on reaches neither (R13).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent, Emit, Notice, RunResumed, Source
from ink.agent.history import History, HistoryChange
from ink.agent.loop import LoopResult, LoopSetup, PendingInput, run_loop
from ink.agent.pause import PauseGate
from ink.agent.tool import CallDescription, Tool, ToolCallContext, ToolKind, ToolOutput, kind_of
from ink.ai.messages import AssistantMessage, message_to_json
from ink.ai.provider import ToolSpec
from ink.config.agents import AgentType
from ink.extend.subagents import RunningAgent, SubAgents

CONTEXT_HEADING = "# The main agent's instructions, for context"
PARTIAL_CHARS = 8000  # of a stopped sub-agent's work, returned to the parent


class TaskTool:
    kind: ToolKind = "delegate"  # its own calls are judged one by one; the call itself asks nothing
    concurrency_safe = True  # several sub-agents may work at once

    def __init__(
        self,
        types: Mapping[str, AgentType],
        agents: SubAgents,
        transcripts: Callable[[], Path | None] = lambda: None,
    ) -> None:
        self._types = dict(types)
        self.agents = agents
        self._transcripts = transcripts

    @property
    def spec(self) -> ToolSpec:
        kinds = "; ".join(f"{t.name}: {t.description}" for t in self._types.values())
        return ToolSpec(
            "task",
            "Hand a self-contained job to a sub-agent with its own context, and get its answer back. Several "
            f"may run at once. Give it everything it needs in the prompt. Agent types: {kinds}.",
            {
                "type": "object",
                "properties": {
                    "description": {"type": "string", "description": "A few words on the job, for the user."},
                    "prompt": {"type": "string", "description": "The job, completely described."},
                    "agent": {
                        "type": "string",
                        "enum": sorted(self._types),
                        "description": "Default: general.",
                    },
                },
                "required": ["description", "prompt"],
                "additionalProperties": False,
            },
        )

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        return CallDescription(f"{args.get('agent') or 'general'}: {args.get('description', '')}")

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        kind = self._types.get(str(args.get("agent") or "general"))
        if kind is None:
            return ToolOutput(
                f"Unknown agent type {args.get('agent')!r}; known: {', '.join(self._types)}.", is_error=True
            )
        if not isinstance(ctx.setup, LoopSetup):  # the loop always hands its own
            return ToolOutput("A sub-agent can only start from a run of ink's loop.", is_error=True)
        source = Source(ctx.tool_call_id, kind.name)
        agent = _running_agent(source, ctx)
        remove = ctx.signal.on_abort(agent.signal.abort)  # R17: the run's abort reaches the sub-agent
        self.agents.running[source.id] = agent
        history = History()
        stop_recording = self._record(history, source, ctx.emit)
        try:
            setup = replace(_sub_agent_setup(ctx.setup, kind, source), pause=agent.pause)
            result = await self._run(setup, agent, history, str(args["prompt"]))
        finally:
            remove()
            stop_recording()
            self.agents.running.pop(source.id, None)
            if agent.pause.resume():  # every run_paused of it is followed by its run_resumed
                agent.emit(RunResumed("abort" if agent.signal.aborted else "end"))
        return _output(kind, result, history, agent.signal)

    async def _run(self, setup: LoopSetup, agent: RunningAgent, history: History, prompt: str) -> LoopResult:
        first = [PendingInput(f"{agent.source.id}-prompt", prompt, "steer")]
        return await run_loop(history, first, setup, agent.signal, agent.emit, _Inbox(agent))

    def _record(self, history: History, source: Source, emit: Emit) -> Callable[[], None]:
        """The sub-agent's transcript, one message a line, next to the session file (kept with it). The
        run does not depend on it, but the user is told (once) when it cannot be written."""
        folder = self._transcripts()
        if folder is None:
            return lambda: None
        path = folder / transcript_name(source)
        failed: list[OSError] = []

        def write(change: HistoryChange) -> None:
            lines = "".join(
                json.dumps(message_to_json(m), ensure_ascii=False) + "\n" for m in change.messages
            )
            try:
                folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                with path.open("a", encoding="utf-8") as file:
                    file.write(lines)
            except OSError as exc:
                if not failed:
                    failed.append(exc)
                    problem = f"{exc.strerror or exc}".strip()
                    emit(
                        Notice(
                            f"the transcript of sub-agent {source.agent} cannot be written to {path}: "
                            f"{problem}; the run goes on without it",
                            "warning",
                        )
                    )

        return history.subscribe(write)


def _running_agent(source: Source, ctx: ToolCallContext) -> RunningAgent:
    """A sub-agent of the call ``ctx``: its own abort signal, a pause gate under its parent run's (a
    pause of the run holds it too, R44), and its events re-emitted with its ``source`` (R7)."""
    parent_emit = ctx.emit

    def emit(event: AgentEvent) -> None:
        parent_emit(replace(event, source=source))

    parent = ctx.setup.pause if isinstance(ctx.setup, LoopSetup) else None
    return RunningAgent(source, AbortSignal(), pause=PauseGate(parent), emit=emit)


_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


def transcript_name(source: Source) -> str:
    """``AGENT-ID.jsonl``; a type or call id that cannot name a file as it is (``/``, NUL, a leading dot,
    more than 100 characters: the model and the agent files choose them) is replaced by a digest."""

    def part(text: str) -> str:
        if _SAFE_NAME.fullmatch(text):
            return text
        import hashlib  # only for a name that must be replaced: a plain turn does not import it

        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]

    return f"{part(source.agent)}-{part(source.id)}.jsonl"


def _sub_agent_setup(parent: LoopSetup, kind: AgentType, source: Source) -> LoopSetup:
    """The parent run's set-up narrowed to the agent type: its prompt first, its tools (never another
    ``task``), its model if it names one; no prompt or stop hooks (they are the user's run's)."""

    def allowed(tools: Sequence[Tool]) -> tuple[Tool, ...]:
        return tuple(
            t
            for t in tools
            if kind_of(t) != "delegate"  # a sub-agent starts none of its own
            and (kind.tools is None or t.spec.name in kind.tools)
            and (kind.kinds is None or kind_of(t) in kind.kinds)
        )

    joining = parent.joining
    return replace(
        parent,
        system_prompt=f"{kind.prompt}\n\n{CONTEXT_HEADING}\n\n{parent.system_prompt}",
        tools=allowed(parent.tools),
        joining=(lambda: allowed(joining())) if joining is not None else None,
        model=kind.model or parent.model,
        on_prompt=None,
        on_stop=None,
        notes=None,  # the user's run's: a job's end is told to the model the user talks to
        source=source,
    )


class _Inbox:
    """A sub-agent's ``LoopInput``: the steer texts sent to it (RPC ``steer {source}``); no follow-ups.
    Nothing waits in a ledger, so what is taken needs no commit."""

    def __init__(self, agent: RunningAgent) -> None:
        self._agent = agent
        self._steered = itertools.count(1)

    def take_steering(self) -> list[PendingInput]:
        taken = [
            PendingInput(f"{self._agent.source.id}-steer-{next(self._steered)}", text, "steer")
            for text in self._agent.inbox
        ]
        self._agent.inbox.clear()
        return taken

    def take_follow_ups(self) -> list[PendingInput]:
        return []

    def committed(self, input_ids: Sequence[str]) -> None:
        pass

    def refused(self, input_ids: Sequence[str]) -> None:
        pass  # a sub-agent has no prompt hook


def _output(kind: AgentType, result: LoopResult, history: History, signal: AbortSignal) -> ToolOutput:
    answers = [m.text for m in history.messages if isinstance(m, AssistantMessage) and m.text.strip()]
    if result.stop_reason == "completed":
        return ToolOutput(
            answers[-1] if answers else f"The {kind.name} sub-agent finished without an answer."
        )
    work = "\n\n".join(answers)[-PARTIAL_CHARS:] or _calls_made(history)
    if result.stop_reason == "aborted":
        return ToolOutput(
            f"Interrupted by the user: the {kind.name} sub-agent was stopped before it finished. "
            f"Its work so far:\n\n{work}",
            is_error=True,
            interrupted=True,
        )
    cause = result.error or result.budget  # a budget used up (R45) says which limit
    why = str(cause) if cause is not None else result.stop_reason.replace("_", " ")
    return ToolOutput(
        f"The {kind.name} sub-agent did not finish ({why}). Its work so far:\n\n{work}", is_error=True
    )


def _calls_made(history: History) -> str:
    """What a sub-agent that wrote no text did: its tool calls by name (a stopped sub-agent that ran
    bash did something, which "(nothing yet)" denied)."""
    names = [c.name for m in history.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    if not names:
        return "(nothing yet)"
    counted = ", ".join(f"{name} x{n}" if n > 1 else name for name, n in Counter(names).items())
    return f"(no text written yet; {len(names)} tool call{'s' if len(names) != 1 else ''}: {counted})"
