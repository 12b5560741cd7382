"""What every tool shares: its spec, argument access that fails politely, and error results.

The scheduler validates arguments against the schema before a tool runs; the accessors here check again
so that a tool called directly (tests, bang lines, a future caller) still answers with an error result
rather than an exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolKind, ToolOutput
from ink.ai.provider import ToolSpec
from ink.tools.limits import bounded
from ink.tools.workspace import Workspace

TITLE_CHARS = 120  # characters of a call's title


class ArgumentError(ValueError):
    """An argument is missing or has the wrong type; the message names it."""


def error(text: str) -> ToolOutput:
    return ToolOutput(text, is_error=True)


def get_str(args: Mapping[str, Any], name: str, default: str | None = None) -> str:
    value = args.get(name, default)
    if not isinstance(value, str):
        raise ArgumentError(f"{name} must be a string" if name in args else f"{name} is required")
    return value


def get_int(args: Mapping[str, Any], name: str, default: int | None, minimum: int = 0) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ArgumentError(f"{name} must be an integer >= {minimum}")
    return value


def get_number(args: Mapping[str, Any], name: str, default: float) -> float:
    value = args.get(name, default)
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise ArgumentError(f"{name} must be a positive number")
    return float(value)


def get_bool(args: Mapping[str, Any], name: str, default: bool = False) -> bool:
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise ArgumentError(f"{name} must be true or false")
    return value


def arg_str(args: Mapping[str, Any], name: str) -> str | None:
    """The argument ``name`` when it is a string, else None: for describing calls, which never fail."""
    value = args.get(name)
    return value if isinstance(value, str) else None


def shorten(text: str) -> str:
    """The first line of ``text``, at most ``TITLE_CHARS`` long, with ``…`` when anything was cut."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    more = line != text.strip()
    if len(line) > TITLE_CHARS:
        line, more = line[: TITLE_CHARS - 1], True
    return line + "…" if more else line


def object_schema(properties: Mapping[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": dict(properties),
        "required": required,
        "additionalProperties": False,
    }


class BaseTool:
    """Spec plumbing and the argument-error guard. Subclasses set the class attributes, ``execute``, and
    ``describe`` when a call touches paths or runs a command."""

    name: str = ""
    description: str = ""
    parameters: Mapping[str, Any] = {}
    safe: bool = False
    kind: ToolKind = "other"

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        return CallDescription(self.name)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    @property
    def concurrency_safe(self) -> bool:
        return self.safe

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        try:
            return await self.execute(args, ctx)
        except ArgumentError as exc:
            return error(f"Invalid arguments for {self.name}: {bounded(str(exc))}.")
        except OSError as exc:  # one no tool foresaw (a name too long to stat): said plainly and bounded
            where = f": {bounded(str(exc.filename))}" if exc.filename is not None else ""
            return error(f"{self.name} failed: {bounded(exc.strerror or str(exc))}{where}.")

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        raise NotImplementedError


def search_description(name: str, args: Mapping[str, Any], workspace: Workspace) -> CallDescription:
    """``grep TODO in src``: a search of ``pattern`` in ``path`` (default: the working directory)."""
    given, pattern = arg_str(args, "path"), arg_str(args, "pattern")
    where = f" in {given}" if given else ""
    return CallDescription(shorten(f"{name} {pattern or '?'}{where}"), (workspace.resolve(given or "."),))
