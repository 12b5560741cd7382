"""The client side of ink's JSON-lines frontends (``ink --mode rpc``, ``ink acp``) as a real subprocess.

    with RpcClient.start(args, env, cwd) as ink:          # or AcpClient: each adds its protocol
        ink.send_json({...}); index, line = ink.wait_line(lambda x: x.get("id") == 1)
        ink.close_stdin(); assert ink.wait_exit() == 0

Every line the process writes on stdout is parsed as it arrives (a reader thread) into ``lines``; a line
that is not a line of the protocol (``accepts``) is recorded in ``violations`` instead (stdout must carry
protocol lines only). Waiting is always for a line (by predicate) with a timeout, never for time to pass.

``started_clients`` is the body of the suites' ``start_*`` fixtures.
"""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, ClassVar, Self, TypeVar

from tests.cli.inkproc import INK, ink_env
from tests.fakeserver import FakeModelServer

Line = dict[str, Any]
Predicate = Callable[[Line], bool]
TIMEOUT = 15.0


class JsonLinesClient:
    MODE: ClassVar[tuple[str, ...]] = ()  # the arguments that choose the frontend

    def __init__(self, proc: subprocess.Popen[bytes], *, paused: bool = False) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.lines: list[Line] = []
        self.violations: list[bytes] = []
        self.stderr_chunks: list[bytes] = []
        self._cond = threading.Condition()
        self._eof = False
        self._ids = itertools.count(1)
        self._reading = threading.Event()  # cleared: stdout is not read (a slow client)
        if not paused:
            self._reading.set()
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(proc.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(proc.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @classmethod
    def start(cls, args: list[str], env: dict[str, str], cwd: Path, *, paused: bool = False) -> Self:
        """``paused``: do not read stdout until ``resume_reading`` (ink's writes then fill the pipe)."""
        proc = subprocess.Popen(
            [*INK, *cls.MODE, *args],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        return cls(proc, paused=paused)

    def resume_reading(self) -> None:
        self._reading.set()

    # -- what the protocol says --------------------------------------------------------------------

    def accepts(self, parsed: object) -> bool:
        """Whether a parsed stdout line is a line of the protocol."""
        return isinstance(parsed, dict)

    def summary(self, line: Line) -> object:
        """A few words on a line, for the message of a wait that timed out."""
        return line

    # -- reading -----------------------------------------------------------------------------------

    def _read_stdout(self, stream: IO[bytes]) -> None:
        self._reading.wait()
        for raw in stream:
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = None
            with self._cond:
                if self.accepts(parsed):
                    self.lines.append(parsed)
                else:
                    self.violations.append(raw)
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for raw in stream:
            self.stderr_chunks.append(raw)

    @property
    def stderr(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def wait_line(
        self, predicate: Predicate, *, after: int = 0, timeout: float = TIMEOUT
    ) -> tuple[int, Line]:
        """The first line from index ``after`` on that matches, and its index. Raises ``TimeoutError``
        (naming what was seen) when none comes, or stdout ends first."""
        with self._cond:
            start = after
            while True:
                for i in range(start, len(self.lines)):
                    if predicate(self.lines[i]):
                        return i, self.lines[i]
                start = len(self.lines)
                if self._eof:
                    raise TimeoutError(f"stdout ended without the line; stderr: {self.stderr[-2000:]}")
                if not self._cond.wait(timeout):
                    seen = [self.summary(x) for x in self.lines[-15:]]
                    raise TimeoutError(f"no matching line within {timeout} s; last lines: {seen}")

    def mark(self) -> int:
        """The index the next line will have: pass it as ``after`` to wait only for what comes next."""
        with self._cond:
            return len(self.lines)

    # -- writing -----------------------------------------------------------------------------------

    def send_json(self, obj: Any) -> None:
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    # -- the process -------------------------------------------------------------------------------

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def wait_exit(self, timeout: float = 30.0) -> int:
        status = self.proc.wait(timeout)
        for thread in self._threads:
            thread.join(timeout)
        return status

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._reading.set()
        if self.proc.poll() is None:
            try:
                self.close_stdin()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait(10)
        for thread in self._threads:
            thread.join(5)


Client = TypeVar("Client", bound=JsonLinesClient)


def provider_args(server: FakeModelServer, protocol: str, *more: str) -> list[str]:
    """The flags that point ink at the fake model server speaking ``protocol``, then ``more``."""
    return ["--provider", protocol, "--base-url", server.base_url(protocol), "--api-key", "k", *more]


def started_clients(
    client: type[Client], server: FakeModelServer, project: Path, tmp_path: Path
) -> Iterator[Callable[..., Client]]:
    """Yields ``start(*flags, protocol="openai", env=None)``, which starts ink (``client.MODE``) in
    ``project`` against ``server``. When resumed (the test is over) it stops every client it started (end
    of input, then SIGKILL if it hangs) and asserts that its stdout held protocol lines only."""
    started: list[Client] = []

    def start(*flags: str, protocol: str = "openai", env: dict[str, str] | None = None) -> Client:
        ink = client.start(provider_args(server, protocol, *flags), env or ink_env(tmp_path), project)
        started.append(ink)
        return ink

    yield start
    for ink in started:
        ink.__exit__()
        assert ink.violations == [], f"non-protocol lines on stdout: {ink.violations[:3]}"
