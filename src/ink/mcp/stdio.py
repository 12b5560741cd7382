"""The stdio transport: a server process ink starts, one JSON-RPC message per line on its stdin/stdout.

The process gets a minimal environment (as the MCP SDK gives: ``HOME``, ``PATH``, ...) plus the
server's ``env`` and ink's process token, runs in its own process group and is registered with the
``ProcessRegistry`` (R35), so no server outlives ink. Of its stderr only the last ``STDERR_KEPT``
bytes are kept, in memory: their tail explains a crash, and a server that logs gigabytes costs nothing.

Lines are cut from what each read returns and joined once (linear in the line's length, however it
arrives); a line over ``MAX_MESSAGE_BYTES`` is skipped as it streams, keeping only its head and tail to
find the request it answered, so a runaway server costs neither memory nor time beyond its bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ink import lineage
from ink.mcp.wire import ID_WINDOW, MAX_MESSAGE_BYTES, BadMessage, decode, encode, find_id, size_text
from ink.tools import orphans
from ink.tools.processes import TOKEN_ENV, ProcessEntry, ProcessRegistry

if TYPE_CHECKING:
    from ink.sandbox import Confinement

INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")
READ_SIZE = 256 * 1024
STDERR_TAIL = 600  # characters of a crashed server's stderr quoted in its error
STDERR_KEPT = 16 * 1024  # bytes of its stderr kept (the most recent)
EXIT_WAIT = 2.0  # seconds to wait for a server to exit once its stdin is closed, before the registry ends it

Deliver = Callable[[dict[str, Any]], None]
Unreadable = Callable[[BadMessage], None]
Lost = Callable[[str], None]


class StdioTransport:
    def __init__(
        self,
        command: str,
        args: tuple[str, ...],
        env: Mapping[str, str],
        cwd: str,
        processes: ProcessRegistry,
        label: str,
        confinement: Confinement | None = None,
    ) -> None:
        """``confinement``: the sandbox the server runs in (its table's ``sandbox = true``), or None."""
        self._argv = (command, *args)
        self._confinement = confinement
        self._env = env
        self._cwd = cwd
        self._processes = processes
        self._label = label
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr = bytearray()  # the last STDERR_KEPT bytes of its stderr
        self._stderr_reader: asyncio.Task[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self.process: ProcessEntry | None = None

    async def open(self, deliver: Deliver, unreadable: Unreadable, lost: Lost) -> None:
        """Start the process and begin reading it. Raises ``OSError`` when it cannot be started."""
        token = ProcessRegistry.new_token()
        confined = self._confinement
        env = {**self._env, **(confined.env if confined else {}), TOKEN_ENV: token}
        with orphans.starting_child():  # until registered, a child that has ended looks like an orphan
            self._proc = proc = await asyncio.create_subprocess_exec(
                *self._argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=self._cwd,
                start_new_session=True,
                preexec_fn=lineage.leader_preexec(steps=(confined.preexec(),) if confined else ()),
            )
            self.process = self._processes.register(proc.pid, self._label, token)
        assert proc.stdout is not None and proc.stderr is not None
        self._stderr_reader = asyncio.ensure_future(self._keep_stderr(proc.stderr))
        self._reader = asyncio.ensure_future(self._read(proc, proc.stdout, deliver, unreadable, lost))

    async def _keep_stderr(self, stderr: asyncio.StreamReader) -> None:
        try:
            while chunk := await stderr.read(READ_SIZE):
                self._stderr += chunk
                del self._stderr[:-STDERR_KEPT]
        except OSError:
            pass

    async def send(self, message: Mapping[str, Any]) -> None:
        """Raises ``OSError`` (``BrokenPipeError``) when the server no longer reads."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            raise BrokenPipeError("the server's stdin is closed")
        proc.stdin.write(encode(message) + b"\n")
        await proc.stdin.drain()

    async def _read(
        self,
        proc: asyncio.subprocess.Process,
        stdout: asyncio.StreamReader,
        deliver: Deliver,
        unreadable: Unreadable,
        lost: Lost,
    ) -> None:
        lines = LineSplitter()
        try:
            while chunk := await stdout.read(READ_SIZE):
                for line in lines.feed(chunk):
                    try:
                        message = decode(line) if isinstance(line, bytes) else None
                    except BadMessage as bad:
                        line = bad
                    if isinstance(line, BadMessage):
                        unreadable(line)
                    elif message is not None:
                        deliver(message)
        except OSError as exc:
            lost(f"reading its output failed: {exc}")
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), EXIT_WAIT)
        if self._stderr_reader is not None:  # its last words, before they are quoted
            await asyncio.wait({self._stderr_reader}, timeout=EXIT_WAIT)
        code = proc.returncode
        lost("it closed its output" if code is None else f"it exited with code {code}")

    def stderr_tail(self) -> str:
        text = self._stderr.decode("utf-8", "replace")[-STDERR_TAIL:]
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        return " | ".join(lines[-2:])

    async def aclose(self) -> None:
        """Close its stdin (the MCP way to ask a stdio server to exit) and wait a little for it; what is
        left is ended by the process registry (TERM, then KILL)."""
        proc = self._proc
        if proc is not None and proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), EXIT_WAIT)
        reader = self._reader
        if reader is not None and not reader.done():
            reader.cancel()
            await asyncio.wait({reader})
        for task in (self._stderr_reader,):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait({task})


class LineSplitter:
    """Whole lines from chunks of bytes: each returned item is a line's bytes (without its end) or the
    ``BadMessage`` for a line over ``limit`` (with the id found in its head or tail). Linear: a line's
    pieces are joined once, when it ends."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._limit = limit
        self._pieces: list[bytes] = []
        self._size = 0
        self._head = b""  # of a line being skipped (over the limit), and its last bytes
        self._tail = b""
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | BadMessage]:
        found: list[bytes | BadMessage] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._add(chunk[start:end])
            line = self._finish()
            if line:
                found.append(line)
            start = end + 1
        if start < len(chunk):
            self._add(chunk[start:])
        return found

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        if self._skipping:
            self._size += len(piece)
            self._tail = (self._tail + piece)[-ID_WINDOW:]
            return
        self._pieces.append(piece)
        self._size += len(piece)
        if self._size > self._limit:
            joined = b"".join(self._pieces)
            self._head, self._tail, self._pieces, self._skipping = (
                joined[:ID_WINDOW],
                joined[-ID_WINDOW:],
                [],
                True,
            )

    def _finish(self) -> bytes | BadMessage | None:
        size, self._size = self._size, 0
        if self._skipping:
            self._skipping = False
            head, tail, self._head, self._tail = self._head, self._tail, b"", b""
            problem = f"it sent a message of {size_text(size)}, over the limit of {size_text(self._limit)}"
            found = find_id(head)
            return BadMessage(problem, found if found is not None else find_id(tail.rstrip(b"\r")))
        line, self._pieces = b"".join(self._pieces), []
        line = line.rstrip(b"\r")
        return line if line.strip() else None
