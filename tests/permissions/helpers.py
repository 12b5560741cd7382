"""Building policies from rule texts, the way config files and flags give them, over ink's own tools."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ink.agent.abort import AbortSignal
from ink.agent.tool import Ruling, Tool, ToolCallContext, find_tool
from ink.ai.messages import ToolCall
from ink.config.keys import PermissionMode
from ink.config.rules import parse_rule
from ink.permissions import PermissionPolicy, RuleSet
from ink.tools import ProcessRegistry, default_tools


def builtin_tools(root: Path) -> Callable[[str], Tool | None]:
    """The policy's lookup of ink's standard tools working in ``root``."""
    tools = default_tools(root, ProcessRegistry())
    return lambda name: find_tool(tools, name)


@dataclass(frozen=True)
class Run:
    """The set-up a call's context carries, as the permission step reads it: the run's tools."""

    tools: Sequence[Tool]


def call_context(
    root: Path, call: ToolCall, ruling: Ruling | None = None, signal: AbortSignal | None = None
) -> ToolCallContext:
    """``call``'s context in a run of ink's standard tools working in ``root``; ``ruling``: what the
    pre_tool hooks said of it."""
    run = Run(default_tools(root, ProcessRegistry()))
    return ToolCallContext(call, signal or AbortSignal(), run, ruling=ruling)


def policy(
    root: Path, mode: PermissionMode = "ask", allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()
) -> PermissionPolicy:
    rules = [parse_rule("allow", text, "test") for text in allow]
    rules += [parse_rule("deny", text, "test") for text in deny]
    return PermissionPolicy(mode, RuleSet(rules), root, builtin_tools(root))


def kind(p: PermissionPolicy, tool: str, **args: object) -> str:
    return p.check(tool, args).kind


def bash(p: PermissionPolicy, command: str) -> str:
    return kind(p, "bash", command=command)
