"""The floor ink is measured against: a stdlib-only agent loop (urllib + json), no framework at all.

It sends the same streaming Chat Completions request ink sends, reads the SSE stream, and when the model
asks for ``read`` it reads the file (for ``bash``: runs the command with ``bash -c``, output captured) and
sends the result back, until a reply without tool calls; then it prints that reply's text.
Usage: ``python bench/baseline_loop.py BASE_URL PROMPT`` (BASE_URL ends in /v1).
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from typing import Any


def stream_reply(base_url: str, messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    body = {"model": "gpt-4.1", "stream": True, "messages": messages, "tools": TOOLS}
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer k"},
    )
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    with urllib.request.urlopen(request) as response:
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            for choice in json.loads(data).get("choices", []):
                delta = choice.get("delta", {})
                text.append(delta.get("content") or "")
                for piece in delta.get("tool_calls") or []:
                    call = calls.setdefault(piece["index"], {"id": "", "name": "", "arguments": ""})
                    call["id"] = piece.get("id") or call["id"]
                    function = piece.get("function", {})
                    call["name"] += function.get("name") or ""
                    call["arguments"] += function.get("arguments") or ""
    return "".join(text), [calls[i] for i in sorted(calls)]


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    },
]


def run_tool(name: str, arguments: dict[str, Any]) -> str:
    if name == "bash":
        done = subprocess.run(["bash", "-c", arguments["command"]], capture_output=True, text=True)
        return done.stdout + done.stderr + f"\n(exit {done.returncode})"
    with open(arguments["path"], encoding="utf-8") as f:
        return f.read()


def main() -> int:
    base_url, prompt = sys.argv[1], sys.argv[2]
    messages: list[dict[str, Any]] = [{"role": "system", "content": "x"}, {"role": "user", "content": prompt}]
    while True:
        text, calls = stream_reply(base_url, messages)
        if not calls:
            print(text)
            return 0
        messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in calls
                ],
            }
        )
        for call in calls:
            output = run_tool(call["name"], json.loads(call["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})


if __name__ == "__main__":
    raise SystemExit(main())
