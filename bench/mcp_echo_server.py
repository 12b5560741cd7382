"""A trivial MCP server over stdio, standard library only (~20 ms to start): one ``echo`` tool.

The start-up bench configures it so that ``ink -p`` with one MCP server measures ink's own MCP cost (the
client, the handshake, the tool list), not the start-up of a server written with a heavy SDK.
"""

import json
import sys


def answer(request: dict) -> dict:
    method = request.get("method")
    if method == "initialize":
        version = request["params"].get("protocolVersion", "2025-06-18")
        info = {"name": "echo", "version": "1"}
        return {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
    if method == "tools/list":
        schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        return {"tools": [{"name": "echo", "description": "Say the text back.", "inputSchema": schema}]}
    if method == "tools/call":
        text = request["params"]["arguments"].get("text", "")
        return {"content": [{"type": "text", "text": f"echo: {text}"}]}
    return {}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "id" in request:
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": answer(request)}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
