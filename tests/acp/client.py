"""A small ACP client (the editor's side) for ``ink acp`` as a real subprocess.

    with AcpClient.start(args, env, cwd) as ink:
        ink.ok("initialize", protocolVersion=1)
        session = ink.ok("session/new", cwd=str(project), mcpServers=[])["sessionId"]
        request_id = ink.send("session/prompt", sessionId=session, prompt=[{"type": "text", "text": "hi"}])
        answer = ink.wait_response(request_id)

Every line ink writes on stdout is parsed as it arrives (a reader thread); a line that is not a JSON-RPC
2.0 object is recorded in ``violations`` (stdout must carry protocol messages only). Waiting is always
for a message (a response by id, a notification or request by predicate) with a timeout, never for time
to pass.
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

Message = dict[str, Any]
Predicate = Callable[[Message], bool]
TIMEOUT = 15.0


class AcpClient:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.messages: list[Message] = []
        self.violations: list[bytes] = []
        self.stderr_chunks: list[bytes] = []
        self._cond = threading.Condition()
        self._eof = False
        self._ids = itertools.count(1)
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(proc.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(proc.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @classmethod
    def start(cls, args: list[str], env: dict[str, str], cwd: Path) -> AcpClient:
        proc = subprocess.Popen(
            [*INK, "acp", *args],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        return cls(proc)

    # -- reading -----------------------------------------------------------------------------------

    def _read_stdout(self, stream: IO[bytes]) -> None:
        for raw in stream:
            try:
                message = json.loads(raw)
            except ValueError:
                message = None
            with self._cond:
                if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
                    self.messages.append(message)
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

    def wait_for(
        self, predicate: Predicate, *, after: int = 0, timeout: float = TIMEOUT
    ) -> tuple[int, Message]:
        """The first message from index ``after`` on that matches, and its index. Raises ``TimeoutError``
        (naming what was seen) when none comes, or stdout ends first."""
        with self._cond:
            start = after
            while True:
                for i in range(start, len(self.messages)):
                    if predicate(self.messages[i]):
                        return i, self.messages[i]
                start = len(self.messages)
                if self._eof:
                    raise TimeoutError(f"stdout ended without the message; stderr: {self.stderr[-2000:]}")
                if not self._cond.wait(timeout):
                    seen = [m.get("method") or f"response {m.get('id')}" for m in self.messages[-15:]]
                    raise TimeoutError(f"no matching message within {timeout} s; last ones: {seen}")

    def wait_response(self, request_id: Any, timeout: float = TIMEOUT) -> Message:
        return self.wait_response_at(request_id, timeout)[1]

    def wait_response_at(self, request_id: Any, timeout: float = TIMEOUT) -> tuple[int, Message]:
        return self.wait_for(lambda m: "method" not in m and m.get("id") == request_id, timeout=timeout)

    def wait_update(self, kind: str, *, after: int = 0, timeout: float = TIMEOUT, **fields: Any) -> Message:
        """The next ``session/update`` whose update has ``sessionUpdate == kind`` and ``fields``."""

        def match(m: Message) -> bool:
            if m.get("method") != "session/update":
                return False
            update = m["params"]["update"]
            return update.get("sessionUpdate") == kind and all(update.get(k) == v for k, v in fields.items())

        return self.wait_for(match, after=after, timeout=timeout)[1]["params"]["update"]

    def wait_request(self, method: str, *, after: int = 0, timeout: float = TIMEOUT) -> Message:
        """A request ink sends to us (it has an id and a method)."""
        return self.wait_for(lambda m: m.get("method") == method and "id" in m, after=after, timeout=timeout)[
            1
        ]

    def updates(self, session_id: str | None = None) -> list[Message]:
        with self._cond:
            return [
                m["params"]["update"]
                for m in self.messages
                if m.get("method") == "session/update" and session_id in (None, m["params"]["sessionId"])
            ]

    def mark(self) -> int:
        """The index the next message will have: pass it as ``after`` to wait only for what comes next."""
        with self._cond:
            return len(self.messages)

    def responses(self, request_id: Any) -> list[Message]:
        with self._cond:
            return [m for m in self.messages if "method" not in m and m.get("id") == request_id]

    # -- writing -----------------------------------------------------------------------------------

    def send(self, method: str, **params: Any) -> int:
        """Send a request with a fresh id; returns the id."""
        request_id = next(self._ids)
        self.send_json({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def notify(self, method: str, **params: Any) -> None:
        self.send_json({"jsonrpc": "2.0", "method": method, "params": params})

    def answer(self, request_id: Any, result: Any) -> None:
        """Answer a request ink sent us."""
        self.send_json({"jsonrpc": "2.0", "id": request_id, "result": result})

    def send_json(self, obj: Any) -> None:
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, method: str, *, timeout: float = TIMEOUT, **params: Any) -> Message:
        return self.wait_response(self.send(method, **params), timeout)

    def ok(self, method: str, **params: Any) -> Any:
        """Send, wait for the response, assert it succeeded; returns its ``result``."""
        answer = self.request(method, **params)
        assert "error" not in answer, answer
        return answer["result"]

    def error(self, method: str, **params: Any) -> dict[str, Any]:
        """Send, wait for the response, assert it failed; returns its ``error``."""
        answer = self.request(method, **params)
        assert "result" not in answer and isinstance(answer["error"]["message"], str), answer
        return dict(answer["error"])

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

    def __enter__(self) -> AcpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            try:
                self.close_stdin()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait(10)
        for thread in self._threads:
            thread.join(5)
