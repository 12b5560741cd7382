"""Writing protocol lines to stdout: in order, never blocking the event loop, batched per loop turn.

``claim_stdout`` keeps stdout for the protocol alone before serving: a private duplicate for the lines,
and descriptor 1 pointed at stderr, so a stray ``print`` (ours, a library's, a child's) cannot corrupt it.

``LineWriter.write(obj)`` encodes the line at once and appends it to a batch; the batch is handed to a
writer thread at the end of the current event-loop turn (one ``os.write`` for everything a turn produced,
not one per line). The thread does the blocking writes, so a client that reads slowly delays only the
output, never the run: lines wait in memory, in order, until the client reads them.

A client that closes its end (EPIPE) is reported once through ``on_closed``; later lines are dropped.
``aclose`` writes everything still pending and stops the thread. ``flush_now`` is for the forced exit:
it lets the thread write what is pending and waits for it a bounded time (blocking the loop: it is the
last thing the process does).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import queue
import select
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

Encode = Callable[[Mapping[str, Any]], bytes]


def claim_stdout(out_fd: int = 1) -> int:
    """A private duplicate of ``out_fd`` for the protocol (not inherited by child processes); ``out_fd``
    itself then points at stderr (at ``/dev/null`` when that fails)."""
    sys.stdout.flush()
    protocol_fd = os.dup(out_fd)
    try:
        os.dup2(2, out_fd)
    except OSError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out_fd)
        os.close(devnull)
    return protocol_fd


def _not_json(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _compact_encoder() -> Callable[[object], str]:
    """``json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)``, with the C
    encoder made once instead of once per call (a line per streamed chunk: ~1.2 -> ~0.5 us)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
    encoder = make(None, _not_json, json.encoder.encode_basestring, None, ":", ",", False, False, False)
    return lambda obj: "".join(encoder(obj, 0))


_encode = _compact_encoder()
_encode_string: Callable[[str], str] = getattr(json.encoder, "c_encode_basestring", None) or (
    json.encoder.py_encode_basestring
)


def encode_line(obj: Mapping[str, Any], errors: str = "backslashreplace") -> bytes:
    """One compact JSON line, always valid UTF-8. ``errors`` is the codec's handler for lone surrogates
    (from ``\\ud800`` escapes in model output): ``backslashreplace`` writes them as the same JSON escapes
    again, so the line parses to the original string; ``replace`` writes ``?``. A float that JSON cannot
    express (NaN, infinity) is written as null. Raises ``TypeError`` for a value JSON has no form for."""
    try:
        text = _encode(obj)
    except ValueError:
        text = _encode(_finite(obj))
    return (text + "\n").encode("utf-8", errors)


def text_line(text: str, kind: str) -> bytes:
    """``encode_line({"text": text, "type": kind})``, byte for byte, without building the object: the
    line of each streamed chunk (``kind`` is a plain name, written as it is)."""
    return ('{"text":' + _encode_string(text) + ',"type":"' + kind + '"}\n').encode(
        "utf-8", "backslashreplace"
    )


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class LineWriter:
    """Writes lines to ``fd`` from a thread. Create it with the event loop running and call ``write``
    from the loop's thread; ``on_closed`` is called once, on the loop, when the reader has gone."""

    def __init__(
        self, fd: int, *, encode: Encode = encode_line, on_closed: Callable[[], None] | None = None
    ) -> None:
        self._fd = fd
        self._encode = encode
        self._on_closed = on_closed
        self._loop = asyncio.get_running_loop()
        self._batch: list[bytes] = []
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.closed = False
        self._thread = threading.Thread(target=self._run, name="ink-stdout", daemon=True)
        self._thread.start()

    def write(self, obj: Mapping[str, Any]) -> None:
        """Queue one line. Never blocks; lines keep the order of the calls; once the reader has gone they
        are dropped. Raises ``TypeError`` (nothing queued) for an object ``encode`` cannot write."""
        if self.closed:
            return
        self.write_line(self._encode(obj))

    def write_line(self, line: bytes) -> None:
        """Queue one line already encoded (ending in a newline), as ``write`` does."""
        if self.closed:
            return
        if not self._batch:
            self._loop.call_soon(self._hand_over)
        self._batch.append(line)

    def _hand_over(self) -> None:
        if self._batch:
            data = b"".join(self._batch)
            self._batch.clear()
            self._queue.put(data)

    async def aclose(self, timeout: float | None = None) -> None:
        """Write everything queued, then stop the thread. Waits as long as the client takes to read, or at
        most ``timeout`` seconds: what is still unwritten then is left to the daemon thread."""
        self._hand_over()
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join, timeout)

    def flush_now(self, timeout: float = 0.5) -> None:
        """Before a forced exit: let the thread write what is pending, waiting at most ``timeout`` s."""
        self._hand_over()
        self._queue.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            data = self._queue.get()
            if data is None:
                return
            chunks = [data]
            stop = False
            while True:  # everything that piled up while the last write went on: one write
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                chunks.append(more)
            self._write_all(b"".join(chunks))
            if stop:
                return

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self.closed:
            try:
                view = view[os.write(self._fd, view) :]
            except BlockingIOError:  # someone made a description we share with them non-blocking
                select.select([], [self._fd], [], 1.0)
            except OSError:  # EPIPE: the client is gone
                self._gone()

    def _gone(self) -> None:
        self.closed = True
        if self._on_closed is not None:
            try:
                self._loop.call_soon_threadsafe(self._on_closed)
            except RuntimeError:  # the loop is already closed
                pass
