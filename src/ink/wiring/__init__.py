"""Settings in, a ready app out: the one place every frontend gets its parts from.

    async with open_app(settings) as app:   # inside the running event loop
        app.controller.subscribe(render)
        app.submit("fix the failing test")
        await app.controller.wait_idle()
    # closed: the run aborted and settled, processes reaped, parts closed, tasks ended, provider closed

``build_app`` (``ink.wiring.build``) makes every object once, in the order of need; ``open_app``
(``ink.wiring.lifetime``) adds the asynchronous start and end of the app's parts (``ink.wiring.parts``:
the local model server, the MCP servers; the workspace checkpoints the app makes itself). What the app
does (submit, model and session switches, rewind) is ``App``'s (``ink.app``), the same for every
frontend; this package holds construction only. Nothing here reads the command line: ``Settings``
carries it.
"""

from __future__ import annotations

from ink.app.service import App, AppPart, AppStartError
from ink.app.setup import build_provider, request_options
from ink.wiring.build import AppChoices, build_app
from ink.wiring.lifetime import open_app, start_app
from ink.wiring.parts import default_parts
from ink.wiring.processes import RegistryReaper, hard_exit, hard_exit_processes
from ink.wiring.session import NEW_SESSION, SessionChoice

__all__ = [
    "NEW_SESSION",
    "App",
    "AppChoices",
    "AppPart",
    "AppStartError",
    "RegistryReaper",
    "SessionChoice",
    "build_app",
    "build_provider",
    "default_parts",
    "hard_exit",
    "hard_exit_processes",
    "open_app",
    "request_options",
    "start_app",
]
