"""A real MCP server for the tests, written with the SDK's own server side (``MCPServer``).

    python server.py stdio            serve over stdin/stdout
    python server.py http TOKEN       serve Streamable HTTP on 127.0.0.1 (a free port, printed first as
                                      "PORT n"), answering only requests with "Authorization: Bearer TOKEN"
    python server.py hang             read stdin and never answer anything (not even initialize)

What happens to a call is written, a line at a time, to the file named by ``MCP_JOURNAL`` (when set):
"started slow", "cancelled slow", "crashing", so tests can wait for the server's side of the story.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel

# A 1x1 red PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000"
    "000301010018dd8db00000000049454e44ae426082"
)

server = MCPServer("ink-test")


def journal(line: str) -> None:
    path = os.environ.get("MCP_JOURNAL")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(line + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
async def slow(label: str, ctx: Context) -> str:
    """Work until cancelled, reporting progress first."""
    await ctx.report_progress(1, 10, f"{label}: step 1 of 10")
    journal(f"started slow {label}")
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        journal(f"cancelled slow {label}")
        raise
    return "never"


@server.tool()
async def crash(ctx: Context) -> str:
    """Exit the whole server in the middle of the call."""
    await ctx.report_progress(1, 2, "about to crash")
    journal("crashing")
    print("the test server crashes on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def picture() -> list[TextContent | ImageContent]:
    """A caption and a tiny PNG image."""
    return [TextContent(type="text", text="a red dot"), Image(data=PNG, format="png").to_image_content()]


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def wipe(target: str) -> str:
    """Pretend to delete something (destructive)."""
    return f"wiped {target}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
def lookup(url: str) -> str:
    """Read a page of the outside world (read-only, open world)."""
    return f"the page at {url}"


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
def note(text: str) -> str:
    """Add a note to the server's own list (changes local state, destroys nothing)."""
    return f"noted {text}"


class Color(BaseModel):
    color: str


@server.tool()
async def ask(ctx: Context) -> str:
    """Ask the user for a color (elicitation) and say what came back."""
    answer = await ctx.elicit(message="Which color?", schema=Color)
    return f"{answer.action}: {answer.data.color if answer.action == 'accept' else '-'}"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool ``extra`` and tell the client its tools changed."""

    def extra() -> str:
        """Added later."""
        return "extra ran"

    server.add_tool(extra)
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.prompt()
def review(path: str) -> str:
    """Review a file."""
    return f"Please review {path}"


@server.resource("notes://today", mime_type="text/plain")
def today() -> str:
    """Today's notes."""
    return "buy milk"


def serve_http(token: str) -> None:
    import uvicorn
    from starlette.responses import PlainTextResponse

    app = server.streamable_http_app()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
            await PlainTextResponse("missing or wrong bearer token", status_code=401)(scope, receive, send)
            return
        await app(scope, receive, send)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts: none is refused meanwhile
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        serve_http(sys.argv[2])
    elif mode == "hang":
        journal("hanging")
        sys.stdin.read()  # never answers; exits when its stdin closes
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
