"""Start-up and one-turn cost of ink, next to a stdlib-only baseline loop, in the same run.

Measures, each as a fresh process (wall time, CPU user+system and peak RSS of that process alone, from
``os.wait4``):
  - ``ink --version`` (and ``python -c pass``, the interpreter's own floor)
  - ``ink -p`` doing one scripted turn against the fake model server: a text-only reply (one request),
    and a turn with a ``read`` tool call (two requests)
  - ``bench/baseline_loop.py`` (urllib + json) doing the same requests, side by side: each ink run is
    followed by the loop's run of the same turn, so both see the same load; the "x loop" column is the
    median of those per-pair ratios of wall time
  - the scripted turn of issue 16: prompt -> a ``bash`` call ``echo hi`` -> the answer (two requests)
  - the text turn with one stdio MCP server configured, each run followed by the same turn without
    (issue 26: <= 1.3x the CPU): a trivial server (bench/mcp_echo_server.py), and the test suite's
    server written with the MCP SDK

The fake server runs in this process on 127.0.0.1 and replays the same script for every run. Results go
to ``bench/results/startup.md`` and stdout. Targets: --version <= 0.08 s, one turn <= 0.2 s, peak RSS
<= 60 MB (issue 2); the bash turn <= 2x the stdlib loop (issue 16).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakeserver import FakeModelServer, Reply, call, say

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "startup.md"
LAUNCHER = ROOT / "bench" / "measure_child.py"
STACK_FLOOR = ROOT / "bench" / "stack_floor.py"
TARGETS = {"version": 0.08, "turn": 0.2, "rss_mb": 60.0, "x_loop": 2.0, "x_mcp": 1.3}


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    rss_mb: float


@dataclass(frozen=True)
class Row:
    name: str
    samples: list[Sample]
    target: str = ""
    loop: list[Sample] | None = None  # the stdlib loop's runs of the same turn, one after each of these

    def cells(self) -> list[str]:
        walls = [s.wall for s in self.samples]
        ratio = ""
        if self.loop is not None:
            pairs = list(zip(self.samples, self.loop, strict=True))
            wall = statistics.median(a.wall / b.wall for a, b in pairs)
            ratio = f"{wall:.2f} ({statistics.median(a.cpu / b.cpu for a, b in pairs):.2f})"
        return [
            self.name,
            f"{statistics.median(walls):.3f}",
            f"{min(walls):.3f}",
            f"{statistics.median(s.cpu for s in self.samples):.3f}",
            f"{max(s.rss_mb for s in self.samples):.1f}",
            ratio,
            self.target,
        ]


def measure(argv: list[str], env: dict[str, str], cwd: Path, expect: str | None) -> Sample:
    """Run ``argv`` once through the small launcher (see measure_child.py for why)."""
    with tempfile.TemporaryDirectory() as tmp:
        out_file, err_file = Path(tmp) / "out", Path(tmp) / "err"
        launcher = [sys.executable, "-S", "-I", str(LAUNCHER), str(out_file), str(err_file), "--", *argv]
        done = subprocess.run(launcher, env=env, cwd=cwd, capture_output=True, text=True, check=True)
        result = json.loads(done.stdout)
        out, err = out_file.read_text(), err_file.read_text()
    if result["status"] != 0 or (expect is not None and expect not in out):
        raise SystemExit(f"bench: {argv} failed ({result['status']}): {out!r} {err!r}")
    return Sample(result["wall"], result["cpu"], result["rss_kb"] / 1024)  # ru_maxrss is in KB on Linux


def repeat(
    n: int, argv: list[str], env: dict[str, str], cwd: Path, expect: str | None = None
) -> list[Sample]:
    measure(argv, env, cwd, expect)  # warm the file cache; not counted
    return [measure(argv, env, cwd, expect) for _ in range(n)]


def repeat_side_by_side(
    n: int, argv: list[str], loop: list[str], env: dict[str, str], cwd: Path, expect: str
) -> tuple[list[Sample], list[Sample]]:
    """``argv`` and ``loop`` (the stdlib loop doing the same turn) run alternately, so that both see the
    same load on a shared machine."""
    measure(argv, env, cwd, expect)
    measure(loop, env, cwd, expect)
    pairs = [(measure(argv, env, cwd, expect), measure(loop, env, cwd, expect)) for _ in range(n)]
    return [a for a, _ in pairs], [b for _, b in pairs]


def tool_turn(
    name: str = "read", arguments: dict[str, str] | None = None, check: str = "42"
) -> Callable[[Any], Reply]:
    """Responder for a turn with one tool call: odd requests ask for the tool, even ones answer, but only
    when the tool's result holds ``check`` (a refused or failed call makes the run fail the bench)."""
    count = 0
    arguments = arguments if arguments is not None else {"path": "notes.txt"}

    def respond(request: Any) -> Reply:
        nonlocal count
        count += 1
        if count % 2:
            return call(name, arguments)
        results = request.tool_results()
        ran = bool(results) and check in results[-1][1] and "refused" not in results[-1][1]
        return say("The file ", "says 42.") if ran else say(f"the tool failed: {results}")

    return respond


def without_nagle() -> None:
    """Real model services send each SSE chunk at once (TCP_NODELAY). The fake server's handler leaves
    Nagle's algorithm on, which with the client's delayed ACKs adds ~40 ms to every streamed request
    (measured: httpx 20-44 ms per request vs 1.5-2 ms with NODELAY), a cost no real service has."""
    from tests.fakeserver import server

    server._Handler.disable_nagle_algorithm = True


def run(n: int, protocol: str) -> list[Row]:
    py = sys.executable
    without_nagle()
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        work = Path(tmp) / "proj"  # the workspace; $INK_HOME beside it, not inside (as ~/.ink is)
        work.mkdir()
        (work / "notes.txt").write_text("the secret is 42\n")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(work.parent),
            "INK_HOME": str(work.parent / "inkhome"),
            "LANG": "C.UTF-8",
        }
        ink = [py, "-m", "ink", "-p", "--no-session", "--provider", protocol]
        ink += ["--base-url", server.base_url(protocol), "--api-key", "k"]
        baseline = [py, str(ROOT / "bench" / "baseline_loop.py"), server.openai_base_url]
        floor = [py, str(STACK_FLOOR), server.openai_base_url]
        text_turn = lambda _request: say("The file ", "says 42.")  # noqa: E731
        cases: list[tuple[str, list[str], Callable[[object], Reply] | None, str]] = [
            ("python -c pass (interpreter floor)", [py, "-c", "pass"], None, ""),
            ("ink --version", [py, "-m", "ink", "--version"], None, "<= 0.08 s"),
            ("asyncio + ink.ai.http1, same request (stack floor)", floor, text_turn, ""),
        ]
        rows = []
        for name, argv, responder, target in cases:
            server.responder = responder
            expect = "says 42" if responder is not None else None
            rows.append(Row(name, repeat(n, argv, env, work, expect), target))
        turns: list[tuple[str, str, Callable[[object], Reply], str]] = [
            ("one turn (text reply)", "hi", text_turn, "<= 0.2 s, <= 60 MB"),
            ("turn with a read tool call (2 requests)", "read", tool_turn(), ""),
            (
                "turn with bash `echo hi` (2 requests)",
                "bash",
                tool_turn("bash", {"command": "echo hi"}, check="hi"),
                "<= 2x loop",
            ),
        ]
        allow = ["--allow", "bash(echo hi)"]  # print mode cannot ask: the command is allowed by a rule
        for name, prompt, responder, target in turns:
            server.responder = responder
            ink_runs, loop_runs = repeat_side_by_side(
                n, [*ink, *allow, prompt], [*baseline, prompt], env, work, "says 42"
            )
            rows.append(Row(f"ink -p, {name}", ink_runs, target, loop_runs))
            rows.append(Row("stdlib baseline loop, same turn (run after each ink run)", loop_runs))
        server.responder = text_turn
        rows += mcp_rows(n, [*ink, "hi"], env, work)
        return rows


def mcp_rows(n: int, argv: list[str], env: dict[str, str], work: Path) -> list[Row]:
    """The same text turn with one stdio MCP server configured and without, alternately (issue 26: at
    most 1.3x the CPU of the turn without). The first prompt waits for the server to be ready, so the row
    holds spawning it, the MCP handshake and its tool list; CPU counts the server's too (it is ink's
    child). The target row's server is written in sh (~1 ms to start), so it measures ink's own cost; the
    same server in Python (-S: no site-packages scan) and the test suite's server written with the MCP
    SDK show what a server's own start-up adds (importing the SDK dominates the last)."""
    rows = []
    py, bench = sys.executable, ROOT / "bench"
    servers = [  # (what, command line, target)
        (
            "one trivial stdio MCP server (sh)",
            ["/bin/sh", str(bench / "mcp_echo_server.sh")],
            "<= 1.3x without",
        ),
        ("one trivial stdio MCP server (python -S)", [py, "-S", "-I", str(bench / "mcp_echo_server.py")], ""),
        (
            "one stdio MCP server written with the SDK",
            [py, str(ROOT / "tests" / "mcp_tools" / "server.py"), "stdio"],
            "",
        ),
    ]
    for index, (what, server, target) in enumerate(servers):
        home = work.parent / f"inkhome-mcp{index}"
        home.mkdir()
        command, *args = server
        table = f"[mcp.servers.t]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"
        (home / "config.toml").write_text(table)
        with_mcp = env | {"INK_HOME": str(home)}
        measure(argv, with_mcp, work, "says 42")
        pairs = [
            (measure(argv, with_mcp, work, "says 42"), measure(argv, env, work, "says 42")) for _ in range(n)
        ]
        rows.append(
            Row(
                f"ink -p, one turn (text reply), {what}", [a for a, _ in pairs], target, [b for _, b in pairs]
            )
        )
        rows.append(Row("ink -p, the same turn without MCP (run after each)", [b for _, b in pairs]))
    return rows


def report(rows: list[Row], n: int, protocol: str) -> str:
    header = [
        "what",
        "wall median (s)",
        "wall min (s)",
        "CPU median (s)",
        "peak RSS max (MB)",
        "x paired wall (CPU)",
        "target",
    ]
    lines = [
        "# Start-up and one-turn cost",
        "",
        f"`.venv/bin/python bench/run.py startup` on {time.strftime('%Y-%m-%d %H:%M')}: Python "
        f"{platform.python_version()}, {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs. "
        f"{n} runs each after one warm-up; protocol {protocol}; fake model server on 127.0.0.1; "
        f"load average {os.getloadavg()[0]:.2f} (other work on the machine inflates the medians).",
        "",
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] * len(header)) + " |",
        *("| " + " | ".join(r.cells()) + " |" for r in rows),
        "",
        "Wall, CPU (user+system) and peak RSS are those of the measured process alone (`os.wait4`). "
        "x paired: the median over runs of ink's wall time (CPU time) divided by that of the run right after "
        "it: the stdlib loop's (bench/baseline_loop.py, the same turn against the same server), or for the "
        "MCP rows ink's same turn without MCP; on a loaded machine the CPU ratio is the steadier one. "
        "The MCP rows count the server's CPU too (ink's child, reaped by it): the SDK server's own "
        "start-up (importing the SDK) is most of its row.",
        *verdicts(rows),
    ]
    return "\n".join(lines) + "\n"


def verdicts(rows: list[Row]) -> list[str]:
    """One line per side-by-side target, saying plainly whether this run met it, beside what asyncio +
    ink's HTTP client alone (the stack floor, one request) cost next to the same loop runs."""
    floor = [s.cpu for r in rows if r.name.startswith("asyncio + ink.ai.http1") for s in r.samples]
    out = []
    for row in rows:
        if row.loop is not None and "x without" in row.target:
            cpu = statistics.median(a.cpu / b.cpu for a, b in zip(row.samples, row.loop, strict=True))
            met = "met" if cpu <= TARGETS["x_mcp"] else "**not met**"
            out += ["", f"{row.name}: {cpu:.2f}x the CPU of the turn without MCP, target <= 1.3x: {met}."]
        if row.loop is None or "x loop" not in row.target:
            continue
        cpu = statistics.median(a.cpu / b.cpu for a, b in zip(row.samples, row.loop, strict=True))
        met = "met" if cpu <= TARGETS["x_loop"] else "**not met**"
        line = f"{row.name}: {cpu:.2f}x the loop's CPU, target <= {TARGETS['x_loop']:g}x: {met}"
        if floor:
            loop_cpu = statistics.median(s.cpu for s in row.loop)
            line += f"; the stack floor alone is {statistics.median(floor) / loop_cpu:.2f}x"
        out += ["", line + "."]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py startup")
    parser.add_argument("-n", "--runs", type=int, default=10)
    parser.add_argument("--protocol", choices=("openai", "anthropic"), default="openai")
    args = parser.parse_args(argv)
    rows = run(args.runs, args.protocol)
    text = report(rows, args.runs, args.protocol)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)
    print(text, end="")
    print(f"(written to {RESULTS.relative_to(ROOT)})")
    return 0
