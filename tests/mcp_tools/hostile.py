"""An MCP server over stdio that misbehaves on request, standard library only (the SDK would not let it).

    python hostile.py [JOURNAL]

Each tool is one misdeed; ``echo`` always works, to show the server's other calls go on:

    bad_utf8     answers with a line that is not UTF-8          not_json   prints a line that is not JSON
    deep         structuredContent nested 5,000 levels          huge N     a one-line text result of N MB
    silent       never answers                                   images N   N images of 1 MB each
    grow         adds the tool ``extra`` and says tools/list_changed
    ask          asks the user (elicitation/create) and returns the answer
    roots        asks ink for its roots (roots/list) and returns them
    crash        exits at once

It also lists tools ink must refuse (a duplicate, an empty name, a bidi override, a task-only tool), two
prompts and two resources. What ink sent in ``initialize`` is written to JOURNAL as JSON.
"""

from __future__ import annotations

import base64
import json
import os
import sys

OUT = sys.stdout.buffer
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}, "text": {"type": "string"}}}
TOOLS = [
    {"name": name, "description": f"the {name} misdeed", "inputSchema": SCHEMA}
    for name in (
        "echo",
        "bad_utf8",
        "not_json",
        "deep",
        "huge",
        "silent",
        "images",
        "grow",
        "ask",
        "roots",
        "crash",
        "shout",
    )
]
REFUSED = [
    {"name": "", "description": "no name", "inputSchema": SCHEMA},
    {"name": "ab\u202ecd", "description": "a bidi override", "inputSchema": SCHEMA},
    {
        "name": "later",
        "description": "task only",
        "inputSchema": SCHEMA,
        "execution": {"taskSupport": "required"},
    },
    {"name": "dup", "description": "one", "inputSchema": SCHEMA},
    {"name": "dup", "description": "two", "inputSchema": SCHEMA},
]
PROMPTS = [
    {"name": "review", "description": "Review a file", "arguments": [{"name": "path", "required": True}]},
    {"name": "hello", "description": "Say hello"},
]
RESOURCES = [
    {"uri": "notes://today", "name": "today", "mimeType": "text/plain"},
    {"uri": "notes://plan", "name": "plan", "description": "the plan"},
]
state = {"grown": False, "asked": {}}


def send(message: dict) -> None:
    OUT.write(json.dumps(message).encode() + b"\n")
    OUT.flush()


def result(request_id: object, value: dict) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def text(request_id: object, value: str) -> None:
    result(request_id, {"content": [{"type": "text", "text": value}]})


def call(request_id: object, name: str, args: dict) -> None:
    n = int(args.get("n", 1))
    if name == "echo":
        text(request_id, f"echo: {args.get('text', '')}")
    elif name == "bad_utf8":
        OUT.write(b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode())
        OUT.write(b',"result":{"content":[{"type":"text","text":"caf\xe9 \xff"}]}}\n')
        OUT.flush()
    elif name == "not_json":
        OUT.write(b"this is not JSON at all\n")
        OUT.flush()
    elif name == "deep":
        nested = b"[" * 5000 + b"]" * 5000
        OUT.write(b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":{"content":[],')
        OUT.write(b'"structuredContent":{"x":' + nested + b"}}}\n")
        OUT.flush()
    elif name == "huge":
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":{"content":'
        OUT.write(head + b'[{"type":"text","text":"')
        for _ in range(n):
            OUT.write(b"x" * (1024 * 1024))
        OUT.write(b'"}]}}\n')
        OUT.flush()
    elif name == "images":
        data = base64.b64encode(os.urandom(1024 * 1024)).decode()
        blocks = [{"type": "image", "data": data, "mimeType": "image/png"} for _ in range(n)]
        result(request_id, {"content": [{"type": "text", "text": f"{n} images"}, *blocks]})
    elif name == "grow":
        state["grown"] = True
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        text(request_id, "grown")
    elif name in ("ask", "roots"):
        asked = f"ask-{request_id}"
        state["asked"][asked] = request_id
        if name == "ask":
            schema = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
            params = {"mode": "form", "message": "Which color?", "requestedSchema": schema}
            send({"jsonrpc": "2.0", "id": asked, "method": "elicitation/create", "params": params})
        else:
            send({"jsonrpc": "2.0", "id": asked, "method": "roots/list", "params": {}})
    elif name == "extra":
        text(request_id, "extra ran")
    elif name == "crash":
        sys.exit(4)
    elif name == "shout":  # 20 MB of stderr, then its last words, then exit
        for _ in range(20):
            sys.stderr.write("noise " * 174762 + "\n")
        sys.stderr.write("the last words\n")
        sys.stderr.flush()
        sys.exit(5)
    # silent: no answer


def answer(message: dict, journal: str | None) -> None:
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") or {}
    if method is None:  # ink's answer to our elicitation or roots request
        waiting = state["asked"].pop(message.get("id"), None)
        if waiting is not None:
            text(waiting, json.dumps(message.get("result", message.get("error"))))
        return
    if method == "initialize":
        if journal:
            with open(journal, "w") as file:
                json.dump(params, file)
        capabilities = {"tools": {"listChanged": True}, "prompts": {}, "resources": {}}
        info = {"name": "hostile", "version": "1"}
        result(
            request_id,
            {"protocolVersion": params["protocolVersion"], "capabilities": capabilities, "serverInfo": info},
        )
    elif method == "tools/list":
        extra = (
            [{"name": "extra", "description": "added later", "inputSchema": SCHEMA}] if state["grown"] else []
        )
        result(request_id, {"tools": TOOLS + REFUSED + extra})
    elif method == "tools/call":
        call(request_id, params["name"], params.get("arguments") or {})
    elif method == "prompts/list":
        result(request_id, {"prompts": PROMPTS})
    elif method == "prompts/get":
        args = params.get("arguments") or {}
        said = f"{params['name']} with {json.dumps(args, sort_keys=True)}"
        result(request_id, {"messages": [{"role": "user", "content": {"type": "text", "text": said}}]})
    elif method == "resources/list":
        result(request_id, {"resources": RESOURCES})
    elif method == "resources/read":
        uri = params["uri"]
        result(
            request_id,
            {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"the content of {uri}"}]},
        )
    elif request_id is not None:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no {method}"}})


def main() -> None:
    journal = sys.argv[1] if len(sys.argv) > 1 else None
    for line in sys.stdin.buffer:
        if line.strip():
            answer(json.loads(line), journal)


if __name__ == "__main__":
    main()
