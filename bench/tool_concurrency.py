"""Concurrent reads: N read calls with injected latency finish in about the slowest one's time.

    .venv/bin/python bench/run.py tools [-n RUNS]

The scheduler runs a batch of N real ``read`` calls (on real files), each delayed by its own injected
latency (as a slow disk or network file system would), and the wall time of the whole batch is compared
with the slowest single latency and with the sum (what running them one by one would cost).
Results: bench/results/tools.md.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ink.agent.abort import AbortSignal
from ink.agent.scheduler import ToolScheduler
from ink.agent.tool import ToolCallContext, ToolOutput
from ink.ai.messages import ToolCall
from ink.ai.provider import ToolSpec
from ink.tools import ReadTool, Workspace

RESULTS = Path(__file__).resolve().parent / "results" / "tools.md"
LATENCIES = [0.02 * (i + 1) for i in range(8)]  # 20 ms .. 160 ms


class SlowRead:
    """The real read tool behind an injected delay per path."""

    def __init__(self, inner: ReadTool, delays: Mapping[str, float]) -> None:
        self._inner = inner
        self._delays = delays

    @property
    def spec(self) -> ToolSpec:
        return self._inner.spec

    @property
    def concurrency_safe(self) -> bool:
        return self._inner.concurrency_safe

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        await asyncio.sleep(self._delays[str(args["path"])])
        return await self._inner.run(args, ctx)


def make_files(folder: Path) -> dict[str, float]:
    delays = {}
    for i, latency in enumerate(LATENCIES):
        name = f"file{i}.txt"
        (folder / name).write_text(f"contents of file {i}\n" * 100)
        delays[name] = latency
    return delays


async def one_batch(folder: Path, delays: dict[str, float]) -> tuple[float, int]:
    tool = SlowRead(ReadTool(Workspace(folder)), delays)
    scheduler = ToolScheduler([tool], lambda event: None, AbortSignal())
    calls = [ToolCall(f"c{i}", "read", {"path": name}) for i, name in enumerate(delays)]
    started = time.perf_counter()
    results = await scheduler.run_batch(calls)
    wall = time.perf_counter() - started
    assert [r.tool_call_id for r in results] == [c.id for c in calls]
    assert not any(r.is_error for r in results), [r.output for r in results if r.is_error]
    return wall, len(results)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py tools")
    parser.add_argument("-n", "--runs", type=int, default=20)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        delays = make_files(folder)
        walls = [asyncio.run(one_batch(folder, delays))[0] for _ in range(args.runs)]
    slowest, total = max(LATENCIES), sum(LATENCIES)
    median = statistics.median(walls)
    report = "\n".join(
        [
            f"Concurrent reads: {len(LATENCIES)} real `read` calls with injected latencies "
            f"{LATENCIES[0] * 1000:.0f}-{slowest * 1000:.0f} ms, median of {args.runs} batches.",
            "",
            "| measure | ms |",
            "| --- | ---: |",
            f"| slowest single call | {slowest * 1000:.1f} |",
            f"| sum of all calls (serial) | {total * 1000:.1f} |",
            f"| batch wall time, median | {median * 1000:.1f} |",
            f"| batch wall time, max | {max(walls) * 1000:.1f} |",
            f"| overhead over the slowest | {(median - slowest) * 1000:.1f} |",
            "",
        ]
    )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(report)
    print(report)
    return 0 if median < slowest * 1.5 else 1
