"""Abort and steer latency through the real controller, loop, provider and fake server.

    .venv/bin/python bench/run.py run-control [-n RUNS]

Measured per run, medians over RUNS (default 30):
- abort while a reply streams: abort -> the model stream closed (the moment the fake server sees the
  client leave), and abort -> controller idle;
- abort while `bash -c 'sleep 100 & sleep 100'` runs: abort -> every process of the group dead (polled
  with psutil), and abort -> controller idle;
- steer: a steer submitted during a tool is in the very next request; latency from the tool's end to
  that request arriving at the server.
- pause while a reply streams (R44): pause -> the run held at its safe point (the reply's tool call not
  started: ``run_held``), which includes the rest of the reply (a few chunks), and the reply's last byte
  written by the server -> held; no further request reaches the server and the tool does not start
  until the resume.

- SIGINT -> exit of a real ``ink -p`` process while its reply streams, and of the stdlib baseline loop
  in the same spot (bench/sigint_exit.py).
- abort -> ``run_end`` through a real ``ink --mode rpc`` process while bash runs (bench/rpc_abort.py).
- end of input -> exit of ``ink --mode rpc`` with 20 background jobs running, and -> every process of
  their trees gone (bench/jobs_exit.py; fewer runs: each starts an ink and 20 jobs).

Targets (issue 3): stream closed <= 2 ms, group dead <= 10 ms, idle <= 10 ms; (issue 11) SIGINT -> exit
of ``ink -p`` <= 50 ms; (issue 16) abort -> run_end through RPC during bash <= 10 ms.
Results: bench/results/run-control.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

import psutil
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call
from tests.scripted_tools import ScriptedTool
from tests.waiting import wait_until

from bench import jobs_exit, rpc_abort, sigint_exit
from ink.agent.loop import LoopSetup
from ink.ai.http import NO_RETRY
from ink.ai.openai import OpenAIProvider
from ink.run.controller import RunController
from ink.run.events import RunEvent
from ink.tools import BashTool, ProcessRegistry, Workspace, orphans
from ink.wiring import RegistryReaper

PAUSE_ROWS = ("pause -> held, reply streaming", "reply end -> held (paused)")
RESULTS = Path(__file__).resolve().parent / "results" / "run-control.md"
TARGETS = {
    "abort -> stream closed": 2.0,
    "abort -> group dead": 10.0,
    "abort -> idle (streaming)": 10.0,
    "SIGINT -> exit (ink -p)": 50.0,
    "abort -> run_end, bash running (RPC)": 10.0,
}


def controller_for(
    server: FakeModelServer,
    tools: list,  # type: ignore[type-arg]
    reaper: object = None,
    before_tool: tuple = (),  # type: ignore[type-arg]
) -> RunController:
    provider = OpenAIProvider(api_key="k", base_url=server.openai_base_url, retry=NO_RETRY)
    setup = LoopSetup(provider, "fake-model", "bench", tools=tuple(tools), before_tool=before_tool)
    return RunController(setup, reaper=reaper)  # type: ignore[arg-type]


async def wait_event(controller: RunController, type_: str) -> None:
    seen = asyncio.Event()

    def listener(event: RunEvent) -> None:
        if event.type == type_:
            seen.set()

    remove = controller.subscribe(listener)
    try:
        await seen.wait()
    finally:
        remove()


async def abort_while_streaming(server: FakeModelServer) -> tuple[float, float]:
    controller = controller_for(server, [])
    gate = Gate()
    server.script(Reply([text("streaming "), gate, text("never")]))
    delta = asyncio.ensure_future(wait_event(controller, "text_delta"))
    controller.submit("go")
    await delta
    await gate.wait_reached_async()
    t0 = time.monotonic()
    controller.abort()
    await controller.wait_idle()
    idle = time.monotonic() - t0
    request = server.requests[-1]
    request.client_left.wait(5)
    assert request.client_left_at is not None
    closed = request.client_left_at - t0
    await controller.setup.provider.aclose()
    return closed * 1000, idle * 1000


async def abort_during_bash(server: FakeModelServer, folder: Path) -> tuple[float, float]:
    registry = ProcessRegistry()
    bash = BashTool(Workspace(folder), registry, kill_delay=0.5)
    controller = controller_for(server, [bash], RegistryReaper(registry, 0.5))
    marker = folder / "started"
    marker.unlink(missing_ok=True)
    server.script(Reply([tool_call("bash", {"command": "touch started; sleep 100 & sleep 100"})]))
    controller.submit("go")
    await wait_until(lambda: marker.exists() and registry.entries, what="bash started")
    [entry] = registry.entries
    group = [psutil.Process(entry.pid), *psutil.Process(entry.pid).children(recursive=True)]
    dead_at: list[float] = []
    watcher = threading.Thread(target=_watch_dead, args=(group, dead_at), daemon=True)
    watcher.start()
    t0 = time.monotonic()
    controller.abort()
    await controller.wait_idle()
    idle = time.monotonic() - t0
    await asyncio.to_thread(watcher.join, 5)
    await controller.setup.provider.aclose()
    return (dead_at[0] - t0) * 1000, idle * 1000


def _watch_dead(group: list[psutil.Process], dead_at: list[float]) -> None:
    """Poll until the whole group is gone. The short sleep releases the GIL: a spinning watcher would
    hold it for the 5 ms switch interval at a time and slow down the very abort it measures."""
    while True:
        if all(not _running(p) for p in group):
            dead_at.append(time.monotonic())
            return
        time.sleep(0.0002)


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def steer_during_tool(server: FakeModelServer) -> tuple[bool, float]:
    tool = ScriptedTool("work", safe=False)
    tool.gate("w")
    controller = controller_for(server, [tool])
    server.script(Reply([tool_call("work", {}, id="w")]), say("ok"))
    before = len(server.requests)
    controller.submit("go")
    await tool.started_event("w").wait()
    controller.submit("a steer")
    t0 = time.monotonic()
    tool.gate("w").set()
    [*_, nxt] = await server.wait_for_requests_async(before + 2)
    latency = nxt.received_at - t0
    await controller.wait_idle()
    await controller.setup.provider.aclose()
    return nxt.user_texts()[-1] == "a steer", latency * 1000


async def pause_while_streaming(server: FakeModelServer) -> tuple[float, float]:
    """Pause mid-reply; the reply ends with a tool call, which must not start: (pause -> held, reply's
    end -> held) in ms. Resumed once measured, the run completes."""
    tool = ScriptedTool("work", safe=False)
    controller = controller_for(server, [tool])
    gate = Gate()
    server.script(Reply([text("streaming "), gate, text("on"), tool_call("work", {}, id="w")]), say("ok"))
    before = len(server.requests)
    held = asyncio.ensure_future(wait_event(controller, "run_held"))
    controller.submit("go")
    await gate.wait_reached_async()
    t0 = time.monotonic()
    controller.pause()
    gate.open()
    await held
    held_at = time.monotonic()
    request = server.requests[-1]
    request.finished.wait(5)
    assert request.finished_at is not None
    assert len(server.requests) == before + 1 and not tool.started_event("w").is_set(), "not held"
    controller.resume()
    await controller.wait_idle()
    await controller.setup.provider.aclose()
    return (held_at - t0) * 1000, (held_at - request.finished_at) * 1000


async def measure(runs: int) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {
        k: []
        for k in (*TARGETS, "abort -> idle (bash)", "steer -> next request", *PAUSE_ROWS)
        if not k.startswith("SIGINT") and not k.endswith("(RPC)")
    }
    orphans.enable()  # the subreaper, as the ink executable is (ink.cli): ink's own abort path is measured
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            closed, idle = await abort_while_streaming(server)
            results["abort -> stream closed"].append(closed)
            results["abort -> idle (streaming)"].append(idle)
            dead, idle_bash = await abort_during_bash(server, Path(tmp))
            results["abort -> group dead"].append(dead)
            results["abort -> idle (bash)"].append(idle_bash)
            present, steer = await steer_during_tool(server)
            assert present, "the steer was not in the very next request"
            results["steer -> next request"].append(steer)
            hold, after_reply = await pause_while_streaming(server)
            results[PAUSE_ROWS[0]].append(hold)
            results[PAUSE_ROWS[1]].append(after_reply)
    return results


def table(results: dict[str, list[float]], runs: int) -> str:
    load = os.getloadavg()[0]
    lines = [
        f"Run-control latency, medians over {runs} runs (ms). Machine: {psutil.cpu_count()} cores, "
        f"load average {load:.2f} (other work on the machine inflates the numbers).",
        "",
        "| measure | median | p90 | max | target |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, values in results.items():
        values = sorted(values)
        p90 = values[int(0.9 * (len(values) - 1))]
        target = f"<= {TARGETS[name]:g}" if name in TARGETS else ""
        lines.append(
            f"| {name} | {statistics.median(values):.2f} | {p90:.2f} | {values[-1]:.2f} | {target} |"
        )
    lines.append("")
    lines.append("Steer: present in the very next request in every run.")
    lines.append("Pause: no request and no tool started while held, in every run (R44).")
    return "\n".join(lines) + "\n"


NOTES = "\n## Notes"


def kept_notes() -> str:
    """The hand-written notes below the table (where the time goes, what changed) survive a new run."""
    old = RESULTS.read_text() if RESULTS.exists() else ""
    at = old.find(NOTES)
    return old[at:] if at >= 0 else ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py run-control")
    parser.add_argument("-n", "--runs", type=int, default=30)
    args = parser.parse_args(argv)
    results = asyncio.run(measure(args.runs))
    results |= sigint_exit.measure(args.runs)
    results |= rpc_abort.measure(args.runs)
    results |= jobs_exit.measure(max(3, args.runs // 3))
    report = table(results, args.runs)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(report + kept_notes())
    print(report)
    return 0
