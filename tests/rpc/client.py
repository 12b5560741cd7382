"""A small client for ``ink --mode rpc`` as a real subprocess: send commands, wait for answers and events.

    with RpcClient.start(args, env, cwd) as ink:
        data = ink.ok("prompt", text="hi")                 # waits for the response; asserts ok
        end = ink.wait_event("run_end", stopReason="completed")
        ink.close_stdin(); assert ink.wait_exit() == 0

Every line the process writes on stdout is parsed as it arrives (a reader thread); a line that is not a
JSON object is recorded in ``violations`` (stdout must carry protocol lines only). Waiting is always for a
line (a response by id, an event by predicate) with a timeout, never for time to pass.
"""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from tests.cli.inkproc import INK

Line = dict[str, Any]
Predicate = Callable[[Line], bool]
TIMEOUT = 15.0


class RpcClient:
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
    def start(cls, args: list[str], env: dict[str, str], cwd: Path, *, paused: bool = False) -> RpcClient:
        """``paused``: do not read stdout until ``resume_reading`` (ink's writes then fill the pipe)."""
        proc = subprocess.Popen(
            [*INK, "--mode", "rpc", *args],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        return cls(proc, paused=paused)

    def resume_reading(self) -> None:
        self._reading.set()

    # -- reading -----------------------------------------------------------------------------------

    def _read_stdout(self, stream: IO[bytes]) -> None:
        self._reading.wait()
        for raw in stream:
            try:
                line = json.loads(raw)
            except ValueError:
                line = None
            with self._cond:
                if isinstance(line, dict):
                    self.lines.append(line)
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
                    seen = [(x.get("type"), x.get("command")) for x in self.lines[-15:]]
                    raise TimeoutError(f"no matching line within {timeout} s; last lines: {seen}")

    def wait_event(self, type_: str, *, after: int = 0, timeout: float = TIMEOUT, **fields: Any) -> Line:
        return self.wait_event_at(type_, after=after, timeout=timeout, **fields)[1]

    def wait_event_at(
        self, type_: str, *, after: int = 0, timeout: float = TIMEOUT, **fields: Any
    ) -> tuple[int, Line]:
        def match(line: Line) -> bool:
            return line.get("type") == type_ and all(line.get(k) == v for k, v in fields.items())

        return self.wait_line(match, after=after, timeout=timeout)

    def wait_response(self, command_id: Any, timeout: float = TIMEOUT) -> Line:
        return self.wait_line(
            lambda x: x.get("type") == "response" and x.get("id") == command_id, timeout=timeout
        )[1]

    def mark(self) -> int:
        """The index the next line will have: pass it as ``after`` to wait only for what comes next."""
        with self._cond:
            return len(self.lines)

    def events(self, type_: str | None = None) -> list[Line]:
        with self._cond:
            return [x for x in self.lines if x.get("type") != "response" and type_ in (None, x.get("type"))]

    def responses(self) -> list[Line]:
        with self._cond:
            return [x for x in self.lines if x.get("type") == "response"]

    # -- writing -----------------------------------------------------------------------------------

    def send(self, type_: str, **fields: Any) -> str:
        """Send a command with a fresh id; returns the id."""
        command_id = f"c{next(self._ids)}"
        self.send_raw(json.dumps({"type": type_, "id": command_id, **fields}).encode() + b"\n")
        return command_id

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, type_: str, *, timeout: float = TIMEOUT, **fields: Any) -> Line:
        return self.wait_response(self.send(type_, **fields), timeout)

    def ok(self, type_: str, **fields: Any) -> Any:
        """Send, wait for the response, assert ``ok``; returns its ``data`` (None when it has none)."""
        answer = self.request(type_, **fields)
        assert answer["ok"] is True, answer
        assert answer["command"] == type_
        return answer.get("data")

    def fail(self, type_: str, **fields: Any) -> str:
        """Send, wait for the response, assert it failed; returns the reason."""
        answer = self.request(type_, **fields)
        assert answer["ok"] is False and "data" not in answer, answer
        assert isinstance(answer["error"], str) and answer["error"], answer
        return str(answer["error"])

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

    def __enter__(self) -> RpcClient:
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
