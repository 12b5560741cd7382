"""The fake model server: real HTTP on 127.0.0.1, OpenAI and Anthropic streaming, scripted replies.

    with FakeModelServer() as server:                     # or the ``fake_server`` pytest fixture
        server.script(Reply([text("Hi"), tool_call("read", {"path": "a.txt"})]), say("done"))
        provider = OpenAIProvider(api_key="k", base_url=server.openai_base_url)
        ...
        assert server.requests[1].tool_results() == [("call_fake1", "...")]

Each request takes the next scripted reply; when the script is empty ``responder(request)`` is asked;
when neither has one the answer is a 500 saying so (a test bug shows, it does not hang). Strict mode
(default) answers 400 to a history the real service would reject (``strict.py``), before a reply is
taken. Handlers run in threads, so in-process asyncio tests and ``ink`` subprocesses can both use it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakeserver import errors
from tests.fakeserver.contentless import contentless_events
from tests.fakeserver.log import Protocol, RecordedRequest
from tests.fakeserver.render import Item, render_anthropic, render_openai
from tests.fakeserver.render_responses import render_responses
from tests.fakeserver.script import Chatter, Disconnect, Fault, Gate, Pause, Reply, Text
from tests.fakeserver.strict import check_anthropic_history, check_openai_history
from tests.fakeserver.strict_responses import check_responses_history

Responder = Callable[[RecordedRequest], "Reply | Fault | str"]
POLL = 0.005  # how often a held stream checks its gate; EOF of the client is seen at once via select


class ScriptExhausted(Exception):
    pass


class FakeModelServer:
    """Scripted model server. ``start()``/``stop()`` or use as a context manager."""

    def __init__(self, *, strict: bool = True, api_key: str | None = None, port: int = 0) -> None:
        self.strict = strict
        self.api_key = api_key
        self.responder: Responder | None = None
        self.models: list[str] = ["fake-model"]  # what GET /v1/models reports
        self.models_status = 200  # another: GET /v1/models answers that error, as the service shapes it
        self.models_hold: threading.Event | None = None  # GET /v1/models answers once it is set
        self.model_list_requests: list[dict[str, str]] = []  # each GET /v1/models's headers
        self.props: dict[str, Any] | None = None  # what GET /props reports (llama.cpp); None: 404
        self.requests: list[RecordedRequest] = []
        self._port = port
        self._script: deque[Reply] = deque()
        self.issued: dict[str, str] = {}  # Responses: reasoning item id -> the encrypted content handed out
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------------
    def start(self) -> FakeModelServer:
        httpd = _QuietHTTPServer(("127.0.0.1", self._port), _Handler)
        httpd.daemon_threads = True
        httpd.fake = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="fake-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; streams held at a gate are cut so their threads end."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL as OpenAI clients expect it (``OPENAI_BASE_URL``), ending in ``/v1``."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL as Anthropic clients expect it (``ANTHROPIC_BASE_URL``), without ``/v1``."""
        return self.url

    def base_url(self, protocol: str) -> str:
        return self.anthropic_base_url if protocol == "anthropic" else self.openai_base_url

    # -- scripting -----------------------------------------------------------------------------------
    def script(self, *replies: Reply | Fault | str) -> None:
        """Queue replies, consumed one per request in order. A ``Fault`` is a reply that only fails;
        a ``str`` is a one-chunk text reply."""
        with self._cond:
            self._script.extend(as_reply(r) for r in replies)

    def clear_script(self) -> int:
        """Drop the replies not yet consumed (a test that aborted a run early); returns how many."""
        with self._cond:
            dropped = len(self._script)
            self._script.clear()
            return dropped

    @property
    def pending(self) -> int:
        """Scripted replies not yet consumed."""
        with self._cond:
            return len(self._script)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._cond:
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return as_reply(self.responder(request))
        raise ScriptExhausted(
            f"fake server: script exhausted: request {request.index} ({request.path}) has no scripted "
            "reply and no responder is set"
        )

    # -- the log -------------------------------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._cond:
            request.index = len(self.requests)
            self.requests.append(request)
            self._cond.notify_all()

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until at least ``n`` requests arrived; returns the first ``n``. Raises ``TimeoutError``."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= n, timeout):
                raise TimeoutError(f"fake server got {len(self.requests)} requests, expected {n}")
            return self.requests[:n]

    async def wait_for_requests_async(self, n: int, timeout: float = 10.0) -> list[RecordedRequest]:
        return await asyncio.to_thread(self.wait_for_requests, n, timeout)

    @property
    def last(self) -> RecordedRequest:
        with self._cond:
            return self.requests[-1]

    def user_texts(self) -> list[list[str]]:
        """The user-message texts of each request, in request order."""
        with self._cond:
            return [r.user_texts() for r in self.requests]

    def next_id(self) -> int:
        return next(self._ids)

    # -- serving (handler threads) -------------------------------------------------------------------
    def handle(self, h: _Handler) -> None:
        request = self._read_request(h)
        if request is None:
            return
        self._record(request)
        refusal = self._refusal(request)
        if refusal is not None:
            status, message = refusal
            self._send_error(h, request, status, message)
            return
        try:
            reply = self._next_reply(request)
        except Exception as exc:  # a broken responder is a test bug: show it as a 500
            self._send_error(
                h,
                request,
                500,
                str(exc) if isinstance(exc, ScriptExhausted) else f"fake server: responder raised {exc!r}",
            )
            return
        fault = reply.fault
        if fault is not None and fault.kind in ("http", "context_overflow"):
            self._send_fault(h, request, fault)
            return
        if fault is not None and fault.kind in ("hang", "keep_alive", "empty"):
            _Stream(self, h, request, 0.0).silent(fault)
            return
        if request.protocol == "responses":
            rendered = render_responses(reply, request.body, self.next_id, self.issued)
        else:
            render = render_anthropic if request.protocol == "anthropic" else render_openai
            rendered = render(reply, request.body, self.next_id)
        items = with_fault(rendered, fault)
        _Stream(self, h, request, reply.chunk_delay).run(items)

    def handle_get(self, h: _Handler) -> None:
        """The read-only endpoints a client may ask before chatting: ``/v1/models`` (as OpenAI-compatible
        servers answer it) and llama.cpp's ``/props``. Not recorded in ``requests``: those are the model
        calls. Any other GET is handled (and recorded) as ``handle`` does: a 404."""
        path = h.path.split("?", 1)[0]
        if path.endswith("/models"):
            self._models(h)
            return
        if path == "/props":
            body = self.props if self.props is not None else {"error": {"code": 404, "message": "Not Found"}}
        else:
            self.handle(h)
            return
        self._answer(h, 200 if self.props is not None else 404, json.dumps(body).encode())

    def _models(self, h: _Handler) -> None:
        """``GET /v1/models`` as OpenAI answers it, or as Anthropic does when asked with its headers;
        with ``api_key``, a request without that key gets the service's 401."""
        headers = {k.lower(): v for k, v in h.headers.items()}
        self.model_list_requests.append(headers)
        anthropic = "anthropic-version" in headers
        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        got = headers.get("x-api-key") if anthropic else bearer
        if self.models_hold is not None:
            self.models_hold.wait()
        status = 401 if self.api_key is not None and got != self.api_key else self.models_status
        if status != 200:
            message = "invalid x-api-key" if status == 401 and anthropic else errors.default_message(status)
            if status == 401 and not anthropic:
                message = f"Incorrect API key provided: {got or '(none)'}."
            shape = "anthropic" if anthropic else "openai"
            self._answer(h, status, errors.error_body(shape, status, message))
            return
        if anthropic:
            made = "2025-01-01T00:00:00Z"
            data = [{"type": "model", "id": m, "display_name": m, "created_at": made} for m in self.models]
            ends = {"first_id": self.models[0], "last_id": self.models[-1]} if self.models else {}
            body: Any = {"data": data, "has_more": False, **ends}
        else:
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
            body = {"object": "list", "data": data}
        self._answer(h, 200, json.dumps(body).encode())

    def _answer(self, h: _Handler, status: int, raw: bytes) -> None:
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    def _read_request(self, h: _Handler) -> RecordedRequest | None:
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length) if length else b""
        path = h.path.split("?", 1)[0]
        protocol: Protocol = (
            "openai"
            if path.endswith("/chat/completions")
            else "anthropic"
            if path.endswith("/messages")
            else "responses"
            if path.endswith("/responses")
            else "unknown"
        )
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in h.headers.items()}
        peer = (str(h.client_address[0]), int(h.client_address[1]))
        return RecordedRequest(-1, h.command, path, headers, body, raw, protocol, peer)

    def _refusal(self, r: RecordedRequest) -> tuple[int, str] | None:
        """The error answer a real service would give before streaming anything, if any."""
        if r.protocol == "unknown" or r.method != "POST":
            return 404, f"fake server: no such endpoint {r.method} {r.path}"
        if self.api_key is not None:
            got = (
                r.headers.get("x-api-key")
                if r.protocol == "anthropic"
                else r.headers.get("authorization", "").removeprefix("Bearer ")
            )
            if got != self.api_key:
                return 401, (
                    "invalid x-api-key"
                    if r.protocol == "anthropic"
                    else f"Incorrect API key provided: {got or '(none)'}."
                )
        if not isinstance(r.body, dict):
            return 400, "We could not parse the JSON body of your request."
        if self.strict:
            if r.protocol == "responses":
                message = check_responses_history(r.body, self.issued)
            else:
                check = check_anthropic_history if r.protocol == "anthropic" else check_openai_history
                message = check(r.body)
            if message is not None:
                return 400, message
        if r.body.get("stream") is not True:
            return 400, "fake server: only streaming requests (stream: true) are supported"
        return None

    def _send_fault(self, h: _Handler, r: RecordedRequest, fault: Fault) -> None:
        if fault.kind == "context_overflow":
            if r.protocol == "anthropic":
                self._send_error(h, r, 400, errors.ANTHROPIC_OVERFLOW)
            else:
                self._send_error(h, r, 400, errors.OPENAI_OVERFLOW, code="context_length_exceeded")
            return
        message = fault.message or errors.default_message(fault.status)
        extra = {"retry-after": _seconds(fault.retry_after)} if fault.retry_after is not None else {}
        self._send_error(h, r, fault.status, message, fault.error_type, fault.code, extra)

    def _send_error(
        self,
        h: _Handler,
        r: RecordedRequest,
        status: int,
        message: str,
        error_type: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if status == 401 and code is None and r.protocol == "openai":
            code = "invalid_api_key"
        body = errors.error_body(r.protocol, status, message, error_type, code)
        r.status, r.error_message = status, message
        try:
            h.send_response(status)
            h.send_header("content-type", "application/json")
            h.send_header("content-length", str(len(body)))
            for name, value in (headers or {}).items():
                h.send_header(name, value)
            h.end_headers()
            h.wfile.write(body)
            r.finish("error")
        except OSError:
            h.close_connection = True
            r.finish("client_left")


def as_reply(value: Reply | Fault | str) -> Reply:
    if isinstance(value, Fault):
        return Reply(fault=value)
    if isinstance(value, str):
        return Reply([Text(value)])
    return value


def with_fault(items: list[Item], fault: Fault | None) -> list[Item]:
    """Insert a mid-stream fault after ``fault.after`` SSE chunks."""
    if fault is None or fault.kind not in ("disconnect", "end", "malformed", "stall"):
        return items
    action: Item
    if fault.kind in ("disconnect", "end"):
        action = Disconnect(clean=fault.kind == "end")
    elif fault.kind == "malformed":
        action = f"data: {fault.raw}\n\n".encode()
    else:
        assert fault.gate is not None
        action = fault.gate
    seen, at = 0, len(items)
    for i, item in enumerate(items):
        if seen == fault.after:
            at = i
            break
        seen += isinstance(item, bytes)
    return [*items[:at], action, *items[at:]]


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class _Stream:
    """Writes one rendered reply as a chunked SSE response, honouring gates, pauses and cuts."""

    def __init__(self, server: FakeModelServer, h: _Handler, request: RecordedRequest, delay: float) -> None:
        self.server, self.h, self.request, self.delay = server, h, request, delay

    def run(self, items: list[Item]) -> None:
        self._headers()
        self._end(self._write_all(items))

    def silent(self, fault: Fault) -> None:
        """The faults that say nothing: ``hang`` (no headers), ``keep_alive`` (only keep-alives),
        ``empty`` (a 200 whose body ends at once)."""
        if fault.kind == "hang":
            held = self._hold(None, fault.seconds)
            self._end("client_left" if held == "client_left" else "disconnected")
            return
        self._headers()
        if fault.kind == "empty":
            self._write(b"0\r\n\r\n")
            self._end("completed")
            return
        self._end(self._keep_alive(fault))

    def _keep_alive(self, fault: Fault) -> str:
        pieces = [b": keep-alive\n\n"]
        if self.request.protocol == "anthropic":
            pieces.append(b'event: ping\ndata: {"type": "ping"}\n\n')
        return self._repeat(itertools.cycle(pieces), fault.interval, fault.seconds)

    def _chatter(self, chatter: Chatter) -> str:
        return self._repeat(contentless_events(self.request.protocol), chatter.interval, chatter.seconds)

    def _repeat(self, events: Iterator[bytes], interval: float, seconds: float) -> str:
        """Write ``events`` (without end), one every ``interval``, until the client leaves or ``seconds``
        pass (then cut)."""
        deadline = time.monotonic() + seconds
        for event in events:
            if not self._write(f"{len(event):x}\r\n".encode() + event + b"\r\n"):
                return "client_left"
            self.request.chunks_sent += 1
            if time.monotonic() > deadline:
                return "disconnected"
            if (held := self._hold(None, interval)) != "go":
                return held
        return "disconnected"  # not reached: the events never end

    def _headers(self) -> None:
        h, r = self.h, self.request
        r.status = 200
        h.send_response(200)
        h.send_header("content-type", "text/event-stream; charset=utf-8")
        h.send_header("cache-control", "no-cache")
        h.send_header("transfer-encoding", "chunked")
        h.send_header("request-id" if r.protocol == "anthropic" else "x-request-id", f"req_fake{r.index}")
        h.end_headers()

    def _end(self, outcome: str) -> None:
        h, r = self.h, self.request
        if outcome != "completed":
            h.close_connection = True
            if outcome in ("disconnected", "gate_timeout", "stopped"):
                _cut(h.connection)
        r.finish("disconnected" if outcome == "stopped" else outcome)  # type: ignore[arg-type]

    def _write_all(self, items: list[Item]) -> str:
        for item in items:
            if isinstance(item, bytes):
                if self.delay and self.request.chunks_sent and (held := self._hold(None, self.delay)) != "go":
                    return held
                if not self._write(f"{len(item):x}\r\n".encode() + item + b"\r\n"):
                    return "client_left"
                self.request.chunks_sent += 1
            elif isinstance(item, Gate):
                item.reached.set()
                if (held := self._hold(item.opened, item.timeout)) != "go":
                    return held
            elif isinstance(item, Pause):
                if (held := self._hold(None, item.seconds)) != "go":
                    return held
            elif isinstance(item, Chatter):
                return self._chatter(item)
            elif isinstance(item, Disconnect):
                if item.clean:
                    self._write(b"0\r\n\r\n")
                return "disconnected"
        # Every event is out: the reply is complete even if the client closes before the chunked
        # terminator (clients may stop reading at [DONE] / message_stop).
        self._write(b"0\r\n\r\n")
        return "completed"

    def _write(self, data: bytes) -> bool:
        try:
            self.h.wfile.write(data)
            self.h.wfile.flush()
            return True
        except OSError:
            return False

    def _hold(self, until: threading.Event | None, seconds: float) -> str:
        """Wait for ``until`` (or ``seconds`` when None) while watching for the client to leave."""
        sock = self.h.connection
        deadline = time.monotonic() + seconds
        while True:
            if until is not None and until.is_set():
                return "go"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "go" if until is None else "gate_timeout"
            if self.server._stopping.is_set():
                return "stopped"
            readable, _, _ = select.select([sock], [], [], min(remaining, POLL))
            if readable:
                try:
                    data = sock.recv(1, socket.MSG_PEEK)
                except OSError:
                    return "client_left"
                if not data:
                    return "client_left"
                time.sleep(POLL)  # the client sent bytes mid-stream (pipelining); not ours to read


def _cut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _QuietHTTPServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that drops its keep-alive connection is normal; anything else is printed."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120  # an idle keep-alive connection ends eventually

    def do_POST(self) -> None:
        self.server.fake.handle(self)  # type: ignore[attr-defined]

    def do_GET(self) -> None:
        self.server.fake.handle_get(self)  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        pass
