"""The renderer: run events in, printed blocks and the live area's state out (issue 4).

``EventView.on_event`` is called for every controller event, on the event loop, and must stay cheap: it
appends to buffers and never touches the terminal. The app takes the finished blocks with
``take_printed`` at most ~20 times a second and prints them above the input; the live area (the
unfinished text, running tools) and the panels are drawn from the view's state. Nothing here decides
anything about runs: the queue shown is the controller's (``queue_update``), the restored input is the
controller's (``run_end``, ``input_restored``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from ink.agent.events import (
    InputTaken,
    MessageEnd,
    MessageStart,
    Notice,
    RetryEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCancelling,
    ToolEnd,
    ToolRunning,
    ToolSettled,
    ToolStart,
    ToolUpdate,
)
from ink.agent.tool import CallDescription, Tool, describe_call
from ink.ai.messages import ToolResult
from ink.frontends.tui.blocks import Block, Tone, fold, plural, sanitize
from ink.frontends.tui.folds import Folds, header
from ink.frontends.tui.mentions import shown_prompt
from ink.frontends.tui.splitter import BlockSplitter
from ink.frontends.tui.toolview import EXPAND_KEY, folded_output, result_blocks, summary
from ink.run.events import (
    BangEnd,
    BangStart,
    InputRestored,
    PermissionRequest,
    PermissionResolved,
    QueuedInput,
    QueueUpdate,
    RunEnd,
    RunEvent,
    RunStart,
)
from ink.vocabulary import ALLOWING, Decision

THINKING_LINES = 8  # reasoning printed before it is folded
BANG_LINES = 12
RETRY_HINT = "to retry, type `continue` and press Enter: the conversation so far is kept"
LABELS = {"steer": "steer: ", "follow_up": "follow-up: "}  # inputs taken after the run's first
DECISION_NOTES: dict[Decision, str] = {
    "allow": "allowed once",
    "always": "always allowed",
    "deny": "denied",
    "timeout": "not answered in time: denied",
    "cancelled": "cancelled by the interrupt",
}


@dataclass
class ActiveTool:
    call_id: str
    summary: str
    status: Literal["queued", "running", "cancelling"]
    since: float
    grace: float = 0.0
    output: str = ""  # the tail of what it printed so far (tool_update), shown under its line


def _no_tools(_name: str) -> Tool | None:
    return None


class EventView:
    """``tools`` finds a tool by the name the model calls it: each call is shown as it describes itself."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, tools: Callable[[str], Tool | None] = _no_tools
    ) -> None:
        self._clock = clock
        self._tools = tools
        self._printed: list[Block] = []
        self.text = BlockSplitter()
        self.thinking: list[str] = []
        self.tools: dict[str, ActiveTool] = {}
        self.questions: list[PermissionRequest] = []
        self._asked: dict[str, CallDescription] = {}  # request id -> the call as it was described
        self.queue: tuple[QueuedInput, ...] = ()
        self.activity = ""
        self.activity_since = clock()
        self.folds = Folds()
        self._summaries: dict[str, str] = {}
        self._shown: set[str] = set()  # results shown at tool_settled (R6: never twice)
        self._inputs_in_run = 0
        self.changes = 0  # bumped on every change: the app redraws when it moved

    # -- the app's side ---------------------------------------------------------------------------

    def take_printed(self) -> list[Block]:
        printed, self._printed = self._printed, []
        return printed

    def print(self, *blocks: Block) -> None:
        """Print blocks that are not events (slash command output, notes of the app)."""
        self._printed.extend(blocks)
        self.changes += 1

    def expand_next(self) -> bool:
        """Print the whole of a folded output again, under the name of its call: the newest first, then
        one further back on each call (the expand key). False when nothing was folded."""
        fold = self.folds.next_cut()
        if fold is None:
            return False
        self.print(header(fold), fold.block)
        return True

    def thinking_tail(self, max_lines: int) -> list[str]:
        if not self.thinking:
            return []
        if len(self.thinking) > 64:
            self.thinking = ["".join(self.thinking)]
        return "".join(self.thinking)[-4000:].split("\n")[-max_lines:]

    # -- events -----------------------------------------------------------------------------------

    def on_event(self, event: RunEvent) -> None:
        self.changes += 1
        if event.source is not None and not isinstance(event, PermissionRequest | PermissionResolved):
            self._on_sub_agent(event)  # R7: a sub-agent's work shows as tool lines only; its questions ask
            return
        match event:
            case TextDeltaEvent(text=text):
                if self.thinking:
                    self._end_thinking()
                self._doing("writing")
                self._printed.extend(Block("markdown", b) for b in self.text.feed(text))
            case ThinkingDeltaEvent(text=text):
                self.thinking.append(text)
                self._doing("thinking")
            case MessageStart():
                self._doing("waiting for the model")
            case MessageEnd(message=message):
                self._end_message()
                for call in message.tool_calls:
                    self._summaries[call.id] = self._summary(call.name, call.arguments)
                    self.tools[call.id] = ActiveTool(
                        call.id, self._summaries[call.id], "queued", self._clock()
                    )
            case _:
                if not self._on_tool_event(event):
                    self._on_run_event(event)

    def _on_tool_event(self, event: RunEvent) -> bool:
        match event:
            case ToolStart(tool_call_id=call_id, name=name, args=args):
                summary = self._summaries.setdefault(call_id, self._summary(name, args))
                self.tools[call_id] = ActiveTool(call_id, summary, "running", self._clock())
                self._doing(f"running {name}")
            case ToolRunning(tool_call_id=call_id):
                if call_id in self.tools:
                    self.tools[call_id] = replace(self.tools[call_id], status="running", since=self._clock())
            case ToolUpdate(tool_call_id=call_id, output=output):
                if call_id in self.tools:
                    self.tools[call_id].output = output  # the whole bounded tail: it replaces the last
            case ToolCancelling(tool_call_id=call_id, grace_seconds=grace):
                tool = self.tools.get(call_id)
                if tool is not None:
                    self.tools[call_id] = replace(tool, status="cancelling", since=self._clock(), grace=grace)
            case ToolSettled(tool_call_id=call_id, result=result):
                self._shown.add(call_id)
                self._tool_done(call_id, result)
            case ToolEnd(tool_call_id=call_id, result=result):
                if call_id in self._shown:
                    self._shown.discard(call_id)
                else:
                    self._tool_done(call_id, result)
            case PermissionRequest(request_id=request_id, name=name, args=args):
                self._asked[request_id] = describe_call(self._tools(name), name, args)  # read the files now
                self.questions.append(event)
                self._doing("waiting for your answer")
            case PermissionResolved(request_id=request_id, decision=decision):
                self._resolved(request_id, decision)
            case _:
                return False
        return True

    def _on_run_event(self, event: RunEvent) -> None:
        match event:
            case RunStart():
                self._inputs_in_run = 0
                self._doing("waiting for the model")
            case InputTaken(mode=mode, inputs=inputs):
                for taken in inputs:
                    label = "" if self._inputs_in_run == 0 else LABELS[mode]
                    self._printed.append(Block("user", label + sanitize(shown_prompt(taken.text))))
                    self._inputs_in_run += 1
            case QueueUpdate(queue=queue):
                self.queue = queue
            case RunEnd():
                self._run_end(event)
            case InputRestored(restored_input=restored):
                self._printed.append(Block("info", _restored_note(len(restored)), "dim"))
            case BangStart(command=command):
                self._printed.append(Block("bang", f"$ {sanitize(command)}"))
                self._doing(f"running !{command.split(' ', 1)[0]}")
            case BangEnd():
                self._bang_end(event)
            case Notice(text=text, level=level):
                self._printed.append(Block("warning" if level == "warning" else "info", sanitize(text)))
            case RetryEvent(attempt=attempt, delay_seconds=delay, error=error):
                note = f"retrying in {delay:.1f}s (attempt {attempt + 1}) after: {sanitize(error)}"
                self._printed.append(Block("info", note))
                self._doing(f"retrying in {delay:.1f}s")

    def described(self, question: PermissionRequest) -> CallDescription:
        """The call a question is about, as its tool described it when the question came."""
        return self._asked.get(question.request_id) or CallDescription(question.name)

    # -- pieces -----------------------------------------------------------------------------------

    def _summary(self, name: str, args: Mapping[str, Any]) -> str:
        return summary(describe_call(self._tools(name), name, args))

    def _resolved(self, request_id: str, decision: Decision) -> None:
        """The question is gone: the status says what happens now, and an allowed call's time starts
        now (the time the question was open is not the tool's)."""
        asked = next((q for q in self.questions if q.request_id == request_id), None)
        self.questions = [q for q in self.questions if q.request_id != request_id]
        if asked is None:
            return
        shown = summary(self.described(asked))
        self._asked.pop(request_id, None)
        allowed = decision in ALLOWING
        tone: Tone = "dim" if allowed else "interrupted"
        self._printed.append(Block("info", f"{shown}: {DECISION_NOTES[decision]}", tone))
        tool = self.tools.get(asked.tool_call_id)
        if allowed and tool is not None:
            self.tools[tool.call_id] = replace(tool, status="running", since=self._clock())
        if self.questions:
            return
        running = [t for t in self.tools.values() if t.status == "running"]
        after = "running tools" if running else "waiting for the model"
        self._doing(f"running {asked.name}" if allowed else after)

    def _doing(self, activity: str) -> None:
        if activity != self.activity:
            self.activity, self.activity_since = activity, self._clock()

    def _end_thinking(self) -> None:
        text = sanitize("".join(self.thinking)).strip()
        self.thinking = []
        if not text:
            return
        shown, hidden = fold(text, THINKING_LINES)
        if hidden:
            shown += f"\n… {plural(hidden, 'more line')} of thinking ({EXPAND_KEY} to expand)"
            self.folds.add("thinking", Block("thinking", text), cut=True)
        self._printed.append(Block("thinking", shown))

    def _end_message(self) -> None:
        self._end_thinking()
        self._printed.extend(Block("markdown", b) for b in self.text.finish())

    def _tool_done(self, call_id: str, result: ToolResult) -> None:
        self.tools.pop(call_id, None)
        summary = self._summaries.pop(call_id, result.name)
        blocks, whole = result_blocks(summary, result)
        self._printed.extend(blocks)
        output = sanitize(result.output).rstrip("\n")
        if whole is not None or output.strip():
            self.folds.add(summary, whole or Block("output", output, "dim"), cut=whole is not None)
        if not self.tools:
            self._doing("waiting for the model")

    def _bang_end(self, event: BangEnd) -> None:
        output = sanitize(event.output).rstrip("\n")
        if output:
            blocks, whole = folded_output(output, BANG_LINES, "")
            self._printed.extend(blocks)
            self.folds.add(f"!{sanitize(event.command)}", whole or blocks[0], cut=whole is not None)
        if event.interrupted:
            self._printed.append(Block("interrupted", "⏹ interrupted"))
        elif event.exit_code not in (0, None):
            self._printed.append(Block("error", f"exit status {event.exit_code}"))
        self._doing("")

    def _run_end(self, event: RunEnd) -> None:
        self._end_message()
        for call_id in list(self.tools):  # calls the run ended without a result (never shown twice)
            self.tools.pop(call_id)
        self._summaries.clear()
        self._shown.clear()
        self.questions = []
        self._asked.clear()
        self._doing("")
        if event.stop_reason == "aborted":
            self._printed.extend(_abort_blocks(event))
        elif event.stop_reason == "error":
            problem = sanitize(event.error or "unknown error")
            self._printed.append(Block("error", f"✗ the run failed: {problem}"))
            if event.restored_input:
                self._printed.append(Block("info", _restored_note(len(event.restored_input)), "dim"))
            self._printed.append(Block("info", RETRY_HINT, "dim"))
        elif event.truncated:
            self._printed.append(
                Block("warning", "the reply was cut off at the output token limit (max_tokens)")
            )
        elif event.stop_reason == "max_iterations":
            self._printed.append(
                Block("warning", "stopped at the limit of tool batches (max_iterations); `continue` goes on")
            )

    def _on_sub_agent(self, event: RunEvent) -> None:
        if isinstance(event, ToolEnd) and event.source is not None:
            summary = sanitize(event.result.name)
            mark = "✗" if event.result.is_error else "✓"
            self._printed.append(
                Block("info", f"{event.source.agent} {event.source.id[-6:]} › {mark} {summary}", "dim")
            )


def _abort_blocks(event: RunEnd) -> list[Block]:
    """The "interrupted" line and what the abort did (R34): never worded as an error (R18)."""
    receipt = event.receipt
    redirect = receipt is not None and receipt.reason == "redirect"
    details: list[str] = []
    if receipt is not None:
        if receipt.not_started:
            details.append(f"{plural(len(receipt.not_started), 'tool call')} not started")
        if receipt.interrupted:
            details.append(f"{plural(len(receipt.interrupted), 'tool call')} stopped")
    if event.restored_input:
        details.append(_restored_note(len(event.restored_input)))
    head = "⏹ interrupted" + (": redirecting" if redirect else "")
    blocks = [Block("interrupted", head + (f" · {' · '.join(details)}" if details else ""))]
    if receipt is not None:
        if receipt.abandoned:
            blocks.append(
                Block(
                    "warning",
                    f"{plural(len(receipt.abandoned), 'tool call')} did not stop within the grace period "
                    "and may still be running",
                )
            )
        for survivor in receipt.survivors:
            blocks.append(
                Block("warning", f"process {survivor.pid} ({sanitize(survivor.command)}) is still running")
            )
        if receipt.changed_files:  # issue 14: what a rewind to the run's input would restore
            files = receipt.changed_files
            shown = ", ".join(sanitize(f) for f in files[:5]) + (", …" if len(files) > 5 else "")
            blocks.append(
                Block("info", f"the run changed {plural(len(files), 'file')}: {shown} · esc esc rewinds")
            )
    return blocks


def _restored_note(count: int) -> str:
    return f"{plural(count, 'queued input')} put back in the editor"
