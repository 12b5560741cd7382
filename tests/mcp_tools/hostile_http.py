"""A Streamable HTTP MCP server that misbehaves on request, standard library only, in a thread.

    with HostileHttp() as url: ...

It names a session (``Mcp-Session-Id: s1``) and refuses requests without it, has no GET stream (405),
and answers each tool its own way: ``echo`` over an event stream (a progress notification first),
``not_json`` an event that is not JSON, ``no_answer`` a stream that ends without the answer, ``fail`` HTTP
500, ``expire`` 404 (the session is gone).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOLS = [{"name": n, "inputSchema": SCHEMA} for n in ("echo", "not_json", "no_answer", "fail", "expire")]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[dict[str, Any]]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._send(405, b"", "text/plain")

    def do_DELETE(self) -> None:
        self.server.deleted = True  # type: ignore[attr-defined]
        self._send(200, b"", "text/plain")

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.seen.append({"headers": dict(self.headers), "body": body})  # type: ignore[attr-defined]
        method, request_id = body.get("method"), body.get("id")
        if method == "initialize":
            version = body["params"]["protocolVersion"]
            result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "h"}}
            return self._json(
                {"jsonrpc": "2.0", "id": request_id, "result": result}, {"mcp-session-id": "s1"}
            )
        if self.headers.get("mcp-session-id") != "s1":
            return self._send(400, b"no session", "text/plain")
        if request_id is None:
            return self._send(202, b"", "text/plain")
        if method == "tools/list":
            return self._json({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
        self._call(request_id, body["params"])

    def _call(self, request_id: Any, params: dict[str, Any]) -> None:
        name = params["name"]
        if name == "fail":
            return self._send(500, b"the database is down", "text/plain")
        if name == "expire":
            return self._send(404, b"no such session", "text/plain")
        events = []
        if name == "echo":
            token = params.get("_meta", {}).get("progressToken")
            progress = {"progressToken": token, "progress": 1, "total": 2, "message": "half way"}
            events.append({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
            text = f"echo: {params['arguments'].get('text', '')}"
            events.append(
                {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}
            )
        stream = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        if name == "not_json":
            stream = b"data: this is not JSON\n\n"
        self._send(200, stream, "text/event-stream")

    def _json(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send(200, json.dumps(message).encode(), "application/json", headers)

    def _send(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


class HostileHttp:
    def __enter__(self) -> HostileHttp:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.seen = []  # type: ignore[attr-defined]
        self.server.deleted = False  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/mcp"

    @property
    def seen(self) -> list[dict[str, Any]]:
        return self.server.seen  # type: ignore[attr-defined, no-any-return]

    @property
    def deleted(self) -> bool:
        return bool(self.server.deleted)  # type: ignore[attr-defined]

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
