"""The session an app opens (``open_session``): a new one, the latest (``--continue``) or one by id, and
the settings to go on with (a resumed session keeps the model chosen in it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import msgspec

from ink.agent.history import History
from ink.app.setup import settings_for
from ink.config import Settings
from ink.run.usage import UsageTotals
from ink.store.current import CurrentSession

if TYPE_CHECKING:
    from ink.store import LoadedSession, SessionInfo, SessionStore

log = logging.getLogger(__name__)


class SessionChoice(msgspec.Struct, frozen=True):
    """Which history to start from: a new session (default), the latest (``--continue``) or one by id."""

    continue_latest: bool = False
    resume_id: str | None = None


NEW_SESSION = SessionChoice()


def open_session(settings: Settings, choice: SessionChoice) -> tuple[CurrentSession, History, Settings]:
    """The open session (with the store it came from; no handle with ``--no-session``), the history to
    start from, and the settings to go on with: a resumed session goes on with its own model (the last
    ``model_change`` it recorded, a ``set_model``'s), unless this invocation named a model or provider on
    its command line. With ``--no-session``, ``--continue``/``--resume`` still load the history but
    write nothing."""
    if settings.no_session and choice == NEW_SESSION:
        return CurrentSession(None), History(), settings  # nothing to read or write: no store imported
    from ink.store import SessionStore

    store = SessionStore(settings.session_dir, secrets=settings.secrets, on_error=_session_write_failed)
    target = _chosen(store, settings, choice)
    if settings.no_session:
        loaded = store.load(target) if target is not None else None
        history = History(loaded.messages) if loaded is not None else History()
        return CurrentSession(None), history, resumed_settings(settings, loaded)
    if target is None:
        handle = store.create(settings.cwd, settings.model, settings.provider)
        return CurrentSession(handle, store), handle.history, settings
    handle = store.resume(target)
    settings = resumed_settings(settings, handle.loaded)
    handle.going_on_with(settings.model, settings.provider)
    return CurrentSession(handle, store), handle.history, settings


def resumed_settings(settings: Settings, loaded: LoadedSession | None) -> Settings:
    """``settings`` with the resumed session's model (and provider), unless the command line chose for
    this invocation (``--model``, or a ``--provider`` other than the session's) or the session's model
    cannot be had here (another provider without its key, the local model server, a model without known
    prices under a cost limit, R45, as a switch to it is refused: a warning says so)."""
    if loaded is None or (loaded.model, loaded.provider) == (settings.model, settings.provider):
        return settings
    named = settings.origins.get
    if named("model", "").startswith("--") or (
        named("provider", "").startswith("--") and settings.provider != loaded.provider
    ):
        return settings
    if "local" in (loaded.provider, settings.provider) and loaded.provider != settings.provider:
        return settings  # its address is the local server's, which only its own part knows
    try:
        resumed = settings_for(settings, loaded.model, loaded.provider)
        _refuse_unpriced(resumed)
    except ValueError as exc:
        log.warning("going on with %s instead of the session's %s: %s", settings.model, loaded.model, exc)
        return settings
    return resumed


def _refuse_unpriced(settings: Settings) -> None:
    """Raises ``ValueError`` when a cost limit cannot be kept with ``settings.model`` (no known prices):
    the check ``ink`` makes at start of the command line's model, made of a resumed session's too."""
    if not settings.limits.cost_limited:
        return
    from ink.run.budget import unpriced_problem

    problem = unpriced_problem(settings.limits, settings.model)
    if problem is not None:
        raise ValueError(problem)


def _chosen(store: SessionStore, settings: Settings, choice: SessionChoice) -> SessionInfo | None:
    from ink.store import SessionNotFound

    if choice.resume_id is not None:
        return store.resolve(settings.cwd, choice.resume_id)
    if choice.continue_latest:
        info = store.latest(settings.cwd)
        if info is None:
            raise SessionNotFound(
                f"no session to continue in {settings.cwd}; start one with `ink`, "
                "or list them with `ink sessions`"
            )
        return info
    return None


def _session_write_failed(problem: str) -> None:
    log.warning("the session can no longer be saved: %s", problem)


def usage_totals(session: CurrentSession) -> UsageTotals:
    """The usage so far: the resumed session's, or none."""
    loaded = session.handle.loaded if session.handle is not None else None
    return UsageTotals(loaded.usage, loaded.cost) if loaded is not None else UsageTotals()
