"""JSON-RPC 2.0 over lines: reading and writing one message, and the agent's side of the conversation
(``Peer``).

Both sides send requests: the editor asks the agent (``session/prompt``), the agent asks the editor
(``session/request_permission``). ``parse_message`` sorts a line into an incoming ``Call`` (a request, or
a notification when it has no ``id``) or a ``Reply`` to one of our requests; anything else raises
``RpcError`` carrying the ``id`` to answer with (null when none could be read).

Errors use the standard codes; ACP adds -32002 for a resource (a session) that does not exist.

``encode_message`` writes a message as one line with no unpaired surrogate escape in it: editors decode
into strict Unicode strings, and some (Rust's serde_json) reject such an escape, losing the whole message.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Mapping
from typing import Any, Protocol

import msgspec

from ink.ai.unicode import sendable_json
from ink.frontends.stdio import DuplicateKey, encode_line, load_json

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002

RequestId = str | int | None


class RpcError(Exception):
    """An error answer. ``request_id`` is set when the error arose before the request was parsed;
    ``notification`` when it was a notification, which never gets an answer (the error is logged)."""

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        request_id: RequestId = None,
        notification: bool = False,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.request_id = request_id
        self.notification = notification

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class PeerGone(Exception):
    """A request to the editor got no answer because the connection closed."""


class Call(msgspec.Struct, frozen=True):
    """A request or a notification from the editor. ``params`` is always a mapping (empty when absent)."""

    method: str
    params: Mapping[str, Any] = msgspec.field(default_factory=dict)
    id: RequestId = None
    is_notification: bool = False


class Reply(msgspec.Struct, frozen=True):
    """The editor's answer to one of our requests: ``result``, or ``error`` (code, message, data)."""

    id: RequestId
    result: Any = None
    error: Mapping[str, Any] | None = None


def encode_message(message: Mapping[str, Any]) -> bytes:
    """One message as a line, always valid UTF-8: a lone surrogate from model output becomes ``?``, and a
    float JSON cannot express (NaN, infinity, possible in a model's tool arguments) becomes null."""
    return encode_line(message, errors="replace")


def parse_message(line: bytes) -> Call | Reply:
    """Read one line. Raises ``RpcError`` (parse error, invalid request, invalid params) otherwise; a
    reply that names a key twice is a ``Reply`` with an error (``_ambiguous``)."""
    try:
        data = load_json(line)
    except DuplicateKey as exc:  # R39: a message that reads two ways is none
        return _ambiguous(exc)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: too deep
        raise RpcError(PARSE_ERROR, f"Parse error: the line is not valid JSON ({exc})") from None
    data = sendable_json(data, line)  # a "\\ud800" escape in a prompt must not poison the session
    if isinstance(data, list):
        raise RpcError(INVALID_REQUEST, "Invalid request: batches are not supported; send one message a line")
    if not isinstance(data, dict):
        raise RpcError(INVALID_REQUEST, "Invalid request: a message must be a JSON object")
    has_id = "id" in data
    request_id = data.get("id")
    if not isinstance(request_id, str | int | None) or isinstance(request_id, bool):
        kind = {float: "a fraction", bool: "a boolean", dict: "an object", list: "an array"}[type(request_id)]
        raise RpcError(
            INVALID_REQUEST, f"Invalid request: id must be a string, an integer or null, not {kind}"
        )
    if data.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', request_id=request_id)
    method = data.get("method")
    if method is None and has_id and ("result" in data or "error" in data):
        return _reply(data, request_id)
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, "Invalid request: no method", request_id=request_id)
    params = data.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: params must be an object",
            request_id=request_id,
            notification=not has_id,
        )
    return Call(method, params, request_id, is_notification=not has_id)


def _ambiguous(exc: DuplicateKey) -> Reply:
    """A message naming a key twice is refused. An answer to one of ink's requests (a permission
    question) fails that request, so it is denied at once rather than left waiting; a request of the
    editor's is answered with an error, under its id unless the id is the key named twice."""
    data = exc.lenient()
    found = data.get("id") if isinstance(data, dict) and exc.key != "id" else None
    request_id = found if isinstance(found, str | int) and not isinstance(found, bool) else None
    if isinstance(data, dict) and "method" not in data and request_id is not None:
        return Reply(request_id, error={"code": INVALID_REQUEST, "message": str(exc)})
    raise RpcError(INVALID_REQUEST, f"Invalid request: {exc}", request_id=request_id)


def _reply(data: Mapping[str, Any], request_id: RequestId) -> Reply:
    error = data.get("error")
    if error is not None and not isinstance(error, dict):
        error = {"code": INTERNAL_ERROR, "message": str(error)}
    return Reply(request_id, data.get("result"), error)


class Sink(Protocol):
    def write(self, obj: Mapping[str, Any]) -> None: ...


class Peer:
    """Our side of the connection: answers, notifications, and requests whose replies we await."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._ids = itertools.count(1)
        self._waiting: dict[RequestId, asyncio.Future[Any]] = {}
        self.closed = False

    def respond(self, request_id: RequestId, result: Any) -> None:
        self._sink.write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def fail(self, request_id: RequestId, error: RpcError) -> None:
        self._sink.write({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()})

    def notify(self, method: str, params: Mapping[str, Any]) -> None:
        self._sink.write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Mapping[str, Any]) -> Any:
        """Ask the editor and wait for its answer. Raises ``RpcError`` for an error answer, ``PeerGone``
        when the connection closes first. Cancelling stops the wait (a late answer is then ignored)."""
        if self.closed:
            raise PeerGone("the connection is closed")
        request_id = f"ink-{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self._sink.write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            return await future
        finally:
            self._waiting.pop(request_id, None)

    def receive(self, reply: Reply) -> None:
        """Route the editor's answer to the request waiting for it; unknown ids are logged, not errors."""
        future = self._waiting.get(reply.id)
        if future is None or future.done():
            log.info("ignoring an answer to no open request (id %r)", reply.id)
            return
        if reply.error is not None:
            code = reply.error.get("code", INTERNAL_ERROR)
            message = str(reply.error.get("message", "error"))
            future.set_exception(RpcError(code if isinstance(code, int) else INTERNAL_ERROR, message))
        else:
            future.set_result(reply.result)

    def close(self) -> None:
        """No more answers will come: every open request fails with ``PeerGone``."""
        self.closed = True
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(PeerGone("the connection closed"))
        self._waiting.clear()
