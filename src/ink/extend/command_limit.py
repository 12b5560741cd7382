"""``allowed-tools`` of a custom command: while the command's prompt is the latest prompt in the history,
the model may call only those tools (docs/commands.md). Anything else is refused as the call's error
result (R4), with the reason the model needs to carry on without it.
"""

from __future__ import annotations

from collections.abc import Callable

from ink.agent.abort import AbortSignal
from ink.agent.history import History
from ink.agent.tool import BeforeToolHook, Refusal, Rewrite
from ink.ai.messages import ToolCall, UserMessage


class CommandToolLimit:
    """A ``BeforeToolHook`` in front of ``inner``: the limits are keyed by the command's input id."""

    def __init__(self, history: Callable[[], History], inner: BeforeToolHook | None) -> None:
        self._history = history
        self.inner = inner
        self.limits: dict[str, tuple[str, frozenset[str]]] = {}  # input id -> (command name, tools)

    def limit(self, input_id: str, command: str, tools: frozenset[str]) -> None:
        self.limits[input_id] = (command, tools)

    def current(self) -> tuple[str, frozenset[str]] | None:
        for message in reversed(self._history().messages):
            if isinstance(message, UserMessage) and message.kind == "prompt":
                return self.limits.get(message.input_id or "")
        return None

    async def __call__(self, call: ToolCall, signal: AbortSignal) -> Refusal | Rewrite | None:
        found = self.current() if self.limits else None
        if found is not None and call.name not in found[1]:
            command, tools = found
            allowed = ", ".join(sorted(tools)) or "none"
            return Refusal(
                f"Not executed: the /{command} command allows only these tools: {allowed}. "
                "Do the task with them, or tell the user what else you need."
            )
        return await self.inner(call, signal) if self.inner is not None else None
