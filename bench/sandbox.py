"""What the sandbox (R41) costs, side by side with the same work unsandboxed, in one run:

    .venv/bin/python bench/run.py sandbox [-n PAIRS] [--rounds R]

- a one-call ``echo hi`` turn of ``ink -p`` (two requests to the fake server) with ``--sandbox
  workspace-write`` and with ``--sandbox off``, alternately (target: at most 1.3x);
- abort -> ``run_end`` through ``ink --mode rpc`` while a sandboxed ``sleep`` runs, and the same with
  ``--sandbox off`` (target: within 1.2x);
- starting one command: ``true`` through ``run_shell`` confined and not (what the mechanism itself adds).

Each round measures all three; the table gives the medians over the rounds (the machine is shared, so
a round may run under more load than the next: both sides of a pair run under the same one).
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

import msgspec
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


class Round(msgspec.Struct, frozen=True):
    """One round's medians: the turn (wall s, per-pair ratios), abort -> run_end (ms), a spawn (ms)."""

    turn_on: float
    turn_off: float
    turn_ratio: float
    cpu_ratio: float
    abort_on: float
    abort_off: float
    spawn_on: float
    spawn_off: float
    load: tuple[float, float]  # the 1-minute load average when the round began and ended


def one_round(n: int) -> Round:
    load_before = os.getloadavg()[0]
    on, off = turns(n)
    aborts_on: list[float] = []
    aborts_off: list[float] = []
    for _ in range(3):  # alternate the two processes, a few runs each, so both see the same load
        for into, extra, label in (
            (aborts_on, (), ", sandboxed"),
            (aborts_off, ("--sandbox", "off"), ", off"),
        ):
            for values in rpc_abort.measure(max(n // 3, 3), extra, label).values():
                into.extend(values)
                break  # the first row: abort -> run_end
    spawn_on, spawn_off = asyncio.run(spawns(n))
    pairs = list(zip(on, off, strict=True))
    return Round(
        statistics.median(a.wall for a in on),
        statistics.median(b.wall for b in off),
        statistics.median(a.wall / b.wall for a, b in pairs),
        statistics.median(a.cpu / b.cpu for a, b in pairs),
        statistics.median(aborts_on),
        statistics.median(aborts_off),
        statistics.median(spawn_on),
        statistics.median(spawn_off),
        (load_before, os.getloadavg()[0]),
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py sandbox")
    parser.add_argument("-n", type=int, default=20, help="pairs of runs per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the table gives their medians")
    args = parser.parse_args(argv)
    support = probe()
    if not support.available:
        print(f"bench: the sandbox cannot start here: {support.reason}")
        return 1
    rounds = []
    for number in range(args.rounds):
        rounds.append(one_round(args.n))
        print(f"round {number + 1}: {rounds[-1]}", flush=True)
    text = report(args.n, support.abi, rounds)
    RESULTS.write_text(text)
    print(text)
    return 0


def report(n: int, abi: int | None, rounds: list[Round]) -> str:
    def mid(field: str) -> float:
        return statistics.median(getattr(r, field) for r in rounds)

    abort_ratio = statistics.median(r.abort_on / r.abort_off for r in rounds)
    loads = [load for r in rounds for load in r.load]
    lines = [
        "# Sandbox cost, side by side",
        "",
        f"`bench/run.py sandbox -n {n} --rounds {len(rounds)}` on {time.strftime('%Y-%m-%d %H:%M')}: "
        f"Landlock ABI {abi}, {os.cpu_count()} CPUs, 1-minute load average {min(loads):.1f} to "
        f"{max(loads):.1f} "
        "(the machine is shared: other work inflates every number, both sides alike).",
        "",
        "Medians over the rounds of each round's medians; ratios are medians of per-pair ratios (each "
        "sandboxed run beside an unsandboxed one, alternately).",
        "",
        "| measure | sandboxed | off | ratio | target |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| `ink -p` one-call `echo hi` turn, wall (s) | {mid('turn_on'):.3f} | {mid('turn_off'):.3f} | "
        f"{mid('turn_ratio'):.2f}x (CPU {mid('cpu_ratio'):.2f}x) | <= 1.3x |",
        f"| abort -> run_end, a `sleep` running (RPC) (ms) | {mid('abort_on'):.2f} | "
        f"{mid('abort_off'):.2f} | "
        f"{abort_ratio:.2f}x | <= 1.2x |",
        f"| starting `true` through run_shell (ms) | {mid('spawn_on'):.2f} | {mid('spawn_off'):.2f} | "
        f"{mid('spawn_on') / mid('spawn_off'):.2f}x | |",
        "",
        "| round | load | turn s (on / off, ratio) | abort ms (on / off) | spawn ms (on / off) |",
        "| ---: | ---: | --- | --- | --- |",
    ]
    for number, r in enumerate(rounds, 1):
        lines.append(
            f"| {number} | {r.load[0]:.1f}-{r.load[1]:.1f} | {r.turn_on:.3f} / {r.turn_off:.3f}, "
            f"{r.turn_ratio:.2f}x | {r.abort_on:.2f} / {r.abort_off:.2f} | "
            f"{r.spawn_on:.2f} / {r.spawn_off:.2f} |"
        )
    return "\n".join([*lines, ""])
