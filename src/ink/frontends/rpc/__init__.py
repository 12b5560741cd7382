"""``ink --mode rpc``: the JSON-lines protocol on stdin/stdout (docs/design/CONTRACT.md "RPC mode",
docs/rpc.md).

A thin adapter over the run controller, the same one under every frontend:
    protocol.py   parse and check one command line, build responses
    handlers.py   what each command does to the controller and the app
    server.py     each line's response, the events, SIGINT, the shut-down
Reading stdin, writing stdout, signals and the end are the shared stdio plumbing (``ink.frontends.stdio``).

stdout carries only protocol lines: before serving, the protocol keeps a private duplicate of stdout and
points descriptor 1 at stderr, so a stray ``print`` (ours, a library's, a child's) cannot corrupt it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ink.frontends.rpc.server import RpcServer
from ink.frontends.stdio import claim_stdout

if TYPE_CHECKING:
    from ink.config import Invocation, Settings
    from ink.wiring import SessionChoice

__all__ = ["RpcServer", "main", "run_rpc"]


def main(settings: Settings, invocation: Invocation) -> int:
    """Entry point called by the command line after the settings were checked."""
    from ink.wiring import SessionChoice

    choice = SessionChoice(invocation.continue_session, invocation.resume_id)
    return asyncio.run(run_rpc(settings, choice))


async def run_rpc(settings: Settings, session: SessionChoice, in_fd: int = 0, out_fd: int = 1) -> int:
    """Build the app, claim stdout for the protocol and serve until the end. Raises ``SessionError``
    (before anything is written) when the session asked for cannot be opened."""
    from ink.wiring import hard_exit, open_app

    server: RpcServer | None = None

    def force_exit(status: int) -> None:  # R21: the second interrupt; write what is pending, then go
        if server is not None:
            server.writer.flush_now()
        hard_exit(app.processes)(status)

    async with open_app(settings, session=session, force_exit=force_exit) as app:
        server = RpcServer(app, claim_stdout(out_fd))
        _warm_up(settings.base_url)
        return await server.serve(in_fd)


def _warm_up(base_url: str) -> None:
    """Prepare what the first model call needs in a thread while the process waits for its first
    command, so the first prompt does not pay for it: for an https base URL, the TLS context (loading the
    CA bundle, ~10-20 ms in C code that lets go of the interpreter lock). A call that comes sooner just
    builds its own."""
    if not base_url.startswith("https://"):
        return
    import os
    import threading

    from ink.ai.http1 import warm_up

    env = dict(os.environ)
    threading.Thread(target=warm_up, args=(env,), name="ink-rpc-warm-up", daemon=True).start()
