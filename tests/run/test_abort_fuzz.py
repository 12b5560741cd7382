"""Abort at every moment of a scripted multi-tool run (R17-R19, R33, R35).

A run with thinking, streamed text, a concurrent group of reads, a bash command that leaves a
background child, and a second model call is first run to its end to count its events. Then it is run
again once per event index k, aborting synchronously when the k-th event is emitted: deterministic
moments, across both protocols and two scripts (well over 200 in all). After each abort:
- the history converts into a request both strict checkers accept (every call has one result);
- every call has exactly one ``tool_start`` and one ``tool_end``;
- no process the run started is alive;
- the run ended ``aborted`` (or ``completed`` when k is past the end), never ``error``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from ink.agent.events import ToolEnd, ToolStart
from ink.ai.anthropic_convert import anthropic_body
from ink.ai.messages import AssistantMessage, Message
from ink.ai.openai_convert import openai_body
from ink.ai.provider import ModelRequest
from ink.run.events import RunEvent
from ink.tools import BashTool, ProcessRegistry, ReadTool, Workspace
from ink.wiring import RegistryReaper
from tests.events import events_of
from tests.fakeserver import (
    FakeModelServer,
    Reply,
    check_anthropic_history,
    check_openai_history,
    text,
    thinking,
    tool_call,
)
from tests.run.harness import Harness

BASH = "echo $$ >> pids; (sleep 30 >/dev/null 2>&1 & echo $! >> pids); sleep 0.05; echo done"


def script_with_tools() -> list[Reply]:
    return [
        Reply(
            [
                thinking("plan the work"),
                *(text(f"word{i} ") for i in range(16)),
                tool_call("read", {"path": "a.txt"}, id="r1"),
                tool_call("read", {"path": "b.txt"}, id="r2"),
                tool_call("bash", {"command": BASH}, id="b1"),
            ]
        ),
        Reply([*(text(f"more{i} ") for i in range(8)), tool_call("read", {"path": "a.txt"}, id="r3")]),
        Reply([text("All "), text("done.")]),
    ]


def script_text_then_bash() -> list[Reply]:
    words = [text(f"word{i} ") for i in range(12)]
    return [
        Reply([*words, tool_call("bash", {"command": BASH}, id="b1")]),
        Reply(
            [
                *words,
                tool_call("bash", {"command": BASH}, id="b2"),
                tool_call("read", {"path": "b.txt"}, id="r1"),
            ]
        ),
        Reply([*words, text("Finished.")]),
    ]


SCRIPTS: dict[str, Callable[[], list[Reply]]] = {"tools": script_with_tools, "bash": script_text_then_bash}


def check_history(protocol: str, messages: list[Message]) -> str | None:
    request = ModelRequest("fake-model", "system", messages, max_tokens=100)
    if protocol == "openai":
        return check_openai_history(openai_body(request))
    return check_anthropic_history(anthropic_body(request))


def running_pids(folder: Path) -> list[int]:
    pids_file = folder / "pids"
    pids = [int(p) for p in pids_file.read_text().split()] if pids_file.exists() else []
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def make_files(folder: Path) -> None:
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    (folder / "b.txt").write_text("beta\n")


async def run_once(
    server: FakeModelServer, protocol: str, folder: Path, script: list[Reply], abort_at: int | None
) -> tuple[Harness, list[RunEvent]]:
    make_files(folder)
    registry = ProcessRegistry()
    workspace = Workspace(folder)
    tools = [ReadTool(workspace), BashTool(workspace, registry, kill_delay=0.2)]
    h = Harness(server, protocol=protocol, tools=tools, reaper=RegistryReaper(registry, 0.2))
    seen: list[RunEvent] = []

    def listener(event: RunEvent) -> None:
        seen.append(event)
        if abort_at is not None and len(seen) == abort_at:
            h.controller.abort()

    h.controller.subscribe(listener)
    server.script(*script)
    h.controller.submit("work through the files")
    await h.settled(timeout=20)
    await h.aclose()
    if h.run_ends()[-1].stop_reason != "aborted":
        await registry.terminate_all(0.2)  # background jobs of a completed run: not the test's subject
    return h, seen


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("script_name", sorted(SCRIPTS))
async def test_abort_at_every_event_leaves_a_valid_history_and_no_process(
    tmp_path: Path, protocol: str, script_name: str
) -> None:
    script = SCRIPTS[script_name]
    with FakeModelServer() as server:
        full, events = await run_once(server, protocol, tmp_path / "full", script(), None)
        assert full.run_ends()[-1].stop_reason == "completed"
        moments = len(events)
        assert moments >= 50
        outcomes: Counter[str] = Counter()
        for k in range(1, moments + 1):
            h, seen = await run_once(server, protocol, tmp_path / f"k{k}", script(), k)
            end = h.run_ends()[-1]
            outcomes[end.stop_reason] += 1
            where = f"abort at event {k} ({seen[k - 1].type})"
            assert end.stop_reason in ("aborted", "completed"), f"{where}: {end}"
            problem = check_history(protocol, list(h.history))
            assert problem is None, f"{where}: strict check failed: {problem}"
            starts = Counter(e.tool_call_id for e in events_of(seen, ToolStart))
            ends = Counter(e.tool_call_id for e in events_of(seen, ToolEnd))
            calls = {c.id for m in h.history if isinstance(m, AssistantMessage) for c in m.tool_calls}
            assert set(starts) == set(ends) == calls, f"{where}: starts {starts}, ends {ends}, calls {calls}"
            assert all(n == 1 for n in (*starts.values(), *ends.values())), f"{where}: a call started twice"
            if end.stop_reason == "aborted":  # a completed run may leave its background jobs running
                assert running_pids(tmp_path / f"k{k}") == [], f"{where}: processes left running"
            server.clear_script()  # an early abort leaves replies unused
        assert outcomes["aborted"] >= moments - 2, outcomes
