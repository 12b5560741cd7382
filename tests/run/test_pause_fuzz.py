"""Pause at every moment of the abort fuzz's scripted runs (R44), over HTTP with real tools.

The runs of ``test_abort_fuzz`` (thinking, streamed text, a concurrent group of reads, a bash command
that leaves a background child, more model calls) are run once to their end, then once per event index
k with a pause landing synchronously when the k-th event is emitted:

- resumed once the run holds: the model gets byte-identical request bodies and the history is the same
  as without the pause (nothing cancelled, nothing synthesised);
- interrupted once the run holds: the run ends ``aborted`` with a history both strict checkers accept,
  one ``tool_start`` and one ``tool_end`` per call, the calls that waited at the gate answered "not
  started" (and named so in the receipt), the pause lifted before ``run_end``, no process left; held
  before a model call, the history is exactly that of an abort landing there without a pause.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from ink.agent.events import RunHeld, RunPaused, RunResumed, ToolEnd, ToolStart
from ink.agent.scheduler import NOT_STARTED
from ink.ai.messages import AssistantMessage, ToolResult
from ink.run.events import RunEvent
from ink.tools import BashTool, ProcessRegistry, ReadTool, Workspace
from ink.wiring import RegistryReaper
from tests.events import events_of
from tests.fakeserver import FakeModelServer, Reply
from tests.run.harness import Harness
from tests.run.test_abort_fuzz import SCRIPTS, check_history, make_files, running_pids
from tests.run.test_pause import comparable

PAUSE_EVENTS = (RunPaused, RunHeld, RunResumed)
CASES = [("openai", "tools"), ("anthropic", "bash")]


class Outcome:
    def __init__(self, h: Harness, seen: list[RunEvent], bodies: list[bytes]) -> None:
        self.h, self.seen, self.bodies = h, seen, bodies
        self.history = [comparable(m) for m in h.history]
        self.end = h.run_ends()[-1]
        self.held = events_of(seen, RunHeld)

    def before_hold(self) -> int:
        """How many of the run's own events (no pause event) came before it first held."""
        first = self.seen.index(self.held[0])
        return sum(1 for e in self.seen[:first] if not isinstance(e, PAUSE_EVENTS))


async def run_once(
    server: FakeModelServer,
    protocol: str,
    folder: Path,
    script: list[Reply],
    *,
    pause_at: int | None = None,
    abort_at: int | None = None,
    then: Callable[[Harness], object] | None = None,
) -> Outcome:
    """One run; ``pause_at``/``abort_at``: the index of the run's own event where the pause or the abort
    lands (synchronously); ``then``: what is done once the paused run holds (resume or abort), from the
    event loop, so the run really waits at the gate first."""
    make_files(folder)
    registry = ProcessRegistry()
    workspace = Workspace(folder)
    tools = [ReadTool(workspace), BashTool(workspace, registry, kill_delay=0.2)]
    h = Harness(server, protocol=protocol, tools=tools, reaper=RegistryReaper(registry, 0.2))
    seen: list[RunEvent] = []
    own = 0
    first_request = len(server.requests)

    def listener(event: RunEvent) -> None:
        nonlocal own
        seen.append(event)
        if isinstance(event, RunHeld) and then is not None:
            asyncio.get_running_loop().call_soon(then, h)
        if isinstance(event, PAUSE_EVENTS):
            return
        own += 1
        if own == pause_at:
            h.controller.pause()
        if own == abort_at:
            h.controller.abort()

    h.controller.subscribe(listener)
    server.script(*script)
    h.controller.submit("work through the files")
    await h.settled(timeout=20)
    await h.aclose()
    if h.run_ends()[-1].stop_reason != "aborted":
        await registry.terminate_all(0.2)  # background jobs of a completed run: not the test's subject
    server.clear_script()
    return Outcome(h, seen, [r.raw_body for r in server.requests[first_request:]])


def resume(h: Harness) -> None:
    h.controller.resume()


def interrupt(h: Harness) -> None:
    h.controller.interrupt()


@pytest.mark.parametrize(("protocol", "script_name"), CASES)
async def test_R44_pause_then_resume_at_every_event_sends_the_same_requests(
    tmp_path: Path, protocol: str, script_name: str
) -> None:
    script = SCRIPTS[script_name]
    with FakeModelServer() as server:
        plain = await run_once(server, protocol, tmp_path / "plain", script())
        assert plain.end.stop_reason == "completed"
        moments = sum(1 for e in plain.seen if not isinstance(e, PAUSE_EVENTS))
        assert moments >= 50
        held_at: Counter[str] = Counter()
        for k in range(1, moments + 1):
            paused = await run_once(server, protocol, tmp_path / f"k{k}", script(), pause_at=k, then=resume)
            where = f"pause at event {k} ({plain.seen[k - 1].type})"
            assert paused.end.stop_reason == "completed", where
            assert paused.bodies == plain.bodies, f"{where}: the requests differ"
            assert paused.history == plain.history, f"{where}: the history differs"
            assert len(events_of(paused.seen, RunPaused)) == len(events_of(paused.seen, RunResumed)) == 1
            held_at.update(h.at for h in paused.held)
        assert held_at["model_call"] >= 2 and held_at["tool_call"] >= 2, held_at


@pytest.mark.parametrize(("protocol", "script_name"), CASES)
async def test_R44_an_interrupt_during_a_pause_at_every_event_leaves_a_valid_history(
    tmp_path: Path, protocol: str, script_name: str
) -> None:
    script = SCRIPTS[script_name]
    with FakeModelServer() as server:
        plain = await run_once(server, protocol, tmp_path / "plain", script())
        moments = sum(1 for e in plain.seen if not isinstance(e, PAUSE_EVENTS))
        compared = 0
        for k in range(1, moments + 1):
            folder = tmp_path / f"k{k}"
            paused = await run_once(server, protocol, folder, script(), pause_at=k, then=interrupt)
            where = f"pause at event {k} ({plain.seen[k - 1].type}), then interrupt"
            check_valid(protocol, paused, where)
            if paused.end.stop_reason == "completed":  # ended before it reached a safe point
                assert not paused.held and paused.history == plain.history, where
                continue
            assert paused.end.stop_reason == "aborted", f"{where}: {paused.end}"
            assert running_pids(folder) == [], f"{where}: processes left running"
            check_held_calls_not_started(paused, where)
            if paused.held[0].at == "model_call":  # nothing was in flight: the same as an abort there
                j = paused.before_hold()
                aborted = await run_once(server, protocol, tmp_path / f"a{k}", script(), abort_at=j)
                assert aborted.history == paused.history, f"{where}: differs from an abort at event {j}"
                compared += 1
        assert compared >= 2


def check_valid(protocol: str, outcome: Outcome, where: str) -> None:
    messages = list(outcome.h.history)
    problem = check_history(protocol, messages)
    assert problem is None, f"{where}: strict check failed: {problem}"
    starts = Counter(e.tool_call_id for e in events_of(outcome.seen, ToolStart))
    ends = Counter(e.tool_call_id for e in events_of(outcome.seen, ToolEnd))
    calls = {c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    assert set(starts) == set(ends) == calls, f"{where}: starts {starts}, ends {ends}, calls {calls}"
    assert all(n == 1 for n in (*starts.values(), *ends.values())), f"{where}: a call started twice"
    paused = events_of(outcome.seen, RunPaused)
    resumed = events_of(outcome.seen, RunResumed)
    assert len(paused) == len(resumed) == 1, f"{where}: {paused} {resumed}"
    if outcome.end.stop_reason == "aborted":
        assert resumed[0].reason == "abort", where
        assert outcome.seen.index(resumed[0]) < outcome.seen.index(outcome.end), where


def check_held_calls_not_started(outcome: Outcome, where: str) -> None:
    """The calls answered "not started" never got to run (no ``tool_running``), and the receipt names
    exactly them (R34); those that had started finished or were interrupted as in any abort."""
    results = {m.tool_call_id: m for m in outcome.h.history if isinstance(m, ToolResult)}
    not_started = {call_id for call_id, result in results.items() if result.output == NOT_STARTED}
    running = {e.tool_call_id for e in outcome.seen if e.type == "tool_running"}
    assert not (not_started & running), f"{where}: {not_started & running} ran yet were 'not started'"
    receipt = outcome.end.receipt
    assert receipt is not None, where
    assert set(receipt.not_started) == not_started, f"{where}: receipt {receipt.not_started}"
