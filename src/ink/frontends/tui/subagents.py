"""Running sub-agents as the TUI shows them (R7): one nested line under the ``task`` call each
works for, with its current activity; the picked one opens to show its finished tool calls.

Fed the events that carry a ``source``, cheaply (they arrive on the event loop). Numbers (``[1]``,
``[2]``) are given in order of appearance within a run, so ``/agents 2`` and the line the user reads
name the same sub-agent. Run control itself is not here: steering and stopping go to ``SubAgents`` of
the app (the same calls RPC's ``steer``/``abort`` with a ``source`` make).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from ink.agent.events import (
    MessageEnd,
    MessageStart,
    RetryEvent,
    RunHeld,
    RunPaused,
    RunResumed,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCancelling,
    ToolEnd,
    ToolStart,
)
from ink.frontends.tui.blocks import Block, plural, sanitize
from ink.frontends.tui.wrapping import wrap_tail
from ink.run.events import PermissionRequest, PermissionResolved, RunEvent

LOG_LINES = 200  # finished tool calls kept per sub-agent (the fold shows them when it ends)
TEXT_TAIL = 4000  # characters of its reply kept for the picked line
TEXT_ROWS = 3  # rows of that reply shown under the picked line


class SubAgentLine(msgspec.Struct):
    number: int
    agent_id: str  # the id of the task call it works for (its events' ``source.id``)
    agent: str  # its type (explore, general, ...)
    since: float  # when its current activity began
    activity: str = "starting"
    tools: int = 0  # tool calls finished
    tokens: int = 0  # tokens its model calls used
    stopping: bool = False
    paused: bool = False  # paused on its own (/agents pause): held at its next safe point (R44)
    log: list[str] = msgspec.field(default_factory=list)  # "✓ read a.py", newest last
    text: str = ""  # the tail of the reply it is writing (shown while it is picked)
    calls: dict[str, str] = msgspec.field(default_factory=dict)  # its running calls: id -> summary

    def label(self) -> str:
        return f"[{self.number}] {self.agent}"


class SubAgentLines:
    def __init__(
        self, clock: Callable[[], float], summarize: Callable[[str, Mapping[str, Any]], str]
    ) -> None:
        """``summarize``: a call in one short line, as its tool describes it."""
        self._clock = clock
        self._summarize = summarize
        self.running: dict[str, SubAgentLine] = {}
        self.selected: str | None = None  # the picked one: its line is open, /agents acts on it
        self._numbers = 0

    def new_run(self) -> None:
        self.running.clear()
        self.selected = None
        self._numbers = 0

    def on_event(self, event: RunEvent) -> None:
        source = event.source
        if source is None:
            return
        line = self.running.get(source.id)
        if line is None:
            self._numbers += 1
            line = SubAgentLine(self._numbers, source.id, source.agent, self._clock())
            self.running[source.id] = line
        match event:
            case MessageStart():
                line.text = ""
                self._doing(line, "waiting for the model")
            case ThinkingDeltaEvent():
                self._doing(line, "thinking")
            case TextDeltaEvent(text=text):
                line.text = (line.text + text)[-TEXT_TAIL:]
                self._doing(line, "writing")
            case MessageEnd(usage=usage):
                line.tokens += usage.context_tokens
            case ToolStart(tool_call_id=call_id, name=name, args=args):
                line.calls[call_id] = self._summarize(name, args)
                self._doing(line, f"running {line.calls[call_id]}")
            case ToolCancelling():
                self._doing(line, "stopping its tools")
            case ToolEnd(tool_call_id=call_id, result=result):
                mark = "⏹" if result.interrupted else "✗" if result.is_error else "✓"
                line.log = [*line.log[-(LOG_LINES - 1) :], f"{mark} {line.calls.pop(call_id, result.name)}"]
                line.tools += 1
                self._doing(line, "waiting for the model" if not line.calls else self._running(line))
            case PermissionRequest():
                self._doing(line, "waiting for your answer")
            case PermissionResolved():
                self._doing(line, self._running(line) if line.calls else "waiting for the model")
            case RetryEvent(delay_seconds=delay):
                self._doing(line, f"retrying in {delay:.1f}s")
            case RunPaused():
                line.paused = True
            case RunHeld():
                self._doing(line, "paused")
            case RunResumed():
                line.paused = False
                self.go_on(line)

    def resumed(self) -> None:
        """The run's pause was lifted: its sub-agents held by it go on (their own pause aside)."""
        for line in self.running.values():
            if not line.paused:
                self.go_on(line)

    def go_on(self, line: SubAgentLine) -> None:
        if line.activity == "paused":
            self._doing(line, self._running(line) if line.calls else "waiting for the model")

    def finished(self, call_id: str) -> SubAgentLine | None:
        """The task call ``call_id`` ended: its sub-agent's line goes (None when it had none)."""
        line = self.running.pop(call_id, None)
        if line is not None and self.selected == call_id:
            self.selected = None
        return line

    def pick_next(self) -> SubAgentLine | None:
        """Open the next running sub-agent's line (after the last one: none)."""
        order = sorted(self.running.values(), key=lambda line: line.number)
        ids = [line.agent_id for line in order]
        at = ids.index(self.selected) + 1 if self.selected in ids else 0
        self.selected = ids[at] if at < len(ids) else None
        return self.running.get(self.selected) if self.selected else None

    def by_number(self, number: int) -> SubAgentLine | None:
        return next((line for line in self.running.values() if line.number == number), None)

    def _doing(self, line: SubAgentLine, activity: str) -> None:
        if line.stopping and not activity.startswith("stopping"):
            activity = "stopping"
        if activity != line.activity:
            line.activity, line.since = activity, self._clock()

    @staticmethod
    def _running(line: SubAgentLine) -> str:
        return f"running {next(reversed(line.calls.values()))}"


def summary_block(line: SubAgentLine) -> Block:
    """What stays in the scrollback of a finished sub-agent (its tool calls are kept in a fold)."""
    tokens = f" · {_count(line.tokens)} tokens" if line.tokens else ""
    return Block("info", f"{line.label()} {plural(line.tools, 'tool call')}{tokens}", "dim")


def sub_agent_rows(line: SubAgentLine, selected: bool, width: int, now: float, log_rows: int) -> list[str]:
    """The nested line of one sub-agent, and when it is picked, the last rows of the reply it is writing
    and its last ``log_rows`` tool calls."""
    mark = "▸" if selected else "└"
    seconds = max(0.0, now - line.since)
    tools = f" · {plural(line.tools, 'tool')}" if line.tools else ""
    pausing = " · pausing" if line.paused and line.activity != "paused" else ""
    text = f"  {mark} {line.label()} · {sanitize(line.activity)} {seconds:.0f}s{tools}{pausing}"
    rows = [_cut(text, width)]
    if selected and log_rows > 0:  # the rows it has: its reply first (what it does now), then its calls
        writing = [sanitize(row) for row in line.text.rstrip("\n").split("\n")[-TEXT_ROWS:] if line.text]
        shown = wrap_tail(writing, max(1, width - 6), min(TEXT_ROWS, log_rows)) if writing else []
        calls = log_rows - len(shown)
        rows += [_cut(f"      {sanitize(entry)}", width) for entry in (line.log[-calls:] if calls else [])]
        rows += [f"      {row}" for row in shown]
    return rows


def _cut(text: str, width: int) -> str:
    return text if len(text) < width else text[: max(1, width - 2)] + "…"


def _count(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
