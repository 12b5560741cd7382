"""The renderer: run events in, printed blocks and the live area's state out.

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
from typing import Any, Literal

import msgspec
from msgspec.structs import replace

from ink.agent.tool import CallDescription, Tool, call_title, describe_call
from ink.ai.messages import ToolResult
from ink.frontends.reducer import EventReducer
from ink.frontends.tui import budget, jobs, pausing
from ink.frontends.tui.blocks import Block, Tone, fold, plural, sanitize
from ink.frontends.tui.folds import Folds, header
from ink.frontends.tui.mentions import shown_prompt
from ink.frontends.tui.splitter import BlockSplitter
from ink.frontends.tui.subagents import SubAgentLines, summary_block
from ink.frontends.tui.toolview import EXPAND_KEY, folded_output, result_blocks, summary, summary_of
from ink.run import events as ev
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


class ActiveTool(msgspec.Struct):
    call_id: str
    summary: str
    status: Literal["queued", "running", "held", "cancelling"]
    since: float
    grace: float = 0.0
    output: str = ""  # the tail of what it printed so far (tool_update), shown under its line
    ran: bool = False  # known to run: it got its slot (tool_running) or printed something


def _no_tools(_name: str) -> Tool | None:
    return None


class EventView(EventReducer):
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
        self.questions: list[ev.PermissionRequest] = []
        self._asked: dict[str, CallDescription] = {}  # request id -> the call as it was described
        self.queue: tuple[ev.QueuedInput, ...] = ()
        self.activity = ""
        self.activity_since = clock()
        self.folds = Folds()
        self.sub_agents = SubAgentLines(clock, self._summary)
        self._summaries: dict[str, str] = {}
        self._inputs_in_run = 0
        self._held: list[Block] | None = None  # notes held back while a rewind runs
        self.typed: dict[str, str] = {}  # input id -> what the user typed, when other than what was sent
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

    # -- events (EventReducer: one method per event type) -----------------------------------------

    def on_event(self, event: ev.RunEvent) -> None:
        self.changes += 1
        super().on_event(event)

    def text_delta(self, event: ev.TextDeltaEvent) -> None:
        if self.thinking:
            self._end_thinking()
        self._doing("writing")
        self._printed.extend(Block("markdown", b) for b in self.text.feed(event.text))

    def thinking_delta(self, event: ev.ThinkingDeltaEvent) -> None:
        self.thinking.append(event.text)
        self._doing("thinking")

    def message_start(self, event: ev.MessageStart) -> None:
        self._doing("waiting for the model")

    def message_end(self, event: ev.MessageEnd) -> None:
        self._end_message()
        for call in event.message.tool_calls:
            self._summaries[call.id] = self._summary(call.name, call.arguments)
            self.tools[call.id] = ActiveTool(call.id, self._summaries[call.id], "queued", self._clock())

    def tool_start(self, event: ev.ToolStart) -> None:
        call_id = event.tool_call_id
        summary = self._summaries.setdefault(call_id, self._summary(event.name, event.args))
        self.tools[call_id] = ActiveTool(call_id, summary, "running", self._clock())
        self._doing(f"running {event.name}")

    def tool_running(self, event: ev.ToolRunning) -> None:
        call_id = event.tool_call_id
        if call_id in self.tools:
            tool = self.tools[call_id]
            self.tools[call_id] = replace(tool, status="running", since=self._clock(), ran=True)

    def tool_update(self, event: ev.ToolUpdate) -> None:
        if event.tool_call_id in self.tools:
            tool = self.tools[event.tool_call_id]
            tool.output, tool.ran = event.output, True  # the whole bounded tail: replaces the last

    def tool_cancelling(self, event: ev.ToolCancelling) -> None:
        tool = self.tools.get(event.tool_call_id)
        if tool is not None:
            self.tools[tool.call_id] = replace(
                tool, status="cancelling", since=self._clock(), grace=event.grace_seconds
            )

    def permission_request(self, event: ev.PermissionRequest) -> None:
        described = describe_call(self._tools(event.name), event.name, event.args)  # read the files now
        self._asked[event.request_id] = described
        self.questions.append(event)
        if event.source is not None:  # a sub-agent's question: its line waits too (the title names it)
            self.sub_agents.on_event(event)
        self._doing("waiting for your answer")

    def permission_resolved(self, event: ev.PermissionResolved) -> None:
        if event.source is not None:
            self.sub_agents.on_event(event)
        self._resolved(event.request_id, event.decision)

    def run_start(self, event: ev.RunStart) -> None:
        self._inputs_in_run = 0
        self.sub_agents.new_run()
        self._doing("waiting for the model")

    def input_taken(self, event: ev.InputTaken) -> None:
        for taken in event.inputs:
            label = "" if self._inputs_in_run == 0 else LABELS[event.mode]
            typed = self.typed.get(taken.input_id)
            self._printed.append(Block("user", label + sanitize(shown_prompt(taken.text, typed))))
            self._inputs_in_run += 1

    def queue_update(self, event: ev.QueueUpdate) -> None:
        self.queue = tuple(replace(q, text=self.typed.get(q.input_id, q.text)) for q in event.queue)

    def input_restored(self, event: ev.InputRestored) -> None:
        # Queued input, or input a conversation rewind took back after it was sent: "input", not "queued".
        note = Block("info", _restored_note(len(event.restored_input), "input"), "dim")
        if self._held is not None:  # a rewind says what it did first, then what came back
            self._held.append(note)
        else:
            self._printed.append(note)

    def hold_notes(self, hold: bool) -> None:
        """While a rewind runs, the notes of inputs it puts back wait until its own line is printed."""
        held, self._held = self._held, [] if hold else None
        if not hold and held:
            self.print(*held)

    def bang_start(self, event: ev.BangStart) -> None:
        self._printed.append(Block("bang", f"$ {sanitize(event.command)}"))
        self._doing(f"running !{event.command.split(' ', 1)[0]}")

    def elicitation_request(self, event: ev.ElicitationRequest) -> None:
        from ink.frontends.tui.mcp_question import question_text

        self._printed.append(Block("warning", question_text(event)))

    def elicitation_resolved(self, event: ev.ElicitationResolved) -> None:
        self._printed.append(Block("info", f"the MCP server's question: {event.action}", "dim"))

    def budget_warning(self, event: ev.BudgetWarning) -> None:
        self._printed.append(budget.warning_block(event))

    def run_paused(self, event: ev.RunPaused) -> None:
        self._printed.append(pausing.paused_block(event))

    def run_held(self, event: ev.RunHeld) -> None:
        """R44: the run waits at a safe point. Calls that did not start wait there with it: "held",
        never "running" (a pause during a reply holds before its first call)."""
        if event.source is not None:
            return
        waiting = [t for t in self.tools.values() if t.status == "running" and not t.ran]
        for tool in waiting:
            self.tools[tool.call_id] = replace(tool, status="held")
        if event.at == "tool_call" and waiting:
            self._doing("held before a tool call")

    def run_resumed(self, event: ev.RunResumed) -> None:
        self.sub_agents.resumed()
        held = [t for t in self.tools.values() if t.status == "held"]
        for tool in held:  # their time starts now: the time held is not theirs
            self.tools[tool.call_id] = replace(tool, status="running", since=self._clock())
        if held:
            self._doing("running tools")
        block = pausing.resumed_block(event)
        if block is not None:
            self._printed.append(block)

    def job_start(self, event: ev.JobStart) -> None:
        self._printed.append(jobs.started_block(event))

    def job_end(self, event: ev.JobEnd) -> None:
        self._printed.append(jobs.ended_block(event))  # R43: the user hears of it at once

    def notice(self, event: ev.Notice) -> None:
        self._printed.append(Block("warning" if event.level == "warning" else "info", sanitize(event.text)))

    def retry(self, event: ev.RetryEvent) -> None:
        delay = event.delay_seconds
        note = f"retrying in {delay:.1f}s (attempt {event.attempt + 1}) after: {sanitize(event.error)}"
        self._printed.append(Block("info", note))
        self._doing(f"retrying in {delay:.1f}s")

    def held_by(self, question: ev.PermissionRequest) -> list[ActiveTool]:
        """The calls a question about no listed call holds (the project hooks' approval, asked in a
        call's checks): the main agent's calls not yet known to run. They wait for the answer: never
        "running"."""
        if question.source is not None or question.tool_call_id in self.tools:
            return []
        return [t for t in self.tools.values() if t.status == "running" and not t.ran]

    def asker(self, question: ev.PermissionRequest) -> str:
        """The sub-agent a question comes from, as its nested line names it (``[1] general``); "" for the
        main agent's."""
        if question.source is None:
            return ""
        line = self.sub_agents.running.get(question.source.id)
        return line.label() if line is not None else f"sub-agent {question.source.agent}"

    def described(self, question: ev.PermissionRequest) -> CallDescription:
        """The call a question is about, as its tool described it when the question came."""
        return self._asked.get(question.request_id) or CallDescription(question.name)

    # -- pieces -----------------------------------------------------------------------------------

    def _summary(self, name: str, args: Mapping[str, Any]) -> str:
        return summary_of(call_title(self._tools(name), name, args))  # no file read for a title

    def _resolved(self, request_id: str, decision: Decision) -> None:
        """The question is gone: the status says what happens now, and an allowed call's time starts
        now (the time the question was open is not the tool's)."""
        asked = next((q for q in self.questions if q.request_id == request_id), None)
        self.questions = [q for q in self.questions if q.request_id != request_id]
        if asked is None:
            return
        shown = summary(self.described(asked))
        asker = self.asker(asked)  # a sub-agent's call is named with its agent: it is not the main flow's
        shown = f"{asker}: {shown}" if asker else shown
        self._asked.pop(request_id, None)
        allowed = decision in ALLOWING
        tone: Tone = "dim" if allowed else "interrupted"
        self._printed.append(Block("info", f"{shown}: {DECISION_NOTES[decision]}", tone))
        tool = self.tools.get(asked.tool_call_id)
        if allowed and tool is not None:
            self.tools[tool.call_id] = replace(tool, status="running", since=self._clock())
        for held in self.held_by(asked):  # a question of no listed call (project hooks): theirs start now
            self.tools[held.call_id] = replace(held, since=self._clock())
        if self.questions:
            return
        if asked.source is not None:  # the main agent still waits for its task call
            self._doing("running tools")
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

    def tool_result(self, result: ToolResult) -> None:
        self.tools.pop(result.tool_call_id, None)
        summary = self._summaries.pop(result.tool_call_id, result.name)
        blocks, whole = result_blocks(summary, result)
        self._printed.extend(blocks)
        output = sanitize(result.output).rstrip("\n")
        if whole is not None or output.strip():
            self.folds.add(summary, whole or Block("output", output, "dim"), cut=whole is not None)
        agent = self.sub_agents.finished(result.tool_call_id)
        if agent is not None:  # a task call's sub-agent ended: a summary line, its tool calls in a fold
            self._printed.append(summary_block(agent))
            if agent.log:
                self.folds.add(
                    f"{agent.label()}: its tool calls", Block("output", "\n".join(agent.log)), cut=True
                )
        if not self.tools:
            self._doing("waiting for the model")

    def bang_end(self, event: ev.BangEnd) -> None:
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

    def run_end(self, event: ev.RunEnd) -> None:
        self._end_message()
        for call_id in list(self.tools):  # calls the run ended without a result (never shown twice)
            self.tools.pop(call_id)
        self._summaries.clear()
        self.questions = []
        self._asked.clear()
        self.sub_agents.new_run()
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
        elif event.stop_reason == "budget":
            self._printed.append(budget.stopped_block(event))

    def sub_agent(self, event: ev.RunEvent) -> None:
        """R7: a sub-agent's work shows on its nested line under its task call; its questions ask like
        any other (``permission_request``, which feeds its line too)."""
        self.sub_agents.on_event(event)


def _abort_blocks(event: ev.RunEnd) -> list[Block]:
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
    by_hook = receipt is not None and receipt.reason == "hook"
    head = "⏹ stopped by a hook" if by_hook else "⏹ interrupted" + (": redirecting" if redirect else "")
    if receipt is not None and receipt.message:  # a hook's stopReason, for the user (docs/hooks.md)
        details.insert(0, sanitize(receipt.message))
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
        if receipt.jobs_running:  # R43: an interrupt leaves them running, as it should
            blocks.append(jobs.kept_block(receipt.jobs_running))
        if receipt.changed_files:  # what a rewind to the run's input would restore
            files = receipt.changed_files
            shown = ", ".join(sanitize(f) for f in files[:5]) + (", …" if len(files) > 5 else "")
            blocks.append(
                Block("info", f"the run changed {plural(len(files), 'file')}: {shown} · esc esc rewinds")
            )
    return blocks


def _restored_note(count: int, what: str = "queued input") -> str:
    return f"{plural(count, what)} put back in the editor"
