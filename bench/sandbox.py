"""What the sandbox (R41) costs, side by side with the same work unsandboxed, in one run:

    .venv/bin/python bench/run.py sandbox [-n RUNS]

- a one-call ``echo hi`` turn of ``ink -p`` (two requests to the fake server) with ``--sandbox
  workspace-write`` and with ``--sandbox off``, alternately (target: at most 1.3x);
- abort -> ``run_end`` through ``ink --mode rpc`` while a sandboxed ``sleep`` runs, and the same with
  ``--sandbox off`` (target: within 1.2x);
- starting one command: ``true`` through ``run_shell`` confined and not (what the mechanism itself adds).

Results: bench/results/sandbox.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from tests.fakeserver import FakeModelServer

from bench import rpc_abort
from bench.startup_and_turn import Sample, repeat_side_by_side, tool_turn, without_nagle
from ink.agent.abort import AbortSignal
from ink.sandbox import open_sandbox, probe
from ink.tools import ProcessRegistry, run_shell

RESULTS = Path(__file__).resolve().parent / "results" / "sandbox.md"


def turns(n: int) -> tuple[list[Sample], list[Sample]]:
    import sys

    without_nagle()
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        work = Path(tmp) / "proj"
        work.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(work.parent),
            "INK_HOME": str(work.parent / "inkhome"),
            "LANG": "C.UTF-8",
        }
        ink = [sys.executable, "-m", "ink", "-p", "--no-session", "--allow", "bash(echo hi)"]
        ink += ["--base-url", server.openai_base_url, "--api-key", "k"]
        server.responder = tool_turn("bash", {"command": "echo hi"}, check="hi")
        return repeat_side_by_side(
            n,
            [*ink, "--sandbox", "workspace-write", "bash"],
            [*ink, "--sandbox", "off", "bash"],
            env,
            work,
            "says 42",
        )


async def spawns(n: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = open_sandbox("workspace-write", Path(tmp))
        registry = ProcessRegistry()
        confined, plain = [], []
        for _ in range(n + 1):
            for into, confinement in ((confined, sandbox.confinement()), (plain, None)):
                started = time.perf_counter()
                await run_shell("true", tmp, AbortSignal(), registry, confinement=confinement)
                into.append((time.perf_counter() - started) * 1000)
        sandbox.close()
        return confined[1:], plain[1:]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py sandbox")
    parser.add_argument("-n", type=int, default=20)
    n = parser.parse_args(argv).n
    support = probe()
    if not support.available:
        print(f"bench: the sandbox cannot start here: {support.reason}")
        return 1
    on, off = turns(n)
    aborts_on, aborts_off = {}, {}
    for _ in range(3):  # alternate the two processes, a few runs each, so both see the same load
        for into, extra, label in (
            (aborts_on, (), ", sandboxed"),
            (aborts_off, ("--sandbox", "off"), ", off"),
        ):
            for name, values in rpc_abort.measure(max(n // 3, 3), extra, label).items():
                into.setdefault(name, []).extend(values)
    spawn_on, spawn_off = asyncio.run(spawns(n))
    text = report(n, support.abi, on, off, aborts_on, aborts_off, spawn_on, spawn_off)
    RESULTS.write_text(text)
    print(text)
    return 0


def report(
    n: int,
    abi: int | None,
    on: list[Sample],
    off: list[Sample],
    aborts_on: dict[str, list[float]],
    aborts_off: dict[str, list[float]],
    spawn_on: list[float],
    spawn_off: list[float],
) -> str:
    pairs = list(zip(on, off, strict=True))
    wall = statistics.median(a.wall / b.wall for a, b in pairs)
    cpu = statistics.median(a.cpu / b.cpu for a, b in pairs)
    abort_on = statistics.median(next(iter(aborts_on.values())))
    abort_off = statistics.median(next(iter(aborts_off.values())))
    load = os.getloadavg()[0]
    turn_on, turn_off = statistics.median(a.wall for a in on), statistics.median(b.wall for b in off)
    start_on, start_off = statistics.median(spawn_on), statistics.median(spawn_off)
    lines = [
        "# Sandbox cost, side by side",
        "",
        f"`bench/run.py sandbox -n {n}` on {time.strftime('%Y-%m-%d %H:%M')}: Landlock ABI {abi}, "
        f"{os.cpu_count()} CPUs, load average {load:.2f} (other work on the machine inflates the numbers).",
        "",
        "| measure | sandboxed | off | ratio | target |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| `ink -p` one-call `echo hi` turn, wall median (s) | {turn_on:.3f} | {turn_off:.3f} | "
        f"{wall:.2f}x (CPU {cpu:.2f}x) | <= 1.3x |",
        f"| abort -> run_end, bash running (RPC), median (ms) | {abort_on:.2f} | {abort_off:.2f} | "
        f"{abort_on / abort_off:.2f}x | <= 1.2x |",
        f"| starting `true` through run_shell, median (ms) | {start_on:.2f} | {start_off:.2f} | "
        f"{start_on / start_off:.2f}x | |",
        "",
        "Ratios of the turn are medians of per-pair ratios (each sandboxed run followed by an unsandboxed",
        "one).",
        "",
    ]
    return "\n".join(lines)
