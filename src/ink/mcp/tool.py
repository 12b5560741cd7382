"""An MCP server's tool as an ink tool: the same scheduling, permissions and run control as the others.

The model sees ``mcp__SERVER__TOOL`` (``names``) with the server's JSON schema; the call goes out under
the tool's real name. Read-only tools (the server's ``readOnlyHint``) may run concurrently with other
safe calls. On abort the call's task is cancelled, which sends ``notifications/cancelled`` to the
server, and the result says the call was interrupted, with the progress that had arrived (R19,
R33). A server that does not let go is the scheduler's business: it abandons the call after the grace
period (R20), and a late answer is never written to the history.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ink.agent.abort import run_unless_aborted
from ink.agent.tool import CallDescription, ToolCallContext, ToolKind, ToolOutput
from ink.ai.messages import ToolImage
from ink.ai.provider import ToolSpec
from ink.mcp.model import RemoteTool
from ink.mcp.names import tool_name
from ink.mcp.results import McpResult, cap, convert

MAX_PROGRESS_LINES = 20  # progress messages kept for an interrupted call's result


class Caller(Protocol):
    """``ServerConnection.call``, as the adapter needs it."""

    async def call(self, tool: str, args: Mapping[str, Any], progress: Any) -> Mapping[str, Any]: ...


class McpTool:
    """``remote`` may be replaced when the server's tool list changes (same name, new description or
    schema); ``offered`` is False once the server no longer lists the tool (a call then says so)."""

    def __init__(
        self,
        remote: RemoteTool,
        server: Caller,
        on_result: Callable[[McpResult], None] | None = None,
        name: str | None = None,
    ) -> None:
        self.remote = remote
        self.name = name or tool_name(remote.server, remote.name)
        self.offered = True
        self.server = server
        self._on_result = on_result

    @property
    def spec(self) -> ToolSpec:
        remote = self.remote
        description = remote.description or f"The tool {remote.name} of the MCP server {remote.server}."
        return ToolSpec(self.name, description, remote.schema)

    @property
    def kind(self) -> ToolKind:
        """From the server's annotations (``RemoteTool.kind``): the permission policy judges the tool by
        it, as it judges ink's own tools of that kind (a read runs without a question)."""
        return self.remote.kind

    @property
    def concurrency_safe(self) -> bool:
        return self.remote.read_only

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        remote = self.remote
        shown = ", ".join(f"{k}={_short(v)}" for k, v in list(args.items())[:3])
        warning = " (destructive)" if remote.destructive and not remote.read_only else ""
        return CallDescription(f"{remote.server}: {remote.title or remote.name}({shown}){warning}")

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        from ink.mcp.connection import CallFailed, ServerUnavailable

        if not self.offered:
            return ToolOutput(
                f"the MCP server {self.remote.server} no longer offers {self.name}", is_error=True
            )
        progress: list[str] = []

        def on_progress(done: float, total: float | None, message: str | None) -> None:
            line = message or (f"{done:g}/{total:g}" if total else f"{done:g}")
            progress[:] = [*progress, line[:1000]][-MAX_PROGRESS_LINES:]
            ctx.on_update(line + "\n")  # a tool_update event for the user

        started = time.monotonic()
        try:
            call = self.server.call(self.remote.name, args, on_progress)
            outcome = await run_unless_aborted(call, ctx.signal)
        except (ServerUnavailable, CallFailed) as exc:
            return ToolOutput(f"{self.name} failed: {exc}", is_error=True)
        if outcome.aborted:
            return ToolOutput(self._interrupted(time.monotonic() - started, progress), True, True)
        assert outcome.value is not None
        result = convert(outcome.value)
        if self._on_result is not None:
            self._on_result(result)
        images = tuple(ToolImage(image.mime_type, image.data) for image in result.images)
        return ToolOutput(result.text, is_error=result.is_error, images=images)

    def _interrupted(self, elapsed: float, progress: list[str]) -> str:
        head = (
            f"Interrupted by the user after {elapsed:.1f} s: the MCP server {self.remote.server} was told "
            f"to cancel {self.remote.name}; it returned no result."
        )
        if not progress:
            return head
        return cap(head + " Progress reported before the interrupt:\n" + "\n".join(progress))


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
