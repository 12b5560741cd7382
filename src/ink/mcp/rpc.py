"""The JSON-RPC conversation with one MCP server, whatever carries it (``stdio``, ``http``).

ink's requests wait for their answer (``request``); the server's requests (``roots/list``,
``elicitation/create``, ``ping``) are answered by the handler given, and its notifications (progress,
``list_changed``, log messages) go to the notification handler. The transport hands every message it
reads to ``receive``, every unreadable one to ``receive_bad``, and says ``close`` when the connection is
gone: every open request then fails at once with that reason, so nothing waits on a dead server.

Cancellation is MCP's: a request whose waiting task is cancelled (the user's interrupt) sends
``notifications/cancelled`` for it. A request may carry a progress callback: the request's own id is its
``progressToken``, and each progress notification for it restarts its timeout, so a long call that says
it is alive is not cut (the MCP specification's advice), while a silent one fails after ``timeout``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from ink.agent.tasks import Tasks
from ink.mcp.wire import BadMessage, RequestId

log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_TIMEOUT = -32001

Send = Callable[[dict[str, Any]], Awaitable[None]]
RequestHandler = Callable[[str, Mapping[str, Any]], Awaitable[Any]]
NotificationHandler = Callable[[str, Mapping[str, Any]], None]
Progress = Callable[[float, float | None, str | None], None]


class RemoteError(Exception):
    """An error answer (``code``, ``message``); also what a request handler raises to answer with one."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ConnectionLost(Exception):
    """The server can no longer answer (it exited, its connection broke, it sent what cannot be read)."""


class SendFailed(Exception):
    """This message could not be delivered (an HTTP error status, the server unreachable this time): the
    request fails with the reason; the connection itself may still be good."""


class RequestTimeout(Exception):
    """No answer, and no progress, within the request's timeout."""


class _Open:
    __slots__ = ("future", "method", "progress", "timeout", "timer")

    def __init__(
        self, method: str, future: asyncio.Future[Any], progress: Progress | None, timeout: float | None
    ) -> None:
        self.method = method
        self.future = future
        self.progress = progress
        self.timeout = timeout
        self.timer: asyncio.Timeout | None = None

    def restart_timer(self) -> None:
        if self.timer is not None and self.timeout is not None:
            self.timer.reschedule(asyncio.get_running_loop().time() + self.timeout)


class RpcSession:
    def __init__(
        self,
        send: Send,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        tasks: Tasks,
    ) -> None:
        self._send = send
        self._on_request = on_request
        self._on_notification = on_notification
        self._tasks = tasks
        self._ids = itertools.count(1)
        self._open: dict[RequestId, _Open] = {}
        self._answering: dict[Any, asyncio.Task[None]] = {}  # the server's requests being answered
        self.closed: str | None = None  # why, once closed

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Progress | None = None,
    ) -> Any:
        """Send a request and wait for its result. Raises ``RemoteError``, ``ConnectionLost`` or
        ``RequestTimeout``; cancelling the caller sends ``notifications/cancelled`` for it."""
        if self.closed is not None:
            raise ConnectionLost(self.closed)
        request_id = next(self._ids)
        body = dict(params or {})
        if progress is not None:
            body["_meta"] = {**body.get("_meta", {}), "progressToken": request_id}
        entry = _Open(method, asyncio.get_running_loop().create_future(), progress, timeout)
        self._open[request_id] = entry
        try:
            async with asyncio.timeout(None) as timer:  # sending counts: a server may stop reading
                entry.timer = timer
                entry.restart_timer()
                await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": body})
                return await entry.future
        except TimeoutError:
            self._cancel(request_id, f"no answer within {timeout:g} s")
            raise RequestTimeout(f"no answer and no progress within {timeout:g} s") from None
        except asyncio.CancelledError:
            if entry.future.cancelled() or not entry.future.done():  # no answer came: cancel on the server
                self._cancel(request_id, "the user interrupted the call")
            raise
        finally:
            self._open.pop(request_id, None)
            entry.timer = None

    def _cancel(self, request_id: RequestId, reason: str) -> None:
        if self.closed is None and method_cancellable(self._open.get(request_id)):
            params = {"requestId": request_id, "reason": reason}
            self._spawn(self.notify("notifications/cancelled", params), "MCP cancellation")

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        if self.closed is None:
            message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
            if params is not None:
                message["params"] = dict(params)
            await self._send(message)

    def receive(self, message: Mapping[str, Any]) -> None:
        """One message the transport read."""
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            params = params if isinstance(params, Mapping) else {}
            if "id" in message:
                request_id = message.get("id")
                work = self._answer(request_id, method, params)
                task = self._tasks.spawn(_quietly(work), f"MCP request {method}")
                if isinstance(request_id, int | str):
                    self._answering[request_id] = task
                    task.add_done_callback(lambda _t: self._answering.pop(request_id, None))
            else:
                self._notified(method, params)
            return
        entry = self._open.get(message.get("id"))  # type: ignore[arg-type]
        if entry is None or entry.future.done():
            log.debug("MCP answer to no open request: %r", message.get("id"))
            return
        error = message.get("error")
        if isinstance(error, Mapping):
            code = error.get("code")
            text = str(error.get("message") or "error")
            entry.future.set_exception(RemoteError(code if isinstance(code, int) else INTERNAL_ERROR, text))
        elif "result" in message:
            entry.future.set_result(message["result"])
        else:
            entry.future.set_exception(RemoteError(INTERNAL_ERROR, "an answer with neither result nor error"))

    def receive_bad(self, problem: BadMessage) -> bool:
        """A message that could not be read. When it names an open request, that request fails with the
        problem and True is returned; otherwise nothing is known to have failed (the transport decides)."""
        entry = self._open.get(problem.request_id) if problem.request_id is not None else None
        if entry is None or entry.future.done():
            return False
        entry.future.set_exception(RemoteError(INTERNAL_ERROR, problem.problem))
        return True

    def close(self, reason: str) -> None:
        """No more answers will come: every open request fails with ``ConnectionLost(reason)``."""
        if self.closed is None:
            self.closed = reason
        for entry in self._open.values():
            if not entry.future.done():
                entry.future.set_exception(ConnectionLost(reason))

    def _notified(self, method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/cancelled":  # the server withdraws a request of its own
            withdrawn = self._answering.get(params.get("requestId"))
            if withdrawn is not None:
                withdrawn.cancel()
            return
        if method == "notifications/progress":
            entry = self._open.get(params.get("progressToken"))  # type: ignore[arg-type]
            if entry is not None and entry.progress is not None and not entry.future.done():
                entry.restart_timer()
                _progress(entry.progress, params)
            return
        self._on_notification(method, params)

    async def _answer(self, request_id: Any, method: str, params: Mapping[str, Any]) -> None:
        if method == "ping":
            response: dict[str, Any] = {"result": {}}
        else:
            try:
                response = {"result": await self._on_request(method, params)}
            except RemoteError as exc:
                response = {"error": {"code": exc.code, "message": exc.message}}
            except Exception as exc:  # a bug of ink's must still answer the server
                log.exception("answering the MCP server's %s failed", method)
                response = {"error": {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}}
        if self.closed is None:
            await self._send({"jsonrpc": "2.0", "id": request_id, **response})

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        self._tasks.spawn(_quietly(work), name)


def method_cancellable(entry: _Open | None) -> bool:
    """MCP forbids cancelling ``initialize``."""
    return entry is not None and entry.method != "initialize"


def _progress(callback: Progress, params: Mapping[str, Any]) -> None:
    done, total, message = params.get("progress"), params.get("total"), params.get("message")
    if not isinstance(done, int | float) or isinstance(done, bool):
        return
    total = total if isinstance(total, int | float) and not isinstance(total, bool) else None
    callback(float(done), total, message if isinstance(message, str) else None)


async def _quietly(work: Coroutine[Any, Any, None]) -> None:
    """Background work toward a server that may be gone: its failure is logged, never raised."""
    try:
        await work
    except (ConnectionLost, SendFailed, OSError) as exc:
        log.debug("MCP background send failed: %s", exc)
