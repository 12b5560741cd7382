"""What the editor is shown: ``session/update`` payloads for text, thinking and tool calls, the history
replayed by ``session/load``, and the question of ``session/request_permission``. Data in, JSON out.

Tool calls are shown from what each tool says of itself (``Tool.kind``, ``Tool.describe``): the ACP
``kind``, a ``title`` (``bash npm test``, ``read src/app.py``), ``locations`` for the files it touches,
and, for a call that changes a file, ``diff`` content: the change it proposes when announced, the change
it made (the result's ``FileDiff`` details) when it ends, then the result text. No tool is named here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from ink.agent.events import PlanUpdate
from ink.agent.tool import Tool, ToolKind, describe_call, kind_of
from ink.ai.details import FileDiff, ToolDetail
from ink.ai.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ink.config.commands import CommandBook

Update = dict[str, Any]
Status = Literal["pending", "in_progress", "completed", "failed"]
FindTool = Callable[[str], Tool | None]

ACP_KINDS: Mapping[ToolKind, str] = {"delegate": "think"}  # the rest are ACP's own words
FENCED_KINDS = frozenset({"read", "search", "execute"})  # output shown verbatim, not as markdown
TITLE_CHARS = 120
SUMMARY_INTRO = "Summary of the earlier conversation:\n"

ALLOW_ONCE = {"optionId": "allow", "name": "Allow", "kind": "allow_once"}
DENY_ONCE = {"optionId": "deny", "name": "Deny", "kind": "reject_once"}
RULE_CHARS = 80  # of the rule an "always" option names; a longer one ends in "…"


def available_commands(
    book: CommandBook, *, rewind: bool = False, prompts: Sequence[tuple[str, str]] = ()
) -> Update:
    """The custom commands (docs/commands.md), which the editor offers after ``/`` in its prompt box,
    ink's own ``/rewind`` (docs/rewind.md) when checkpoints are on, and the MCP servers' ``prompts``
    (``/mcp__SERVER__PROMPT``, docs/mcp.md: name, description)."""
    from ink.frontends.acp.rewind import COMMAND, NAME

    commands = [
        {"name": c.name, "description": c.summary, "input": {"hint": c.argument_hint or "arguments"}}
        for c in book.commands.values()
        if not (rewind and c.name == NAME)
    ]
    commands += [COMMAND] if rewind else []
    commands += [
        {"name": name, "description": what, "input": {"hint": "arguments"}} for name, what in prompts
    ]
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def message_chunk(text: str) -> Update:
    return {"sessionUpdate": "agent_message_chunk", "content": _text(text)}


def thought_chunk(text: str) -> Update:
    return {"sessionUpdate": "agent_thought_chunk", "content": _text(text)}


def user_chunk(text: str) -> Update:
    return {"sessionUpdate": "user_message_chunk", "content": _text(text)}


def tool_call(
    call_id: str, name: str, args: Mapping[str, Any], tool: Tool | None, status: Status = "pending"
) -> Update:
    """The ``tool_call`` announcing a call (R2: when handling begins, before any check)."""
    return {"sessionUpdate": "tool_call", **call_fields(call_id, name, args, tool), "status": status}


def call_fields(
    call_id: str, name: str, args: Mapping[str, Any], tool: Tool | None, *, preview: bool = True
) -> Update:
    """The fields that describe a call: id, title, kind, raw input, locations, and (``preview``) the
    diffs of the change it proposes."""
    described = describe_call(tool, name, args)
    fields: Update = {
        "toolCallId": call_id,
        "title": described.title,
        "kind": acp_kind(kind_of(tool)),
        "rawInput": dict(args),
    }
    locations: list[Update] = [{"path": str(path)} for path in dict.fromkeys(described.paths)]
    if locations and described.line is not None:
        locations[0]["line"] = described.line
    if locations:
        fields["locations"] = locations
    diffs = diff_contents(described.preview) if preview else []
    if diffs:
        fields["content"] = diffs
    return fields


def acp_kind(kind: ToolKind) -> str:
    return ACP_KINDS.get(kind, kind)


def diff_contents(details: Sequence[ToolDetail]) -> list[Update]:
    """ACP ``diff`` content for each file change: the whole text before (null: a new file) and after. A
    file too large to carry whole shows its unified diff as text."""
    out: list[Update] = []
    for detail in details:
        if not isinstance(detail, FileDiff):
            continue
        if detail.after is not None:
            out.append(
                {"type": "diff", "path": detail.path, "oldText": detail.before, "newText": detail.after}
            )
        elif detail.unified:
            out.append(text_content(f"```diff\n{detail.unified}```"))
    return out


def status_update(call_id: str, status: Status, **fields: Any) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status, **fields}


def tool_result(result: ToolResult, kind: ToolKind, diffs: Sequence[Update] = ()) -> Update:
    """The ``tool_call_update`` that ends a call: ``completed`` or ``failed`` (an error, or stopped by an
    abort), with its output as content. When it worked, the change it made comes first (its details),
    else the ``diffs`` announced with the call. The content replaces what the call showed so far."""
    failed = result.is_error or bool(result.interrupted)
    made = diff_contents(result.details or ())
    content: list[Update] = [] if failed else made or list(diffs)
    if result.output:
        shown = fence(result.output) if kind in FENCED_KINDS and not failed else result.output
        content.append(text_content(shown))
    return status_update(result.tool_call_id, "failed" if failed else "completed", content=content)


def live_output(call_id: str, output: str) -> Update:
    """A running call's output so far (a ``tool_update``): shown as its content until the result."""
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "content": [text_content(fence(output))],
    }


def bang_call(call_id: str, command: str) -> Update:
    """A ``!command`` line (R14) shown as a shell call the user made."""
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": f"!{title_of(command)}",
        "kind": "execute",
        "status": "in_progress",
        "rawInput": {"command": command},
    }


def bang_result(call_id: str, output: str, exit_code: int | None, interrupted: bool) -> Update:
    failed = interrupted or exit_code != 0
    content = [text_content(fence(output))] if output else []
    return status_update(call_id, "failed" if failed else "completed", content=content)


def permission_request(
    session_id: str,
    call_id: str,
    name: str,
    args: Mapping[str, Any],
    tool: Tool | None,
    reason: str = "",
    remember: str | None = None,
) -> Update:
    """The params of ``session/request_permission`` for one call; ``reason``, why ink asks (a call that
    leaves the sandbox says so, and why it wants to), follows what the call would change. "Always" is
    offered only with the rule it would store (``remember``), named in the option as the terminal shows
    it: where nothing can be remembered (a command no rule may allow) an "Always allow" that allowed once
    would promise what it does not do."""
    call = call_fields(call_id, name, args, tool) | {"status": "pending"}
    if reason:
        call["content"] = [*call.get("content", []), text_content(reason)]
    options = [dict(ALLOW_ONCE)]
    if remember is not None:
        rule = remember if len(remember) <= RULE_CHARS else remember[: RULE_CHARS - 1] + "…"
        options.append({"optionId": "always", "name": f"Always allow: {rule}", "kind": "allow_always"})
    return {"sessionId": session_id, "toolCall": call, "options": [*options, dict(DENY_ONCE)]}


def replay(messages: Sequence[Message], tools: FindTool) -> Iterator[Update]:
    """The history as the updates that would have shown it (``session/load``). The interruption marker
    (R23) is ink's note to the model, not a message of the conversation: it is left out."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResult)}
    for message in messages:
        if isinstance(message, UserMessage):
            if message.kind == "prompt":
                yield user_chunk(message.text)
            elif message.kind == "summary":
                yield thought_chunk(SUMMARY_INTRO + message.text)
        elif isinstance(message, AssistantMessage):
            yield from _replay_reply(message, results, tools)


def _replay_reply(
    message: AssistantMessage, results: Mapping[str, ToolResult], tools: FindTool
) -> Iterator[Update]:
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            yield message_chunk(block.text)
        elif isinstance(block, ThinkingBlock) and block.thinking:
            yield thought_chunk(block.thinking)
        elif isinstance(block, ToolCall):
            # what a call proposed is gone by now (the files moved on): its result's details show the change
            tool = tools(block.name)
            call = call_fields(block.id, block.name, block.arguments, tool, preview=False)
            yield {"sessionUpdate": "tool_call", **call, "status": "in_progress"}
            result = results.get(block.id)
            if result is not None:
                yield tool_result(result, kind_of(tool))


# -- pieces ------------------------------------------------------------------------------------------


def text_content(text: str) -> Update:
    """Text as a tool call's content item."""
    return {"type": "content", "content": _text(text)}


def _text(text: str) -> Update:
    return {"type": "text", "text": text}


def title_of(text: str) -> str:
    """A call's title: the first line, at most ``TITLE_CHARS``."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    more = line != text.strip()
    if len(line) > TITLE_CHARS:
        line, more = line[: TITLE_CHARS - 1], True
    return line + "…" if more else line


def fence(text: str) -> str:
    """``text`` shown verbatim (a command's output), in a code fence longer than any run of backticks."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{marks}"


def plan_update(plan: PlanUpdate) -> Update:
    """The plan as ACP's ``plan`` update: every entry, whole (the client replaces the plan it shows).
    ink's steps have no priority of their own: each is ``medium``."""
    entries = [{"content": e.content, "priority": "medium", "status": e.status} for e in plan.entries]
    return {"sessionUpdate": "plan", "entries": entries}
