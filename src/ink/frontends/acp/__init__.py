"""``ink acp``: an Agent Client Protocol agent over stdio, for editors (Zed and others).

JSON-RPC 2.0, one message a line, on stdin and stdout; logs on stderr. Every ACP session is an ink
session with its own run controller: the editor's prompts, cancels and permission answers go to the
controller, and its events come back as ``session/update`` notifications. docs/acp.md has the mapping.

    jsonrpc   messages, error codes, the agent's side of the connection (``Peer``)
    prompt    ACP content blocks -> the prompt text
    updates   run events -> ``session/update`` payloads; history replay; the permission question
    turns     which prompt request is answered when, and how
    session   one ACP session over one ``App``
    server    the method table and the process's life
Lines in and out, signals and the end are the shared stdio plumbing (``ink.frontends.stdio``).

The protocol is implemented here rather than with the ``agent-client-protocol`` package: its pydantic
schema costs ~0.37 s of start-up for a handful of small messages.
"""

from __future__ import annotations

import asyncio

from ink.config import Invocation, Settings
from ink.frontends.stdio import claim_stdout


def main(settings: Settings, invocation: Invocation) -> int:
    """Entry point called by the command line after the settings were checked."""
    out_fd = claim_stdout()
    return asyncio.run(serve_stdio(settings, 0, out_fd))


async def serve_stdio(settings: Settings, in_fd: int, out_fd: int) -> int:
    """Serve ACP; with ``--provider local`` every session's app uses the one model server this process
    runs for as long as it serves."""
    from ink.frontends.acp.server import AcpServer
    from ink.wiring.local_part import serving_model

    async with serving_model(settings) as served:
        return await AcpServer(served, out_fd).serve(in_fd)
