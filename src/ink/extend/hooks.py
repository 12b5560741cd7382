"""Hooks around the run (docs/hooks.md): the configured commands, plugged into the loop's seams.

    hooks = HookSet(settings.hooks, runner, approval)
    setup = replace(setup, before_tool=hooks.before_tool(permission), after_tool=hooks.after_tool,
                    on_prompt=hooks.on_prompt, on_stop=hooks.on_stop)

- ``pre_tool``: a denial is the call's error result, with the hook's reason (R4); an ``allow`` skips
  the permission question; anything else leaves the call to the permission policy.
- ``post_tool``: a block reason or added context is appended to the result the model reads.
- ``user_prompt``: a block hands the input back to the user (never lost, R30) with the reason; context
  goes into the history after the prompt. ``session_start`` runs before the session's first prompt.
- ``stop``: a block makes the model go on, with the reason as a message (at most a few times a run).

Hooks of one event run one after another in config order; the first denial wins. A hook that fails or
times out is reported (a warning notice) and counts as having said nothing: it never fails the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from ink.agent.abort import AbortSignal
from ink.agent.loop import PendingInput, PromptCheck
from ink.agent.tool import BeforeToolHook, Refusal
from ink.ai.messages import ToolCall, ToolResult
from ink.config.hooks import HookEvent, HookSpec
from ink.extend.hook_approval import ProjectHookApproval
from ink.extend.hook_events import base_event, claude_tool_name, tool_fields, tool_response
from ink.extend.hook_process import HookAnswer, run_hook
from ink.tools.processes import ProcessRegistry


class HookContext(msgspec.Struct, frozen=True):
    """Where hooks run and who hears about them. ``session`` gives the session's id and transcript."""

    cwd: Path
    processes: ProcessRegistry
    kill_delay: float
    notify: Callable[[str], None]
    session: Callable[[], tuple[str | None, Path | None]]
    hand_back: Callable[[Sequence[str], str], None]  # prompts a hook refused: back to the user


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
        self, event: HookEvent, fields: Mapping[str, Any], signal: AbortSignal, tool: str | None = None
    ) -> HookAnswer:
        """Every matching hook of ``event`` in order, their answers combined; stops at a denial."""
        chosen = [h for h in self._hooks if h.event == event and self._matches(h, tool)]
        if any(h.scope == "project" for h in chosen) and not await self._approval.approved(signal):
            chosen = [h for h in chosen if h.scope != "project"]
        session_id, transcript = self._ctx.session()
        payload = base_event(event, self._ctx.cwd, session_id, transcript) | dict(fields)
        allowed, contexts = False, []
        for hook in chosen:
            answer = await run_hook(
                hook, payload, self._ctx.cwd, signal, self._ctx.processes, self._ctx.kill_delay
            )
            for note in (answer.problem, answer.message):
                if note:
                    self._ctx.notify(note)
            if answer.context:
                contexts.append(answer.context)
            if answer.decision == "deny":
                return replace(answer, context="\n\n".join(contexts))
            allowed = allowed or answer.decision == "allow"
        return HookAnswer("allow" if allowed else None, context="\n\n".join(contexts))

    @staticmethod
    def _matches(hook: HookSpec, tool: str | None) -> bool:
        return tool is None or hook.matches(tool) or hook.matches(claude_tool_name(tool))

    # -- the loop's seams --------------------------------------------------------------------------

    def before_tool(self, inner: BeforeToolHook | None) -> BeforeToolHook:
        async def check(call: ToolCall, signal: AbortSignal) -> Refusal | None:
            if self.has("pre_tool"):
                answer = await self.run("pre_tool", tool_fields(call, self._ctx.cwd), signal, call.name)
                if answer.decision == "deny":
                    return Refusal(f"Not executed: blocked by a pre_tool hook: {answer.reason}")
                if answer.decision == "allow":
                    return None
            return await inner(call, signal) if inner is not None else None

        return check

    async def after_tool(self, call: ToolCall, result: ToolResult, signal: AbortSignal) -> ToolResult:
        if not self.has("post_tool"):
            return result
        fields = tool_fields(call, self._ctx.cwd) | {
            "tool_response": tool_response(result, call, self._ctx.cwd)
        }
        answer = await self.run("post_tool", fields, signal, call.name)
        notes = [f"[post_tool hook] {text}" for text in (answer.reason, answer.context) if text]
        if not notes:
            return result
        return replace(result, output="\n\n".join([result.output, *notes]))

    async def on_prompt(self, inputs: Sequence[PendingInput], signal: AbortSignal) -> PromptCheck:
        contexts = [await self._session_start(signal)]
        accepted = []
        for item in inputs:
            answer = (
                await self.run("user_prompt", {"prompt": item.text}, signal)
                if self.has("user_prompt")
                else HookAnswer()
            )
            if answer.decision == "deny":
                self._ctx.hand_back([item.input_id], answer.reason or "a user_prompt hook refused it")
                continue
            accepted.append(item)
            contexts.append(answer.context)
        return PromptCheck(accepted, "\n\n".join(c for c in contexts if c))

    async def _session_start(self, signal: AbortSignal) -> str:
        if self._session_started or not self.has("session_start"):
            return ""
        self._session_started = True
        return (await self.run("session_start", {"source": "startup"}, signal)).context

    async def on_stop(self, stops: int, signal: AbortSignal) -> str | None:
        if not self.has("stop"):
            return None
        answer = await self.run("stop", {"stop_hook_active": stops > 0}, signal)
        if answer.decision != "deny":
            return None
        return f"[stop hook] {answer.reason or 'a stop hook asked you to go on'}"
