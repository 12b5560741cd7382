"""What ``--continue``, ``--resume`` and ``/resume`` print of the conversation they go on with: every
prompt and reply as the live view printed them, and each tool call in the one line it ends with there
(``✓ bash pytest -q · 1.2s``, ``✗ edit src/a.py · error``), outputs and diffs left out.

Bounded, so a long session starts as fast as a short one: the last ``MAX_TURNS`` turns (a turn is a
prompt and all that came after it), fewer when their text passes ``MAX_CHARS``, each prompt or reply cut
after ``TEXT_LINES`` lines; one line says how many earlier turns are not shown (the model still has them
all). Titles come from ``call_title``, which reads no file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ink.agent.tool import Tool, call_title
from ink.ai.messages import AssistantMessage, Message, ToolResult, UserMessage
from ink.frontends.tui.blocks import Block, fold, plural, sanitize
from ink.frontends.tui.mentions import shown_prompt
from ink.frontends.tui.splitter import BlockSplitter
from ink.frontends.tui.toolview import result_blocks, summary_of

MAX_TURNS = 20
MAX_CHARS = 24_000  # of text replayed, the last turn excepted (rich paints ~40k characters a second)
TEXT_LINES = 150  # of one prompt or reply
FindTool = Callable[[str], Tool | None]


def replay(messages: Sequence[Message], tools: FindTool) -> list[Block]:
    """The blocks that show ``messages`` (a resumed history), its earliest turns left out when long."""
    turns = _turns(messages)
    kept = _kept(turns)
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResult)}
    blocks: list[Block] = []
    if kept < len(turns):
        earlier = len(turns) - kept
        note = f"… {plural(earlier, 'earlier turn')} not shown (the model has the whole conversation)"
        blocks.append(Block("info", note, "dim"))
    for turn in turns[len(turns) - kept :]:
        for message in turn:
            blocks.extend(_message_blocks(message, results, tools))
    return blocks


def _turns(messages: Sequence[Message]) -> list[list[Message]]:
    """The history cut before each prompt; what came before the first prompt (a compaction's summary) is
    a turn of its own."""
    turns: list[list[Message]] = []
    for message in messages:
        if not turns or (isinstance(message, UserMessage) and message.kind == "prompt"):
            turns.append([])
        turns[-1].append(message)
    return turns


def _kept(turns: list[list[Message]]) -> int:
    """How many of the last turns are shown: at most ``MAX_TURNS``, within ``MAX_CHARS`` (at least one)."""
    kept, chars = 0, 0
    for turn in reversed(turns[-MAX_TURNS:]):
        chars += sum(len(_text(m)) for m in turn)
        if kept and chars > MAX_CHARS:
            break
        kept += 1
    return kept


def _text(message: Message) -> str:
    """The text a message shows, about (a bound on what a budget counts)."""
    if isinstance(message, ToolResult):
        return ""
    text = shown_prompt(message.text) if isinstance(message, UserMessage) else message.text
    return text[: TEXT_LINES * 200]


def _message_blocks(message: Message, results: dict[str, ToolResult], tools: FindTool) -> list[Block]:
    if isinstance(message, UserMessage):
        return _user_blocks(message)
    if isinstance(message, AssistantMessage):
        return _assistant_blocks(message, results, tools)
    return []  # a tool result shows on its call's line


def _user_blocks(message: UserMessage) -> list[Block]:
    if message.kind == "prompt":
        return [Block("user", _bounded(sanitize(shown_prompt(message.text))))]
    if message.kind == "interruption":
        return [Block("interrupted", "⏹ interrupted")]
    if message.kind == "summary":
        return [
            Block("info", "── earlier turns were compacted: the model goes on from their summary ──", "dim")
        ]
    return []  # context a hook or the loop added: never shown live either


def _assistant_blocks(
    message: AssistantMessage, results: dict[str, ToolResult], tools: FindTool
) -> list[Block]:
    splitter = BlockSplitter()
    text = _bounded(sanitize(message.text).strip("\n"))
    blocks = [Block("markdown", b) for b in [*splitter.feed(text), *splitter.finish()] if b.strip()]
    for call in message.tool_calls:
        shown = summary_of(call_title(tools(call.name), call.name, call.arguments))
        result = results.get(call.id)
        if result is None:  # the history ended on it (its run is still to finish)
            blocks.append(Block("tool", f"· {shown} · no result", "dim"))
        else:
            blocks.append(result_blocks(shown, result)[0][0])
    if message.stop_reason == "error":
        blocks.append(
            Block("error", f"✗ the run failed: {sanitize(message.error_message or 'unknown error')}")
        )
    return blocks


def _bounded(text: str) -> str:
    shown, hidden = fold(text, TEXT_LINES)
    return shown + (f"\n\n… {plural(hidden, 'more line')}" if hidden else "")
