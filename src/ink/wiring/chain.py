"""The before-tool chain of the app: every check a tool call passes before it runs, in the order they
are asked, in one list (``ink.agent.before_tool`` runs it: the first refusal wins). A new check (the
sandbox's, a plan's) is one entry here; each step is a ``BeforeToolStep`` that gets the call's
``ToolCallContext`` (docs/design/call-context.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
