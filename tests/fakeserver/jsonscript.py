"""Scripts as JSON, for the standalone server (benches, manual runs).

[{"steps": [{"text": "Hello"}, {"thinking": "hmm"},
            {"tool_call": {"name": "read", "args": {"path": "a.txt"}, "pieces": 3}}],
  "usage": {"input_tokens": 10, "output_tokens": 5}, "stop": null, "chunk_delay": 0.0},
 {"fault": {"http": 429, "retry_after": 0.01}}]
"""

from __future__ import annotations

from typing import Any

from tests.fakeserver.script import Fault, Reply, Step, Text, Thinking, ToolCallStep, Usage


def reply_from_json(data: dict[str, Any]) -> Reply:
    """Raises ``ValueError`` naming the step it cannot read."""
    steps = [_step(s) for s in data.get("steps", [])]
    fault = _fault(data["fault"]) if data.get("fault") else None
    return Reply(
        steps,
        Usage(**data.get("usage", {})),
        data.get("stop"),
        fault,
        float(data.get("chunk_delay", 0.0)),
        data.get("model"),
    )


def script_from_json(data: Any) -> list[Reply]:
    if not isinstance(data, list):
        raise ValueError("a script file holds a JSON list of replies")
    return [reply_from_json(r) for r in data]


def _step(s: dict[str, Any]) -> Step:
    if "text" in s:
        return Text(str(s["text"]))
    if "thinking" in s:
        return Thinking(str(s["thinking"]), s.get("signature", "sig-fake"))
    if "tool_call" in s:
        c = s["tool_call"]
        return ToolCallStep(c["name"], c.get("args", {}), c.get("id"), int(c.get("pieces", 3)))
    raise ValueError(f"unknown script step {s!r}")


def _fault(f: dict[str, Any]) -> Fault:
    if "http" in f:
        return Fault.http(int(f["http"]), f.get("message"), retry_after=f.get("retry_after"))
    if "disconnect_after" in f:
        return Fault.disconnect_after(int(f["disconnect_after"]))
    if "malformed_after" in f:
        return Fault.malformed_after(int(f["malformed_after"]))
    if f.get("context_overflow"):
        return Fault.context_overflow()
    raise ValueError(f"unknown fault {f!r}")
