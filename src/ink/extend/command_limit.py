"""``allowed-tools`` of a custom command: while the command's prompt is the latest prompt in the history,
the model may call only those tools (docs/commands.md). Anything else is refused as the call's error
result (R4), with the reason the model needs to carry on without it.
"""

from __future__ import annotations

from ink.agent.history import HistoryView
from ink.agent.tool import Refusal, ToolCallContext
from ink.ai.messages import UserMessage


class CommandToolLimit:
    """A before-tool step: the limits are keyed by the command's input id, and the call's history says
    which prompt is the latest."""

    def __init__(self) -> None:
        self.limits: dict[str, tuple[str, frozenset[str]]] = {}  # input id -> (command name, tools)

    def limit(self, input_id: str, command: str, tools: frozenset[str]) -> None:
        self.limits[input_id] = (command, tools)

    def current(self, history: HistoryView) -> tuple[str, frozenset[str]] | None:
        for message in reversed(history.messages):
            if isinstance(message, UserMessage) and message.kind == "prompt":
                return self.limits.get(message.input_id or "")
        return None

    async def __call__(self, ctx: ToolCallContext) -> Refusal | None:
        found = self.current(ctx.history) if self.limits else None
        if found is not None and ctx.call.name not in found[1]:
            command, tools = found
            allowed = ", ".join(sorted(tools)) or "none"
            return Refusal(
                f"Not executed: the /{command} command allows only these tools: {allowed}. "
                "Do the task with them, or tell the user what else you need."
            )
        return None
