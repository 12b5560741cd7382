"""The TUI's interrupt keys and a flooding tool (issue 12).

    .venv/bin/python bench/run.py tui-keys [--runs K] [--megabytes M]

The real ``ink`` runs in a pseudo-terminal (120x40) against the fake model server. Measured:
- key-to-interrupt latency, for Esc and for Ctrl+C: a reply is held open by a gate; the key is written to
  the terminal and the time until the fake server sees ink close the stream is taken (K runs each).
  Target: <= 50 ms.
- a tool that floods its output: ``bash`` prints M MB (default 10) of text in 50 bursts 50 ms apart.
  The ink process's own CPU
  (its children, the command, excluded) over the command's run, as a share of one core, beside the same
  call through ``ink -p`` (no UI). Target: the TUI <= 35 % of a core above the tool's own cost. Also the
  delay from the command's end to the next model request reaching the server (the stream is never held
  up by drawing), and that the command's output was drawn live (under the running tool) before its
  result.

A reader thread drains the terminal continuously, so ink never blocks on its output and the measurement
costs ink nothing. Results: bench/results/tui-keys.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import pexpect
import psutil
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call

from bench.tui_stream import COLUMNS, ROWS, PtyReader, env_for, wait

RESULTS = Path(__file__).resolve().parent / "results" / "tui-keys.md"
TARGET_KEY_MS, TARGET_CPU = 50.0, 35.0
KEYS = {"Esc": b"\x1b", "Ctrl+C": b"\x03"}


def spawn(server: FakeModelServer, work: Path) -> tuple[pexpect.spawn, PtyReader]:
    args = ["-m", "ink", "--no-session", "--permission-mode", "yolo"]
    args += ["--base-url", server.openai_base_url, "--api-key", "k"]
    child = pexpect.spawn(sys.executable, args, env=env_for(work), cwd=str(work), dimensions=(ROWS, COLUMNS))
    child.delaybeforesend = None
    reader = PtyReader(child)
    reader.start()
    wait(lambda: reader.contains("○ idle".encode()), 30, "the TUI to start")
    return child, reader


def key_latency(server: FakeModelServer, work: Path, key: bytes, runs: int) -> list[float]:
    """Milliseconds from the key written to the stream closed, one per run, in one ink process."""
    child, reader = spawn(server, work)
    latencies: list[float] = []
    try:
        for _ in range(runs):
            gate = Gate()
            server.script(Reply([text("Streaming"), gate]))
            before = len(server.requests)
            offset = reader.size()
            child.send(b"go\r")
            server.wait_for_requests(before + 1, 20)
            gate.wait_reached()
            wait(partial(reader.contains, b"Streaming", offset), 20, "the reply on screen")
            sent = time.monotonic()
            child.send(key)
            request = server.requests[before]
            request.wait_finished(20)
            latencies.append(1000 * (request.client_left_at - sent))
            gate.open()
            wait(partial(reader.contains, "⏹ interrupted".encode(), offset), 20, "the interrupt shown")
            ended = reader.data.find("⏹ interrupted".encode(), offset)
            wait(partial(reader.contains, "○ idle".encode(), ended), 20, "idle again")
            child.send(b"\x03")  # the restored "go" leaves the editor
    finally:
        child.close(force=True)
        reader.join(5)
    return latencies


def flood_command(megabytes: int, stamp: Path) -> str:
    # In 50 bursts 50 ms apart: a flood that lasts long enough (>= 2.5 s) to be drawn while it runs.
    burst = megabytes * 1_000_000 // 50
    flood = f"for i in $(seq 50); do yes 'flooding line of output' | head -c {burst}; sleep 0.05; done"
    return f"{flood}; echo FLOOD-END; date +%s.%N > {stamp}"


def flood_tui(server: FakeModelServer, work: Path, megabytes: int) -> tuple[float, float, bool]:
    """(ink's CPU % of a core during the command, ms from the command's end to the next request, whether
    the command's last line was drawn live before its result)."""
    stamp = work / "flood-end"
    server.script(
        Reply([tool_call("bash", {"command": flood_command(megabytes, stamp)}, id="c1")]), say("ok")
    )
    child, reader = spawn(server, work)
    try:
        proc = psutil.Process(child.pid)
        before = len(server.requests)
        offset = reader.size()
        child.send(b"flood\r")
        server.wait_for_requests(before + 1, 20)
        wait(lambda: reader.contains(" · running".encode(), offset), 30, "the tool running")
        start, start_cpu = time.monotonic(), _own_cpu(proc)
        server.wait_for_requests(before + 2, 120)
        end, end_cpu = time.monotonic(), _own_cpu(proc)
        lag = _request_lag(server.requests[before + 1], stamp)
        wait(partial(reader.contains, "✓".encode(), offset), 30, "the result")
        live = reader.first_arrival_with("│".encode(), offset)  # drawn only under a running tool
        result = reader.first_arrival_with("✓".encode(), offset)
    finally:
        child.close(force=True)
        reader.join(5)
    return (
        100 * (end_cpu - start_cpu) / (end - start),
        lag,
        live is not None and result is not None and live < result,
    )


def flood_print(server: FakeModelServer, work: Path, megabytes: int) -> float:
    stamp = work / "flood-end"
    server.script(
        Reply([tool_call("bash", {"command": flood_command(megabytes, stamp)}, id="c1")]), say("ok")
    )
    args = ["-m", "ink", "-p", "--no-session", "--permission-mode", "yolo"]
    args += ["--base-url", server.openai_base_url, "--api-key", "k", "flood"]
    before = len(server.requests)
    proc = subprocess.Popen([sys.executable, *args], env=env_for(work), cwd=work, stdout=subprocess.DEVNULL)
    ps = psutil.Process(proc.pid)
    server.wait_for_requests(before + 1, 20)
    server.requests[before].wait_finished(20)
    start, start_cpu = time.monotonic(), _own_cpu(ps)
    server.wait_for_requests(before + 2, 120)
    end, end_cpu = time.monotonic(), _own_cpu(ps)
    proc.wait(30)
    return 100 * (end_cpu - start_cpu) / (end - start)


def _request_lag(request: object, stamp: Path) -> float:
    """From the command's last line (its ``date`` stamp, wall clock) to the request at the server."""
    ended = float(stamp.read_text())
    received_wall = request.received_at + (time.time() - time.monotonic())  # type: ignore[attr-defined]
    return 1000 * (received_wall - ended)


def _own_cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py tui-keys")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--megabytes", type=int, default=10)
    ns = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        work = Path(tmp)
        keys = {name: key_latency(server, work, key, ns.runs) for name, key in KEYS.items()}
        floods = [flood_tui(server, work, ns.megabytes) for _ in range(3)]
        headless = [flood_print(server, work, ns.megabytes) for _ in range(3)]
    report = render(ns, keys, floods, headless)
    RESULTS.write_text(report)
    print(report)
    return 0


def render(
    ns: argparse.Namespace,
    keys: dict[str, list[float]],
    floods: list[tuple[float, float, bool]],
    headless: list[float],
) -> str:
    lines = [
        "# TUI: interrupt keys and a flooding tool",
        "",
        f"`.venv/bin/python bench/run.py tui-keys` on {time.strftime('%Y-%m-%d %H:%M')}: Python "
        f"{platform.python_version()}, {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}; terminal {COLUMNS}x{ROWS}.",
        "",
        "| what | median | max | target |",
        "| --- | --- | --- | --- |",
    ]
    for name, values in keys.items():
        lines.append(
            f"| {name}: key written -> model stream closed ({len(values)} runs) | "
            f"{statistics.median(values):.1f} ms | {max(values):.1f} ms | <= {TARGET_KEY_MS:g} ms |"
        )
    cpu = [c for c, _, _ in floods]
    lag = [g for _, g, _ in floods]
    lines += [
        f"| ink TUI CPU while bash prints {ns.megabytes} MB (its own process, 3 runs) | "
        f"{statistics.median(cpu):.1f} % | {max(cpu):.1f} % | <= {TARGET_CPU:g} % |",
        f"| ink -p CPU for the same call (no UI) | {statistics.median(headless):.1f} % | "
        f"{max(headless):.1f} % | |",
        f"| command's end -> next model request at the server (TUI) | {statistics.median(lag):.0f} ms | "
        f"{max(lag):.0f} ms | |",
        "",
        f"The command's output was drawn live under it, before its result, in "
        f"{sum(1 for *_, v in floods if v)} of 3 runs. CPU is the ink process's own (user + system; "
        "the command and its pipe are its "
        "children and not counted) from the tool shown running to the next model request, as a share of "
        "one core. The key latency is from writing the key to the terminal to the fake server seeing "
        "ink close the stream: the whole path through the terminal, prompt_toolkit's escape timeout, "
        "the key binding and the abort.",
        "",
    ]
    return "\n".join(lines)
