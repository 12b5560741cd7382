"""Hooks around the run (docs/hooks.md): the configured commands, plugged into the loop's seams.

    hooks = HookSet(settings.hooks, context, approval)
    setup = replace(setup, before_tool=(..., hooks.before_tool, permission), after_tool=hooks.after_tool,
                    on_prompt=hooks.on_prompt, on_stop=hooks.on_stop)

- ``pre_tool`` (the step ``before_tool`` of the before-tool chain): the hooks' combined answer (deny,
  ask, allow, an ``updatedInput``) goes on in the call's context (``ruling``) to the permission step,
  which weighs it against the rules and the mode in the one precedence (R37,
  ``ink.permissions.precedence``): a hook's allow never beats a deny rule. A pre_tool hook that fails,
  times out, or answers something unreadable or too long denies the call, with a reason (R39).
- ``post_tool``: a block reason or added context is appended to the result the model reads.
- ``user_prompt``: a block hands the input back to the user (never lost, R30) with the reason; context
  goes into the history after the prompt. ``session_start`` runs before the session's first prompt.
- ``stop``: a block makes the model go on, with the reason as a message (at most a few times a run).

Hooks of one event run one after another in config order; the first denial wins. A hook of the other
events that fails or times out is reported (a warning notice) and counts as having said nothing.
A project's hooks are approved (``hook_approval``) before anything of them is evaluated, their matchers
included (R39).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from ink.agent.abort import AbortSignal
from ink.agent.events import Source
from ink.agent.loop import PendingInput, PromptCheck
from ink.agent.tool import Ruling, ToolCallContext
from ink.ai.messages import ToolCall, ToolResult
from ink.config.hooks import HookEvent, HookSpec
from ink.extend.hook_approval import ProjectHookApproval
from ink.extend.hook_events import (
    arguments_from_hook,
    base_event,
    claude_tool_name,
    permission_fields,
    tool_fields,
    tool_input,
    tool_response,
)
from ink.extend.hook_process import HookAnswer, run_hook
from ink.sandbox import Sandbox
from ink.tools.processes import ProcessRegistry
from ink.vocabulary import Verdict


def _ask_mode() -> str:
    return "ask"


class HookContext(msgspec.Struct, frozen=True):
    """Where hooks run and who hears about them. ``session`` gives the session's id and transcript;
    ``permission_mode`` the mode tool calls are judged in now (hooks read it as ``permission_mode``);
    ``stop_run(message)`` stops the run going on as the user's interrupt would (a hook's
    ``"continue": false``; None: the signal the hook ran under is aborted)."""

    cwd: Path
    processes: ProcessRegistry
    kill_delay: float
    notify: Callable[[str], None]
    session: Callable[[], tuple[str | None, Path | None]]
    sandbox: Sandbox | None = None  # hooks run in it (R41)
    permission_mode: Callable[[], str] = _ask_mode
    stop_run: Callable[[str], None] | None = None


class HookSet:
    def __init__(
        self, hooks: Sequence[HookSpec], context: HookContext, approval: ProjectHookApproval
    ) -> None:
        self._hooks = list(hooks)
        self._ctx = context
        self._approval = approval
        self._session_started = False

    def has(self, event: HookEvent) -> bool:
        return any(h.event == event for h in self._hooks)

    async def run(
        self,
        event: HookEvent,
        fields: Mapping[str, Any],
        signal: AbortSignal,
        tool: str | None = None,
        source: Source | None = None,
    ) -> HookAnswer:
        """Every matching hook of ``event`` in order, their answers combined; stops at a denial.
        ``source``: the sub-agent the event is of (its approval question carries it, R7)."""
        payload = self._base(event) | dict(fields)
        allowed, contexts = False, []
        for hook in await self._chosen(event, tool, signal, source):
            answer = await self._one(hook, payload, signal)
            if answer.context:
                contexts.append(answer.context)
            if answer.decision == "deny" or answer.stop is not None:
                return replace(answer, context="\n\n".join(contexts))
            allowed = allowed or answer.decision == "allow"
        return HookAnswer("allow" if allowed else None, context="\n\n".join(contexts))

    async def _chosen(
        self, event: HookEvent, tool: str | None, signal: AbortSignal, source: Source | None = None
    ) -> list[HookSpec]:
        """The hooks of ``event`` that apply to ``tool``. A project's are dropped unless approved, and
        the approval comes first: nothing of a project's hook, its matcher included, is evaluated before."""
        hooks = [h for h in self._hooks if h.event == event]
        if any(h.scope == "project" for h in hooks) and not await self._approval.approved(signal, source):
            hooks = [h for h in hooks if h.scope != "project"]
        return [h for h in hooks if self._matches(h, tool)]

    async def _one(self, hook: HookSpec, payload: Mapping[str, Any], signal: AbortSignal) -> HookAnswer:
        """One hook's answer, its notes shown. A pre_tool hook's problem is a denial (R39: fail closed)."""
        ctx = self._ctx
        answer = await run_hook(hook, payload, ctx.cwd, signal, ctx.processes, ctx.kill_delay, ctx.sandbox)
        for note in (answer.problem, answer.message):
            if note:
                ctx.notify(note)
        if answer.problem and hook.event == "pre_tool":
            return HookAnswer("deny", f"{answer.problem}; the call is blocked until the hook answers")
        if answer.stop is not None:  # Claude Code's "continue": false: the whole run stops here
            ctx.notify(f"{hook.label} stopped the run: {answer.stop}")
            if ctx.stop_run is not None:
                ctx.stop_run(answer.stop)
            else:
                signal.abort("hook", answer.stop)
        return answer

    def _base(self, event: HookEvent) -> dict[str, Any]:
        session_id, transcript = self._ctx.session()
        mode = self._ctx.permission_mode()
        return base_event(event, self._ctx.cwd, session_id, transcript) | permission_fields(mode)

    @staticmethod
    def _matches(hook: HookSpec, tool: str | None) -> bool:
        return tool is None or hook.matches(tool) or hook.matches(claude_tool_name(tool))

    # -- the loop's seams --------------------------------------------------------------------------

    async def before_tool(self, ctx: ToolCallContext) -> ToolCallContext | None:
        """The pre_tool hooks as a step of the before-tool chain: their answer goes on in the call's
        context (``ruling``) for the permission step to weigh; nothing is decided here."""
        if not self.has("pre_tool"):
            return None
        answer = await self.pre_tool(ctx.call, ctx.signal, ctx.source)
        if answer.decision is None and answer.updated_input is None:
            return None
        return replace(ctx, ruling=Ruling(answer.decision, answer.reason, answer.updated_input))

    async def pre_tool(self, call: ToolCall, signal: AbortSignal, source: Source | None = None) -> HookAnswer:
        """The pre_tool hooks' combined answer on ``call``: the first deny ends it; an ask outweighs an
        allow. A hook's ``updatedInput`` becomes the input every later hook reads, and the answer's
        ``updated_input`` (in the tool's own argument names); an allow given before it was for another
        input and no longer counts. Nothing here decides: ``ink.permissions`` weighs the answer (R37)."""
        if not self.has("pre_tool"):
            return HookAnswer()
        cwd = self._ctx.cwd
        fields = self._base("pre_tool") | tool_fields(call, cwd)
        arguments: dict[str, Any] | None = None
        said: Verdict | None = None
        reasons: list[str] = []
        for hook in await self._chosen("pre_tool", call.name, signal, source):
            answer = await self._one(hook, fields, signal)
            if answer.decision == "deny" or answer.stop is not None:
                return replace(answer, decision="deny", updated_input=arguments)
            if answer.updated_input is not None:
                current = arguments if arguments is not None else call.arguments
                arguments = arguments_from_hook(answer.updated_input, current, cwd)
                fields = fields | {"tool_input": tool_input(arguments, cwd)}
                said = "ask" if said == "ask" else None
            if answer.decision == "ask" or (answer.decision == "allow" and said is None):
                said = answer.decision
            if answer.decision is not None and answer.reason:
                reasons.append(answer.reason)
        return HookAnswer(said, "; ".join(reasons), updated_input=arguments)

    async def after_tool(self, ctx: ToolCallContext, result: ToolResult) -> ToolResult:
        if not self.has("post_tool"):
            return result
        call = ctx.call
        fields = tool_fields(call, self._ctx.cwd) | {
            "tool_response": tool_response(result, call, self._ctx.cwd)
        }
        answer = await self.run("post_tool", fields, ctx.signal, call.name, ctx.source)
        notes = [f"[post_tool hook] {text}" for text in (answer.reason, answer.context) if text]
        if not notes:
            return result
        return replace(result, output="\n\n".join([result.output, *notes]))

    async def on_prompt(self, inputs: Sequence[PendingInput], signal: AbortSignal) -> PromptCheck:
        contexts = [await self._session_start(signal)]
        accepted, refused = [], []
        for item in inputs:
            answer = (
                await self.run("user_prompt", {"prompt": item.text}, signal)
                if self.has("user_prompt")
                else HookAnswer()
            )
            if answer.decision == "deny":  # back to the user, with the reason (R30)
                why = answer.reason or "a user_prompt hook refused it"
                self._ctx.notify(f"a user_prompt hook refused the input: {why}")
                refused.append(item.input_id)
                continue
            accepted.append(item)
            contexts.append(answer.context)
        return PromptCheck(accepted, "\n\n".join(c for c in contexts if c), refused)

    async def _session_start(self, signal: AbortSignal) -> str:
        if self._session_started or not self.has("session_start"):
            return ""
        self._session_started = True
        return (await self.run("session_start", {"source": "startup"}, signal)).context

    async def on_stop(self, stops: int, signal: AbortSignal) -> str | None:
        if not self.has("stop"):
            return None
        answer = await self.run("stop", {"stop_hook_active": stops > 0}, signal)
        if answer.decision != "deny" or answer.stop is not None:  # "continue": false wins over block
            return None
        return f"[stop hook] {answer.reason or 'a stop hook asked you to go on'}"
