"""A small client for ``ink --mode rpc`` as a real subprocess: send commands, wait for answers and events.

    with RpcClient.start(args, env, cwd) as ink:
        data = ink.ok("prompt", text="hi")                 # waits for the response; asserts ok
        end = ink.wait_event("run_end", stopReason="completed")
        ink.close_stdin(); assert ink.wait_exit() == 0

Reading, waiting and the process are ``JsonLinesClient``'s (tests/jsonl_client.py): every stdout line must
be a JSON object.
"""

from __future__ import annotations

from typing import Any

from tests.jsonl_client import TIMEOUT, JsonLinesClient, Line


class RpcClient(JsonLinesClient):
    MODE = ("--mode", "rpc")

    def summary(self, line: Line) -> object:
        return (line.get("type"), line.get("command"))

    # -- reading -----------------------------------------------------------------------------------

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
        self.send_json({"type": type_, "id": command_id, **fields})
        return command_id

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
