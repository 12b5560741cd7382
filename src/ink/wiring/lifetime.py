"""The app's lifetime: ``open_app`` prepares its parts, builds it, starts the parts, and closes it all
on the way out, in the shape of an httpx client::

    async with open_app(settings) as app:
        app.controller.subscribe(render)
        app.submit("fix the failing test")
        await app.controller.wait_idle()

``start_app`` is the same without the block, for a frontend whose apps come and go on requests (ACP's
sessions): the caller then owes ``await app.aclose()``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from typing import TypeVar, Unpack

from ink.app.service import App, AppPart, AppStartError, close_parts
from ink.config import Settings
from ink.wiring.build import AppChoices, build_app
from ink.wiring.parts import default_parts

T = TypeVar("T")


@asynccontextmanager
async def open_app(
    settings: Settings, *, parts: Sequence[AppPart] | None = None, **choices: Unpack[AppChoices]
) -> AsyncIterator[App]:
    """The app for ``settings``, started, for the block; closed (``App.aclose``) however it ends.
    Raises ``AppStartError`` when a part cannot start (the others are closed first), ``SessionError``
    when the session asked for cannot be opened."""
    app = await start_app(settings, parts=parts, **choices)
    try:
        yield app
    finally:
        await app.aclose()


async def start_app(
    settings: Settings, *, parts: Sequence[AppPart] | None = None, **choices: Unpack[AppChoices]
) -> App:
    """Prepare every part (``default_parts(settings)`` unless ``parts`` are given), build the app, and
    start every part of the app, in order (the app's own first: the workspace checkpoints). On any
    failure what was begun is closed before the error propagates."""
    parts = list(default_parts(settings) if parts is None else parts)
    begun: list[AppPart] = []
    try:
        for part in parts:
            begun.append(part)
            settings = await _step(part, "prepare", part.prepare(settings))
        app = build_app(settings, parts=parts, **choices)
    except BaseException:
        await close_parts(begun)
        raise
    try:
        for part in app.parts:  # those the app made itself too (the workspace checkpoints)
            await _step(part, "start", part.start(app))
    except BaseException:
        await app.aclose()  # every part: ``aclose`` ends whatever its start got to
        raise
    return app


async def _step(part: AppPart, what: str, work: Awaitable[T]) -> T:
    """Await one part's ``prepare`` or ``start``; any failure becomes an ``AppStartError`` naming it."""
    try:
        return await work
    except AppStartError:
        raise
    except Exception as exc:
        raise AppStartError(f"{part.name} could not {what}: {type(exc).__name__}: {exc}") from exc
