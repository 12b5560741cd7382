"""Events per second through ``ink --mode rpc`` while one reply streams 20,000 tiny text chunks (issue 5).

    .venv/bin/python bench/run.py rpc [--runs N] [--chunks C] [--protocol P]

The fake model server runs in its own process (so it does not share a GIL with this client) with Nagle's
algorithm off, as real services send each SSE chunk at once. Each measured process is started, asked
``get_state`` (start-up is not measured), and then timed from writing the ``prompt`` line to reading its
``run_end`` line on ink's stdout; every ``text_delta`` in between is checked (count and joined text). Per
process: one cold prompt, then ``new_session`` and two warm prompts. ink's CPU time over the prompt comes
from /proc (psutil). Floor row: reading the same HTTP stream raw (no parsing) from this process.

Target: the whole reply delivered in <= 0.45 s wall from the prompt command to ``run_end``.
Results go to bench/results/rpc.md and stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import psutil

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "rpc.md"
BASELINE = ROOT / "bench" / "baseline_stream.py"
TARGET = 0.45
X_LOOP = 2.0  # issue 16: within 2x the stdlib loop reading the same stream


@dataclass(frozen=True)
class Sample:
    wall: float
    first_delta: float
    events: int
    cpu: float


def chunk_texts(n: int) -> list[str]:
    return [f"{i} " for i in range(n)]


def start_server(script: Path, protocol: str) -> tuple[subprocess.Popen[str], str]:
    code = (
        "import sys; from tests.fakeserver import server; server._Handler.disable_nagle_algorithm = True; "
        "from tests.fakeserver.__main__ import main; sys.exit(main(sys.argv[1:]))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "--port", "0", "--script-file", str(script), "--loop"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    return proc, url + "/v1" if protocol == "openai" else url


def project(work: Path) -> Path:
    """The workspace ink runs in: beside ``$INK_HOME`` (``work/inkhome``), not holding it, as ``~/.ink``
    is beside a project (the workspace is checkpointed with git; a home inside it would be too)."""
    folder = work / "proj"
    folder.mkdir(exist_ok=True)
    return folder


class Ink:
    """One ``ink --mode rpc`` process (or, with ``argv``, the stdlib loop of bench/baseline_stream.py);
    lines are read in big chunks so the client is never the limit."""

    def __init__(self, url: str, protocol: str, work: Path, argv: list[str] | None = None) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "LANG": "C.UTF-8"}
        env["INK_HOME"] = str(work / "inkhome")
        ink = [sys.executable, "-m", "ink", "--mode", "rpc", "--no-session", "--provider", protocol]
        argv = argv or [*ink, "--base-url", url, "--api-key", "k"]
        self.proc = subprocess.Popen(
            argv, env=env, cwd=project(work), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self.ps = psutil.Process(self.proc.pid)
        self.buffer = b""

    def send(self, obj: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj).encode() + b"\n")

    def read_until(self, marker: bytes) -> tuple[bytes, float | None]:
        """Read until a complete line containing ``marker``; returns everything read and when the first
        ``text_delta`` arrived (perf_counter), if one did."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        data, first = self.buffer, None
        while True:
            at = data.find(marker)
            if at >= 0 and data.find(b"\n", at) >= 0:
                end = data.find(b"\n", at) + 1
                self.buffer = data[end:]
                return data[:end], first
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise SystemExit(f"bench: ink ended early: {data[-500:]!r}")
            if first is None and b'"text_delta"' in chunk:
                first = time.perf_counter()
            data += chunk

    def cpu(self) -> float:
        times = self.ps.cpu_times()
        return times.user + times.system

    def prompt(self, expected: str) -> Sample:
        cpu, started = self.cpu(), time.perf_counter()
        self.send({"type": "prompt", "id": "p", "text": "stream please"})
        data, first = self.read_until(b'"run_end"')
        wall = time.perf_counter() - started
        used = self.cpu() - cpu
        lines = [json.loads(x) for x in data.splitlines()]
        deltas = [x["text"] for x in lines if x.get("type") == "text_delta"]
        end = lines[-1]
        if end.get("stopReason") != "completed" or "".join(deltas) != expected:
            raise SystemExit(f"bench: wrong reply: {end} ({len(deltas)} deltas)")
        events = sum(1 for x in lines if x.get("type") != "response")
        return Sample(wall, (first or time.perf_counter()) - started, events, used)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def raw_floor(url: str, protocol: str) -> float:
    """Read one whole streamed reply with a bare socket (HTTP/1.0: no chunked decoding, no parsing)."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    path = "/v1/chat/completions" if protocol == "openai" else "/v1/messages"
    body = json.dumps(
        {"model": "m", "stream": True, "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
    )
    request = f"POST {path} HTTP/1.0\r\nhost: {host}\r\ncontent-type: application/json\r\n"
    request += f"content-length: {len(body)}\r\nx-api-key: k\r\nanthropic-version: 2023-06-01\r\n\r\n{body}"
    started = time.perf_counter()
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(request.encode())
        while sock.recv(1 << 20):
            pass
    return time.perf_counter() - started


class Runs(NamedTuple):
    cold: list[Sample]
    warm: list[Sample]
    floors: list[float]
    loop: list[Sample]  # the stdlib loop's prompt right after each warm ink prompt (openai only)


def run(runs: int, chunks: int, protocol: str) -> Runs:
    texts = chunk_texts(chunks)
    expected = "".join(texts)
    cold: list[Sample] = []
    warm: list[Sample] = []
    loop: list[Sample] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        script = work / "script.json"
        script.write_text(json.dumps([{"steps": [{"text": t} for t in texts]}]))
        server, url = start_server(script, protocol)
        try:
            floors = [raw_floor(url, protocol) for _ in range(runs)]
            for _ in range(runs):
                ink = Ink(url, protocol, work)
                ink.send({"type": "get_state", "id": "s"})
                ink.read_until(b'"get_state"')  # started and serving: start-up is not measured
                stdlib = None
                if protocol == "openai":
                    stdlib = Ink(url, protocol, work, [sys.executable, str(BASELINE), url])
                    stdlib.read_until(b'"ready"')
                cold.append(ink.prompt(expected))
                for _ in range(2):
                    ink.send({"type": "new_session", "id": "n"})
                    ink.read_until(b'"new_session"')
                    warm.append(ink.prompt(expected))
                    if stdlib is not None:  # side by side: the same stream, right after ink's
                        loop.append(stdlib.prompt(expected))
                ink.close()
                if stdlib is not None:
                    stdlib.close()
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(10)
    return Runs(cold, warm, floors, loop)


def row(name: str, samples: list[Sample], target: str) -> str:
    walls = [s.wall for s in samples]
    median = statistics.median(walls)
    events = statistics.median(s.events for s in samples)
    cells = [
        name,
        f"{median:.3f}",
        f"{min(walls):.3f}",
        f"{max(walls):.3f}",
        f"{statistics.median(s.first_delta for s in samples) * 1000:.1f}",
        f"{statistics.median(s.cpu for s in samples):.3f}",
        f"{events:.0f}",
        f"{events / median:,.0f}",
        target,
    ]
    return "| " + " | ".join(cells) + " |"


def report(runs: Runs, args: argparse.Namespace) -> str:
    cold, warm, floors = runs.cold, runs.warm, runs.floors
    header = ["what", "wall median (s)", "min (s)", "max (s)", "first delta (ms)", "ink CPU (s)", "events",
              "events/s", "target"]  # fmt: skip
    met = "met" if statistics.median(s.wall for s in cold + warm) <= TARGET else "NOT met"
    floor = statistics.median(floors)
    command = f"bench/run.py rpc --runs {args.runs} --chunks {args.chunks} --protocol {args.protocol}"
    machine = f"Python {platform.python_version()}, {platform.system()} {platform.machine()}"
    lines = [
        "# RPC throughput: one reply of many tiny chunks",
        "",
        f"`.venv/bin/python {command}` on {time.strftime('%Y-%m-%d %H:%M')}: {machine}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}. The fake model server "
        f"streams one reply of {args.chunks:,} text chunks (one SSE event each) from its own "
        "process; wall time runs from writing the `prompt` line to reading the `run_end` line; "
        "every `text_delta` is checked.",
        "",
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] * len(header)) + " |",
        row("first prompt of a fresh process", cold, f"<= {TARGET} s"),
        row("later prompts (after new_session)", warm, f"<= {TARGET} s"),
        f"| floor: the same stream read raw by a socket, no parsing | {floor:.3f} | "
        f"{min(floors):.3f} | {max(floors):.3f} |  |  |  |  |  |",
        *(
            [
                row(
                    "stdlib loop (urllib + json, a JSON line per chunk), right after each later prompt",
                    runs.loop,
                    "",
                )
            ]
            if runs.loop
            else []
        ),
        "",
        *(loop_verdict(warm, runs.loop) if runs.loop else []),
        f"Target {TARGET} s over all prompts: **{met}**. Events are every line ink wrote for the "
        "prompt besides its response (run_start, input_taken, message_start, a text_delta per chunk, "
        "message_end, run_end). ink CPU is user+system time of the ink process over the prompt.",
    ]
    return "\n".join(lines) + "\n"


def loop_verdict(warm: list[Sample], loop: list[Sample]) -> list[str]:
    """ink's later prompts beside the stdlib loop's prompt run right after each: median per-pair ratios."""
    wall = statistics.median(a.wall / b.wall for a, b in zip(warm, loop, strict=True))
    cpu = statistics.median(a.cpu / b.cpu for a, b in zip(warm, loop, strict=True))
    met = "met" if wall <= X_LOOP else "NOT met"
    return [
        f"Side by side with the stdlib loop (bench/baseline_stream.py: urllib, json per chunk, a JSON line "
        f"per chunk out), each ink prompt followed by the loop's: ink / loop = **{wall:.2f}x** wall, "
        f"{cpu:.2f}x CPU (median of the per-pair ratios); target <= {X_LOOP:g}x wall: **{met}**.",
        "",
    ]


NOTES = "\n## What made it faster"


def kept_notes() -> str:
    """The hand-written notes below the table (the before/after history) survive a new run."""
    old = RESULTS.read_text() if RESULTS.exists() else ""
    at = old.find(NOTES)
    return old[at:] if at >= 0 else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py rpc")
    parser.add_argument(
        "-n", "--runs", type=int, default=5, help="ink processes (1 cold + 2 warm prompts each)"
    )
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--protocol", choices=("openai", "anthropic"), default="openai")
    args = parser.parse_args(argv)
    text = report(run(args.runs, args.chunks, args.protocol), args)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text + kept_notes())
    print(text, end="")
    print(f"(written to {RESULTS.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
