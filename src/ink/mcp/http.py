"""The Streamable HTTP transport (MCP 2025-03-26 and later) on ink's own HTTP client (``ink.ai.http1``).

Every message ink sends is one POST to the server's URL. A notification or a response is answered 202;
a request is answered with its JSON-RPC answer, either as one JSON body or as an event stream that may
carry the server's own requests and notifications before the answer. The server may name a session
(``Mcp-Session-Id``) in its answer to ``initialize``; it goes with every later message, with the
negotiated ``MCP-Protocol-Version``. A GET opens the stream on which the server sends what belongs to no
request (``list_changed``, its requests); a server that offers none answers 405. Closing sends DELETE.

Every body is bounded like a stdio line (``MAX_MESSAGE_BYTES``); an HTTP error fails the request it
carried, with the status and the start of the server's text; 404 once a session exists means the server
ended the session, and the server is then lost. Not supported: resuming a broken stream
(``Last-Event-ID``), OAuth (a token goes in ``headers``), the older HTTP+SSE transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from contextlib import aclosing
from typing import Any

from ink.agent.tasks import Tasks
from ink.ai.http1 import HttpClient, HttpError, Response
from ink.ai.printable import printable
from ink.ai.sse import LineTooLong, SseParser
from ink.mcp.rpc import ConnectionLost, SendFailed
from ink.mcp.stdio import Deliver, Lost, Unreadable
from ink.mcp.wire import MAX_MESSAGE_BYTES, BadMessage, decode, encode

log = logging.getLogger(__name__)

ERROR_BODY = 2048  # bytes of an error answer quoted
GET_RETRIES = 3  # the server-message stream is opened again this many times in a row without an event
CLOSE_BOUND = 2.0  # seconds the DELETE that ends the session may take


class HttpTransport:
    def __init__(self, url: str, headers: Mapping[str, str], env: Mapping[str, str]) -> None:
        self._url = url
        self._headers = dict(headers)
        self._client = HttpClient(env=env)
        self._tasks = Tasks()
        self._session: str | None = None
        self.protocol_version: str | None = None
        self._deliver: Deliver | None = None
        self._unreadable: Unreadable | None = None
        self._lost: Lost | None = None
        self._listening = False

    async def open(self, deliver: Deliver, unreadable: Unreadable, lost: Lost) -> None:
        self._deliver, self._unreadable, self._lost = deliver, unreadable, lost

    def _headers_for(self, accept: str) -> dict[str, str]:
        headers = {**self._headers, "accept": accept}
        if self._session is not None:
            headers["mcp-session-id"] = self._session
        if self.protocol_version is not None:
            headers["mcp-protocol-version"] = self.protocol_version
        return headers

    async def send(self, message: Mapping[str, Any]) -> None:
        """POST one message. A request's answer is delivered when it arrives (a stream is read in the
        background). Raises ``SendFailed`` (with the reason) when the message was not accepted, and
        ``ConnectionLost`` when the server ended the session."""
        headers = self._headers_for("application/json, text/event-stream")
        headers["content-type"] = "application/json"
        try:
            response = await self._client.send("POST", self._url, headers=headers, content=encode(message))
        except HttpError as exc:
            raise SendFailed(f"cannot reach {self._url}: {exc}") from None
        request_id = message.get("id") if "method" in message else None
        try:
            await self._accepted(response, message)
        except BaseException:
            response.close()
            raise
        if request_id is None:
            response.close()
        elif "text/event-stream" in (response.headers.get("content-type") or ""):
            self._tasks.spawn(self._read_stream(response, request_id), "MCP HTTP answer stream")
        else:
            await self._read_json(response, request_id)

    async def _accepted(self, response: Response, message: Mapping[str, Any]) -> None:
        """Checks the status; remembers the session a server names in its answer to ``initialize``."""
        if response.status == 404 and self._session is not None:
            self._lose("the server ended the session (HTTP 404)")
            raise ConnectionLost("the server ended the session (HTTP 404)")
        if response.status >= 400:
            body = (await response.read(ERROR_BODY)).decode("utf-8", "replace").strip()
            said = f": {printable(body[:300])}" if body else ""
            raise SendFailed(f"the server answered HTTP {response.status} {response.reason}{said}")
        if message.get("method") == "initialize":
            self._session = response.headers.get("mcp-session-id") or None

    async def _read_json(self, response: Response, request_id: Any) -> None:
        try:
            body = await response.read(MAX_MESSAGE_BYTES + 1)
        except HttpError as exc:
            raise SendFailed(f"the answer broke off: {exc}") from None
        finally:
            response.close()
        if len(body) > MAX_MESSAGE_BYTES:
            self._bad(BadMessage("it sent an answer over the limit of 64 MiB", request_id))
        elif not body.strip() or not self._take(body, request_id):
            self._bad(BadMessage("the server's answer was empty or answered another request", request_id))

    async def _read_stream(self, response: Response, request_id: Any) -> None:
        """An event stream of messages; if it ends before the answer to ``request_id``, that request
        fails (a request nobody answers would otherwise wait for its timeout)."""
        try:
            if await self._events(response, request_id):
                return
            problem = "the server ended its event stream without answering"
        except (HttpError, LineTooLong) as exc:
            problem = f"its event stream broke off: {exc}"
        self._bad(BadMessage(problem, request_id))

    async def _events(self, response: Response, request_id: Any = None) -> bool:
        """Deliver the messages of an event stream; whether the answer to ``request_id`` was among them
        (for the server's own stream: whether anything came)."""
        parser = SseParser()
        answered = False
        try:
            async with aclosing(response.aiter_bytes()) as body:
                async for chunk in body:
                    for event in parser.feed(chunk):
                        if event.event == "message" and event.data.strip():
                            answered |= self._take(event.data.encode("utf-8"), request_id)
        finally:
            response.close()
        return answered

    def _take(self, data: bytes, request_id: Any) -> bool:
        """Deliver one message; whether it answered ``request_id`` (a message, when that is None)."""
        try:
            message = decode(data)
        except BadMessage as bad:
            if bad.request_id is None:  # in the stream of a request: that request fails
                bad.request_id = request_id
            self._bad(bad)
            return bool(bad.request_id == request_id)
        if self._deliver is not None:
            self._deliver(message)
        return request_id is None or ("method" not in message and bool(message.get("id") == request_id))

    def _bad(self, bad: BadMessage) -> None:
        if self._unreadable is not None:
            self._unreadable(bad)

    def _lose(self, reason: str) -> None:
        if self._lost is not None:
            self._lost(reason)

    def listen(self) -> None:
        """Open the stream of messages that belong to no request (once the session is initialized)."""
        if not self._listening:
            self._listening = True
            self._tasks.spawn(self._listen(), "MCP HTTP server stream")

    async def _listen(self) -> None:
        failures = 0
        while failures < GET_RETRIES:
            try:
                response = await self._client.send(
                    "GET", self._url, headers=self._headers_for("text/event-stream")
                )
            except HttpError as exc:
                log.debug("MCP GET stream of %s: %s", self._url, exc)
                failures += 1
                await asyncio.sleep(failures)
                continue
            if response.status >= 400 or "text/event-stream" not in (
                response.headers.get("content-type") or ""
            ):
                response.close()
                return  # 405: the server sends nothing outside requests
            try:
                seen = await self._events(response)
            except (HttpError, LineTooLong) as exc:
                log.debug("MCP GET stream of %s broke: %s", self._url, exc)
                seen = False
            failures = 0 if seen else failures + 1
            await asyncio.sleep(0.5 * failures)

    async def aclose(self) -> None:
        await self._tasks.aclose(CLOSE_BOUND)
        if self._session is not None:
            with contextlib.suppress(HttpError, TimeoutError, OSError):
                async with asyncio.timeout(CLOSE_BOUND):
                    response = await self._client.send("DELETE", self._url, headers=self._headers_for("*/*"))
                    response.close()
        await self._client.aclose()

    def stderr_tail(self) -> str:
        return ""

    @property
    def process(self) -> None:
        return None
