"""Tools that join the session while a run goes on (an MCP server's tools/list_changed): the run's next
model request offers them, a call naming one runs, and a sub-agent sees only those its type allows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ink.agent.abort import AbortSignal
from ink.agent.events import Source
from ink.agent.loop import LoopSetup, offered
from ink.agent.scheduler import ToolScheduler
from ink.agent.tool import CallDescription, ToolCallContext, ToolKind, ToolOutput
from ink.ai.messages import ToolCall
from ink.ai.provider import ToolSpec
from ink.config.agents import BUILT_IN
from ink.extend.task import _sub_agent_setup


class Named:
    def __init__(self, name: str, kind: ToolKind) -> None:
        self._name, self._kind = name, kind

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self._name, f"the {self._name} tool", {"type": "object"})

    @property
    def kind(self) -> ToolKind:
        return self._kind

    @property
    def concurrency_safe(self) -> bool:
        return False

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        return CallDescription(self._name)

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        return ToolOutput(f"{self._name} ran")


def test_a_tool_that_joined_is_offered_and_runs_in_the_run_that_started_without_it() -> None:
    joined: list[Named] = []
    setup = LoopSetup(
        provider=None,
        model="m",
        system_prompt="",
        tools=(Named("read", "read"),),  # type: ignore[arg-type]
        joining=lambda: tuple(joined),
    )
    assert [s.name for s in offered(setup)] == ["read"]
    joined.append(Named("mcp__s__new", "other"))
    assert [s.name for s in offered(setup)] == ["read", "mcp__s__new"]


async def test_the_scheduler_finds_a_joined_tool_by_name() -> None:
    joined = [Named("mcp__s__new", "other")]
    signal = AbortSignal()
    scheduler = ToolScheduler([Named("read", "read")], lambda event: None, signal, joining=lambda: joined)
    [result] = await scheduler.run_batch([ToolCall("c1", "mcp__s__new", {})])
    assert result.output == "mcp__s__new ran" and not result.is_error


def test_a_read_only_sub_agent_is_not_given_a_joined_tool_its_type_forbids() -> None:
    joined = [Named("mcp__s__writes", "edit"), Named("mcp__s__looks", "read")]
    parent = LoopSetup(
        provider=None,
        model="m",
        system_prompt="",
        tools=(Named("read", "read"),),  # type: ignore[arg-type]
        joining=lambda: joined,
    )
    explore = next(t for t in BUILT_IN if t.name == "explore")
    sub = _sub_agent_setup(parent, explore, Source("a1", "explore"))
    assert sub.joining is not None and [t.spec.name for t in sub.joining()] == ["mcp__s__looks"]
