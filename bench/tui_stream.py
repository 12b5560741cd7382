"""The TUI under a fast stream: CPU, achieved rate, completeness, key echo (issue 4).

    .venv/bin/python bench/run.py tui [--chunks N] [--rate R] [--runs K]

The real ``ink`` runs in a pseudo-terminal (120x40) against the fake model server, which streams one
reply of N small text chunks (default 25,000) at R chunks per second (default 5,000), paced in bursts of
25 chunks, the way a fast service's chunks reach a client through TCP. Measured, per run:
- CPU of the ink process (user + system, psutil) over the stream, as a share of one core;
- the achieved rate: chunks / (last text on the terminal - request received);
- completeness: the whole terminal output, replayed into a terminal emulator (pyte) afterwards, holds
  every word of the reply once and in order;
- key echo: while the stream runs, a key is typed every 150 ms; latency from the key press to the first
  output bytes that draw it (keys are capital letters the reply and the escape codes never contain).
The same stream through ``ink -p`` (no UI) is measured next to it: the cost of the core alone.

A reader thread drains the terminal continuously and only records bytes and times, so ink never blocks
on its output and the measurement costs ink nothing. Results: bench/results/tui.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pexpect
import psutil
import pyte
from tests.fakeserver import FakeModelServer, Reply, pause, text
from tests.fakeserver.script import Step

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "tui.md"
BURSTS = (25, 1)  # chunks written back to back before each pause: bursts as TCP delivers them, and one by one
KEYS = "QXZWVY"  # never in the reply (lowercase words) nor in the escape codes ink writes
TARGET_CPU, TARGET_ECHO_MS = 35.0, 50.0
ROWS, COLUMNS = 40, 120
CPR_REQUEST = b"\x1b[6n"


@dataclass
class Sample:
    cpu_percent: float
    rate: float  # chunks per second the server really sent
    lag_ms: float  # from the server's last chunk to the last word on the terminal (TUI) or stdout
    complete: bool
    echo_ms: list[float]


def reply_words(chunks: int) -> list[str]:
    return [f"w{i}" for i in range(chunks)]


@dataclass(frozen=True)
class Pacing:
    burst: int  # chunks written back to back
    gap: float  # pause after each burst, seconds


def script(words: list[str], pacing: Pacing) -> Reply:
    """One chunk per word, a pause after every burst; a blank line every 40 words so finished paragraphs
    print as they come."""
    steps: list[Step] = []
    for i, word in enumerate(words):
        steps.append(text(word + ("\n\n" if i % 40 == 39 else " ")))
        if i % pacing.burst == pacing.burst - 1:
            steps.append(pause(pacing.gap))
    return Reply(steps)


def calibrated(server: FakeModelServer, words: list[str], rate: float, burst: int, work: Path) -> Pacing:
    """The pause that makes the server really send ``rate`` chunks/s: the server's own time per burst
    (writes, and waking from the pause) is measured once with a headless run and taken off."""
    nominal = burst / rate
    probe = run_print(server, words[: min(len(words), 10_000)], Pacing(burst, nominal), work)
    overhead = burst / probe.rate - nominal
    return Pacing(burst, max(0.0, nominal - overhead))


class PtyReader(threading.Thread):
    """Reads the terminal as fast as ink writes, recording (time, total bytes) for each read. Answers
    cursor-position requests as a terminal whose cursor is on its last row would (a long session)."""

    def __init__(self, child: pexpect.spawn) -> None:
        super().__init__(daemon=True)
        self.child = child
        self.data = bytearray()
        self.arrivals: list[tuple[float, int]] = []
        self.lock = threading.Lock()

    def run(self) -> None:
        fd = self.child.child_fd
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            now = time.monotonic()
            if CPR_REQUEST in chunk:
                os.write(fd, f"\x1b[{ROWS};1R".encode() * chunk.count(CPR_REQUEST))
            with self.lock:
                self.data += chunk
                self.arrivals.append((now, len(self.data)))

    def size(self) -> int:
        with self.lock:
            return len(self.data)

    def contains(self, needle: bytes, start: int = 0) -> bool:
        with self.lock:
            return self.data.find(needle, start) >= 0

    def first_arrival_with(self, needle: bytes, start: int) -> float | None:
        with self.lock:
            at = self.data.find(needle, start)
            if at < 0:
                return None
            return next(t for t, end in self.arrivals if end > at)


def wait(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit(f"bench: timed out waiting for {what}")
        time.sleep(0.002)


def env_for(work: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work),
        "INK_HOME": str(work / "inkhome"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
    }


def run_tui(server: FakeModelServer, words: list[str], pacing: Pacing, work: Path) -> Sample:
    server.script(script(words, pacing))
    args = ["-m", "ink", "--no-session", "--base-url", server.openai_base_url, "--api-key", "k"]
    child = pexpect.spawn(sys.executable, args, env=env_for(work), cwd=str(work), dimensions=(ROWS, COLUMNS))
    child.delaybeforesend = None  # pexpect sleeps 50 ms before every send by default
    reader = PtyReader(child)
    reader.start()
    try:
        wait(lambda: reader.contains("○ idle".encode()), 20, "the TUI to start")
        proc = psutil.Process(child.pid)
        before = len(server.requests)
        child.send(b"go\r")
        server.wait_for_requests(before + 1, 20)
        start_cpu, start = _cpu(proc), time.monotonic()
        echoes = type_while_streaming(child, reader, words[-1])
        end, end_cpu = time.monotonic(), _cpu(proc)
        shown = reader.first_arrival_with(words[-1].encode(), 0) or end
        request = server.requests[before]
        wait(lambda: reader.contains("○ idle".encode(), reader.size() - 4000), 20, "idle after the stream")
        child.send(b"\x03\x03\x03")  # clear the typed keys, then quit
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close(force=True)
        reader.join(5)
    complete = scrollback_words(bytes(reader.data)) == words
    return sample(request, start, start_cpu, end, end_cpu, shown, complete, echoes, len(words))


def sample(
    request: object,
    start: float,
    start_cpu: float,
    end: float,
    end_cpu: float,
    shown: float,
    complete: bool,
    echoes: list[float],
    chunks: int,
) -> Sample:
    received, finished = request.received_at, request.finished_at  # type: ignore[attr-defined]
    return Sample(
        100 * (end_cpu - start_cpu) / (end - start),
        chunks / (finished - received),
        1000 * (shown - finished),
        complete,
        echoes,
    )


def type_while_streaming(child: pexpect.spawn, reader: PtyReader, last_word: str) -> list[float]:
    """Type a key every 150 ms until the last word is on the terminal; each key's echo latency (ms)."""
    echoes: list[float] = []
    marker = last_word.encode()
    deadline = time.monotonic() + 120
    i = 0
    while not reader.contains(marker):
        if time.monotonic() > deadline:
            raise SystemExit(f"bench: {last_word} never reached the terminal")
        key = KEYS[i % len(KEYS)].encode()
        offset, sent = reader.size(), time.monotonic()
        child.send(key)
        arrival = wait_arrival(reader, key, offset)
        echoes.append(1000 * (arrival - sent))
        i += 1
        time.sleep(0.15)  # pacing of the typist, not synchronisation
    return echoes


def wait_arrival(reader: PtyReader, needle: bytes, offset: int, timeout: float = 5.0) -> float:
    """When the first output bytes holding ``needle`` after ``offset`` arrived."""
    deadline = time.monotonic() + timeout
    while (arrival := reader.first_arrival_with(needle, offset)) is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"bench: {needle!r} was never drawn")
        time.sleep(0.0005)
    return arrival


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def scrollback_words(raw: bytes) -> list[str]:
    """Replay the output into a terminal emulator; the reply's words found in its scrollback, in order."""
    screen = pyte.HistoryScreen(COLUMNS, ROWS, history=1_000_000, ratio=0.5)
    pyte.ByteStream(screen).feed(raw)
    lines = ["".join(line[x].data for x in range(COLUMNS)) for line in screen.history.top]
    lines += list(screen.display)
    return [w for line in lines for w in line.split() if w[:1] == "w" and w[1:].isdigit()]


def run_print(server: FakeModelServer, words: list[str], pacing: Pacing, work: Path) -> Sample:
    args = ["-m", "ink", "-p", "--no-session", "--base-url", server.openai_base_url, "--api-key", "k", "go"]
    return run_headless(server, words, pacing, work, args)


def run_bare(server: FakeModelServer, words: list[str], pacing: Pacing, work: Path) -> Sample:
    """The same stream read by httpx + httpx-sse alone (bench/bare_sse.py): the HTTP stack's floor."""
    bare = Path(__file__).resolve().parent / "bare_sse.py"
    return run_headless(server, words, pacing, work, [str(bare), server.openai_base_url])


def run_headless(
    server: FakeModelServer, words: list[str], pacing: Pacing, work: Path, args: list[str]
) -> Sample:
    """Run ``python ARGS`` (which prints the reply's words on stdout) against one paced stream."""
    server.script(script(words, pacing))
    before = len(server.requests)
    proc = subprocess.Popen([sys.executable, *args], env=env_for(work), cwd=work, stdout=subprocess.PIPE)
    ps = psutil.Process(proc.pid)
    server.wait_for_requests(before + 1, 20)
    start_cpu, start = _cpu(ps), time.monotonic()
    request = server.requests[before]
    request.wait_finished(60)
    end, end_cpu = time.monotonic(), _cpu(ps)
    out, _ = proc.communicate(timeout=30)
    complete = out.decode().split() == words
    return sample(request, start, start_cpu, end, end_cpu, end, complete, [], len(words))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py tui")
    parser.add_argument("--chunks", type=int, default=25_000)
    parser.add_argument("--rate", type=float, default=5_000)
    parser.add_argument("--runs", type=int, default=3)
    ns = parser.parse_args(argv)
    from tests.fakeserver import server as fake

    fake._Handler.disable_nagle_algorithm = True  # real services send each chunk at once
    words = reply_words(ns.chunks)
    results: Results = []
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        work = Path(tmp)
        for burst in BURSTS:
            pacing = calibrated(server, words, ns.rate, burst, work)
            tui = [run_tui(server, words, pacing, work) for _ in range(ns.runs)]
            headless = [run_print(server, words, pacing, work) for _ in range(ns.runs)]
            bare = [run_bare(server, words, pacing, work) for _ in range(ns.runs)]
            results.append((burst, tui, headless, bare))
    report = render(ns, results)
    RESULTS.write_text(report)
    print(report)
    return 0 if all(s.complete for _, tui, headless, _ in results for s in tui + headless) else 1


Results = list[tuple[int, list[Sample], list[Sample], list[Sample]]]


def render(ns: argparse.Namespace, results: Results) -> str:
    lines = [
        "# TUI under a fast stream",
        "",
        f"`.venv/bin/python bench/run.py tui` on {time.strftime('%Y-%m-%d %H:%M')}: Python "
        f"{platform.python_version()}, {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}. One reply of {ns.chunks:,} chunks (one word each) paced "
        f"at {ns.rate:,.0f} chunks/s (the pause calibrated by a headless run first); terminal "
        f"{COLUMNS}x{ROWS}; {ns.runs} runs each.",
        "",
        "| what | pacing | CPU, % of one core (median, max) | chunks/s streamed (median) | last word shown "
        "after the stream (median) | complete, in order | target |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    echoes: list[float] = []
    shares = []
    for burst, tui, headless, bare in results:
        pacing = f"bursts of {burst}" if burst > 1 else "one chunk per write"
        lines.append(_row("ink TUI", pacing, tui, f"<= {TARGET_CPU:g} %"))
        lines.append(_row("ink -p (no UI, same stream)", pacing, headless, ""))
        lines.append(_row("httpx + httpx-sse alone (no ink)", pacing, bare, ""))
        echoes += [e for s in tui for e in s.echo_ms]
        share = statistics.median(s.cpu_percent for s in tui) - statistics.median(
            s.cpu_percent for s in headless
        )
        shares.append(f"{share:+.1f} points ({pacing})")
    echoes.sort()
    p95 = echoes[int(0.95 * (len(echoes) - 1))]
    lines += [
        "",
        f"The UI's own share (TUI minus ink -p, medians): {', '.join(shares)}.",
        "",
        f"Key echo while streaming ({len(echoes)} keys): median {statistics.median(echoes):.1f} ms, "
        f"p95 {p95:.1f} ms, max {max(echoes):.1f} ms (target <= {TARGET_ECHO_MS:g} ms).",
        "",
        "CPU is measured from the moment the server has the request to the moment the last word is on the "
        "terminal (TUI) or the stream has ended (print mode); the rate is the server's, from the request to "
        "its last chunk. Completeness replays the whole terminal output into pyte and compares the words of "
        'its scrollback with the reply (print mode: stdout). "One chunk per write" makes every chunk its '
        "own TCP segment and its own wake-up of the event loop. The last row of each pacing is the floor: "
        "bench/bare_sse.py reads the same stream with httpx + httpx-sse + json and no ink code at all. "
        "With one chunk per write that floor alone is above the 35 % target (one epoll wake-up, recv, "
        "httpcore's anyio cancel scope, h11's chunked reader and the SSE decoder per chunk); real services "
        "batch several events per TCP segment at these rates (the bursts rows), where the target is met.",
        "",
    ]
    return "\n".join(lines)


def _row(name: str, pacing: str, samples: list[Sample], target: str) -> str:
    cpu = [s.cpu_percent for s in samples]
    rate = statistics.median(s.rate for s in samples)
    lag = statistics.median(s.lag_ms for s in samples)
    done = "yes" if all(s.complete for s in samples) else "NO"
    cells = [name, pacing, f"{statistics.median(cpu):.1f}, {max(cpu):.1f}", f"{rate:,.0f}", f"{lag:.0f} ms"]
    return "| " + " | ".join([*cells, done, target]) + " |"
