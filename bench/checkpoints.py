"""Workspace checkpoints (issue 14): time and storage of snapshots of a 10,000-file workspace.

    .venv/bin/python bench/run.py checkpoints [--files N]

Rows: the first snapshot (every file hashed and stored), a later one of the unchanged tree (the index's
stat cache: nothing re-read), one after 10 files changed, a restore of those 10 files, the store's
size on disk beside the workspace's, and the first snapshot of another session in the same workspace
(its index seeded from the earlier session's). Then what a run sees: a real run controller with the
checkpoints installed as the app installs them (gate, events, end snapshot), against the fake model
server (which answers at once: the worst case, no model time for the snapshot to hide behind), submit
to ``run_end`` of a run whose one tool call is ``true`` in bash, beside the same run without
checkpoints. Last, what the user feels in a fresh workspace: the first prompt sent as the session opens,
to its first tool starting (``first_tool_delay``), and ``ink -p`` start to exit with and without them
(``print_mode``). Results go to bench/results/checkpoints.md and stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

from tests.fakeserver import FakeModelServer, Reply, call, pause, say, tool_call

from bench.run_control import controller_for, wait_event
from ink.agent.tasks import Tasks
from ink.agent.tool import ToolCallContext
from ink.checkpoints import shadow_repo_for
from ink.rewind import SessionCheckpoints
from ink.run.controller import RunController
from ink.tools import BashTool, ProcessRegistry, ReadTool, Workspace

RESULTS = Path(__file__).resolve().parent / "results" / "checkpoints.md"


def make_workspace(root: Path, files: int) -> int:
    size = 0
    for n in range(files):
        folder = root / f"pkg{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        text = f"def function_{n}(x):\n    return x * {n}\n" * 40
        (folder / f"module_{n}.py").write_text(text)
        size += len(text)
    return size


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


async def measure(files: int) -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        work, home = Path(tmp) / "work", Path(tmp) / "inkhome"
        size = make_workspace(work, files)
        shadow = shadow_repo_for(home, work, "bench")
        rows = []
        started = time.perf_counter()
        first = await shadow.snapshot("first")
        rows.append(
            (
                f"first snapshot, {files:,} files ({size / 1e6:.1f} MB)",
                f"{time.perf_counter() - started:.2f} s",
            )
        )
        started = time.perf_counter()
        await shadow.snapshot("again")
        rows.append(("later snapshot, nothing changed", f"{(time.perf_counter() - started) * 1000:.0f} ms"))
        for n in range(10):
            (work / f"pkg{n}" / f"module_{n * 100}.py").write_text("changed\n")
        started = time.perf_counter()
        await shadow.snapshot("changed")
        rows.append(("later snapshot, 10 files changed", f"{(time.perf_counter() - started) * 1000:.0f} ms"))
        started = time.perf_counter()
        report = await shadow.restore(first.commit, "undo")
        rows.append(
            (
                f"restore of those {len(report.written)} files",
                f"{(time.perf_counter() - started) * 1000:.0f} ms",
            )
        )
        rows.append(
            (
                "store on disk (the first snapshot in one pack, later ones loose)",
                f"{du(shadow.git_dir) / 1e6:.1f} MB",
            )
        )
        started = time.perf_counter()
        await shadow_repo_for(home, work, "bench-later-session").snapshot("new-session")
        rows.append(
            (
                "first snapshot of a later session in the same workspace",
                f"{(time.perf_counter() - started) * 1000:.0f} ms",
            )
        )
        rows += await run_delay(work, Path(tmp) / "runhome")
        fresh = Path(tmp) / "fresh"
        make_workspace(fresh, files)
        rows += await first_tool_delay(fresh, Path(tmp) / "firsthome", files)
        again = Path(tmp) / "print"
        make_workspace(again, files)
        rows += await asyncio.to_thread(print_mode, again, Path(tmp), files)
    return rows


def print_mode(work: Path, tmp: Path, files: int) -> list[tuple[str, str]]:
    """``ink -p`` (a saved session: it takes checkpoints) in a fresh workspace, start to exit, one bash
    call: with checkpoints off (``INK_CHECKPOINTS=off``), then on, then on again (the store exists)."""
    with FakeModelServer() as server:
        timings = []
        for switch in ["off", "on", "on"]:
            server.script(call("bash", {"command": "true"}), say("done"))
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(tmp / "home"),
                "INK_HOME": str(tmp / "print-home"),
                "INK_CHECKPOINTS": switch,
            }
            argv = [sys.executable, "-m", "ink", "-p", "--permission-mode", "yolo", "go"]
            argv += ["--provider", "openai", "--base-url", server.openai_base_url, "--api-key", "k"]
            started = time.perf_counter()
            subprocess.run(argv, env=env, cwd=work, check=True, capture_output=True, timeout=600)
            timings.append(time.perf_counter() - started)
    off, first, later = timings
    return [
        (
            f"ink -p, one bash call, fresh {files:,}-file workspace: start to exit",
            f"{off * 1000:.0f} ms without checkpoints, {first * 1000:.0f} ms with (new store), "
            f"{later * 1000:.0f} ms the next time",
        )
    ]


async def first_tool_delay(work: Path, home: Path, files: int) -> list[tuple[str, str]]:
    """What the user feels in a workspace ink never saw: the session opens (its snapshot starts) and the
    first prompt is sent at once; the time from the submit to its first tool starting (bash: the
    command's own clock; read: its result), without checkpoints and with them in a new store, with a
    model that answers at once and one that takes a second to send its call."""
    rows = []
    with FakeModelServer() as server:
        tools = [BashTool(Workspace(work), ProcessRegistry()), ReadTool(Workspace(work))]
        slot = Slot()
        controller = controller_for(server, tools, before_tool=(slot.gate,))
        await timed_run(server, controller)  # warm-up: the connection, the imports of the first run
        cases = [
            ("bash", 0.0, "instant model"),
            ("read", 0.0, "instant model"),
            ("bash", 1.0, "model sends its call after 1 s"),
        ]
        for n, (tool, model_seconds, model) in enumerate(cases):
            plain = await first_tool(server, controller, work, tool, model_seconds)
            part, remove = install(controller, slot, home / f"h{n}", work)
            checked = await first_tool(server, controller, work, tool, model_seconds)
            await part.aclose()
            remove()
            rows.append(
                (
                    f"fresh {files:,}-file workspace, prompt to its first tool ({tool}) starting, {model}",
                    f"{plain * 1000:.0f} ms without checkpoints, {checked * 1000:.0f} ms with",
                )
            )
    return rows


async def first_tool(
    server: FakeModelServer, controller: RunController, work: Path, tool: str, model_seconds: float
) -> float:
    marker = work / "started.txt"
    marker.unlink(missing_ok=True)
    args = (
        {"command": "echo $EPOCHREALTIME > started.txt"} if tool == "bash" else {"path": "pkg0/module_0.py"}
    )
    steps = [pause(model_seconds), tool_call(tool, args)] if model_seconds else [tool_call(tool, args)]
    server.script(Reply(steps), say("done"))
    tool_ended = asyncio.ensure_future(wait_event(controller, "tool_end"))
    ended = asyncio.ensure_future(wait_event(controller, "run_end"))
    await asyncio.sleep(0)  # the listeners are in before the submit
    started = time.time()
    controller.submit("go")
    await tool_ended
    done = time.time()
    await ended
    return (float(marker.read_text()) if tool == "bash" else done) - started


async def run_delay(work: Path, home: Path) -> list[tuple[str, str]]:
    """Submit to run_end of a one-tool-call run: without checkpoints; with them in a new store, submitted
    at once (the start-up snapshot has no head start) or once it is done (the user typed meanwhile); and
    the next run."""
    with FakeModelServer() as server:
        slot = Slot()
        controller = controller_for(
            server, [BashTool(Workspace(work), ProcessRegistry())], before_tool=(slot.gate,)
        )
        await timed_run(server, controller)  # warm-up: the connection, the imports of the first run
        plain = await timed_run(server, controller)
        part, remove = install(controller, slot, home / "a", work)  # the start-up snapshot begins
        at_once = await timed_run(server, controller)
        await part.aclose()
        remove()
        part, remove = install(controller, slot, home / "b", work)
        await part.settled()  # the user typed the first prompt while it was taken
        typed = await timed_run(server, controller)
        second = await timed_run(server, controller)
        await part.aclose()
    return [
        ("a run (one bash call, instant model) without checkpoints", f"{plain * 1000:.0f} ms"),
        ("the same run, new store, sent at once (no head start)", f"{at_once * 1000:.0f} ms"),
        ("the same run, new store, sent after the start-up snapshot", f"{typed * 1000:.0f} ms"),
        ("the same run, next checkpoint", f"{second * 1000:.0f} ms"),
    ]


class Slot:
    """The first step of the bench's before-tool chain: the gate of the checkpoints installed, if any."""

    def __init__(self) -> None:
        self.part: SessionCheckpoints | None = None

    async def gate(self, ctx: ToolCallContext) -> None:
        if self.part is not None:
            await self.part.gate(ctx)


def install(
    controller: RunController, slot: Slot, home: Path, work: Path
) -> tuple[SessionCheckpoints, Callable[[], None]]:
    """As the app does it with its part; returns the part and its unsubscribe."""
    part = SessionCheckpoints(controller.emit, Tasks(), home, work)
    part.open("bench")
    unsubscribe = controller.subscribe(part.on_event)
    slot.part = part
    controller.changed_files = part.changed_files

    def remove() -> None:
        unsubscribe()
        slot.part = None
        controller.changed_files = None

    return part, remove


async def timed_run(server: FakeModelServer, controller: RunController) -> float:
    server.script(call("bash", {"command": "true"}), say("done"))
    ended = asyncio.ensure_future(wait_event(controller, "run_end"))
    started = time.perf_counter()
    controller.submit("go")
    await ended
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    rows = asyncio.run(measure(args.files))
    load = max(load_before, os.getloadavg()[0])
    lines = [
        "# Checkpoint benchmark",
        "",
        f"`bench/run.py checkpoints --files {args.files}` on CPython {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, {date.today().isoformat()}.",
        "",
        "| measure | value |",
        "| --- | --- |",
        *[f"| {a} | {b} |" for a, b in rows],
        "",
        "A snapshot is `git add --all` into ink's own store (outside the workspace), `write-tree`,",
        "`commit-tree` and a ref; git's index keeps a stat cache per session, so an unchanged tree is not",
        "read again, and a snapshot that reads many files (200 or more) streams them into one pack",
        "instead of writing a file per object. ink takes a snapshot as a session opens, while the user",
        "types; an input taken while it still runs adopts it as its checkpoint. A run takes its",
        "checkpoint while the model is called; a call that may change files (bash, an edit) waits for it",
        "when it comes first, a read or a search never does. With a model that answers at once the run",
        "rows show the whole cost; the last row shows a model that takes a second to send its call. The",
        f"machine was shared with other work: load average {load:.1f} on {os.cpu_count()} cores.",
    ]
    report = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report)
    print(report)
    return 0
