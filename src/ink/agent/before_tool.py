"""The before-tool chain: the checks a call passes before it runs, asked in the order of one list
(``LoopSetup.before_tool``; the app's is built in one place, ``ink.wiring.chain``), the first "no" wins.

Each step gets the call's ``ToolCallContext`` and answers None (no objection), a ``Refusal`` (the call
is not run; no later step is asked), or a context to go on with: a ``ruling`` for a later step to weigh
(the pre_tool hooks' answer, weighed by the permission step), or a changed call (the arguments a hook
gave, once the permission step judged them as a new call, R37), which the later steps judge and the
tool runs with. The scheduler runs the chain under one lock: one question to the user at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

from ink.agent.tool import BeforeToolStep, Refusal, ToolCallContext


async def check_call(steps: Sequence[BeforeToolStep], ctx: ToolCallContext) -> Refusal | ToolCallContext:
    """Ask every step in order; the refusal of the first that refuses, else the context the call runs
    with. An exception of a step propagates (the scheduler makes it the call's error result, R19)."""
    for step in steps:
        answer = await step(ctx)
        if isinstance(answer, Refusal):
            return answer
        if answer is not None:
            ctx = answer
    return ctx
