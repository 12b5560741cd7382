"""The chains of the app, each in one place. The before-tool chain: every check a tool call passes before
it runs, in the order they are asked (``ink.agent.before_tool`` runs it: the first refusal wins). A new
check (the sandbox's, a plan's) is one entry here; each step is a ``BeforeToolStep`` that gets the call's
``ToolCallContext`` (docs/design/call-context.md). The prompt steps: what an input passes as it enters
the history (``PromptSteps``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ink.agent.abort import AbortSignal
from ink.agent.loop import PendingInput, PromptCheck, PromptHook
from ink.agent.tool import BeforeToolStep
from ink.extend.command_limit import CommandToolLimit
from ink.wiring.sandboxing import leave_check

if TYPE_CHECKING:
    from ink.extend.hooks import HookSet
    from ink.rewind import SessionCheckpoints


def before_tool_chain(
    checkpoints: SessionCheckpoints | None,
    limit: CommandToolLimit,
    hooks: HookSet | None,
    permission: BeforeToolStep,
) -> tuple[BeforeToolStep, ...]:
    """The steps, top to bottom; a part that is off (no checkpoints, no hooks) is left out."""
    steps: list[BeforeToolStep | None] = [
        checkpoints.gate if checkpoints is not None else None,  # no file changes before its checkpoint
        limit,  # a custom command's allowed-tools (docs/commands.md)
        leave_check,  # a call that asks to leave the sandbox says why (R41); the permission step asks
        hooks.before_tool if hooks is not None else None,  # pre_tool hooks: their answer, for the policy
        permission,  # weighs the hooks' answer with the rules and the mode (R37); asks the user
    ]
    return tuple(step for step in steps if step is not None)


class PromptSteps:
    """The steps an input passes as it enters the history, in order (a ``PromptHook``): a part's first
    (MCP expands its prompts and resource mentions: a part with an ``on_prompt`` method), the
    ``user_prompt`` hooks last. Each step gets what the one before let through; the contexts they add
    follow one another; an input any of them held back goes back to the user (R30)."""

    def __init__(self, steps: Sequence[PromptHook]) -> None:
        self.steps = tuple(steps)

    @classmethod
    def of(cls, parts: Sequence[object], hooks: HookSet | None) -> PromptHook | None:
        found = [step for part in parts if (step := getattr(part, "on_prompt", None)) is not None]
        steps = [*found, *([hooks.on_prompt] if hooks is not None else [])]
        return None if not steps else steps[0] if len(steps) == 1 else cls(steps)

    async def __call__(self, inputs: Sequence[PendingInput], signal: AbortSignal) -> PromptCheck:
        contexts: list[str] = []
        refused: list[str] = []
        for step in self.steps:
            checked = await step(inputs, signal)
            inputs, refused = checked.accepted, [*refused, *checked.refused]
            contexts += [checked.context] if checked.context else []
        return PromptCheck(inputs, "\n\n".join(contexts), refused)
