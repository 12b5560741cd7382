"""A small ACP client (the editor's side) for ``ink acp`` as a real subprocess.

    with AcpClient.start(args, env, cwd) as ink:
        ink.ok("initialize", protocolVersion=1)
        session = ink.ok("session/new", cwd=str(project), mcpServers=[])["sessionId"]
        request_id = ink.send("session/prompt", sessionId=session, prompt=[{"type": "text", "text": "hi"}])
        answer = ink.wait_response(request_id)

Reading, waiting and the process are ``JsonLinesClient``'s (tests/jsonl_client.py): every stdout line must
be a JSON-RPC 2.0 object (a message).
"""

from __future__ import annotations

from typing import Any

from tests.jsonl_client import TIMEOUT, JsonLinesClient

Message = dict[str, Any]


class AcpClient(JsonLinesClient):
    MODE = ("acp",)

    def accepts(self, parsed: object) -> bool:
        return isinstance(parsed, dict) and parsed.get("jsonrpc") == "2.0"

    def summary(self, line: Message) -> object:
        return line.get("method") or f"response {line.get('id')}"

    # -- reading -----------------------------------------------------------------------------------

    def wait_response(self, request_id: Any, timeout: float = TIMEOUT) -> Message:
        return self.wait_response_at(request_id, timeout)[1]

    def wait_response_at(self, request_id: Any, timeout: float = TIMEOUT) -> tuple[int, Message]:
        return self.wait_line(lambda m: "method" not in m and m.get("id") == request_id, timeout=timeout)

    def wait_update(self, kind: str, *, after: int = 0, timeout: float = TIMEOUT, **fields: Any) -> Message:
        """The next ``session/update`` whose update has ``sessionUpdate == kind`` and ``fields``."""

        def match(m: Message) -> bool:
            if m.get("method") != "session/update":
                return False
            update = m["params"]["update"]
            return update.get("sessionUpdate") == kind and all(update.get(k) == v for k, v in fields.items())

        return self.wait_line(match, after=after, timeout=timeout)[1]["params"]["update"]

    def wait_request(self, method: str, *, after: int = 0, timeout: float = TIMEOUT) -> Message:
        """A request ink sends to us (it has an id and a method)."""
        return self.wait_line(
            lambda m: m.get("method") == method and "id" in m, after=after, timeout=timeout
        )[1]

    def updates(self, session_id: str | None = None) -> list[Message]:
        """The session's updates but the list of commands it offers (sent once it opens: wait_update)."""
        with self._cond:
            return [
                m["params"]["update"]
                for m in self.lines
                if m.get("method") == "session/update"
                and session_id in (None, m["params"]["sessionId"])
                and m["params"]["update"].get("sessionUpdate") != "available_commands_update"
            ]

    def responses(self, request_id: Any) -> list[Message]:
        with self._cond:
            return [m for m in self.lines if "method" not in m and m.get("id") == request_id]

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
