"""The store's entry points for the frontends: create, resume, list, resolve.

    store = SessionStore(settings.session_dir, secrets=[settings.api_key])
    handle = store.create(cwd, model, provider)            # or store.resume(store.latest(cwd))
    controller = RunController(setup, handle.history)
    controller.subscribe(handle.on_event)                   # fsync at every run_end
    ...
    handle.close()

``--no-session`` simply creates no handle. ``new_session`` (RPC) closes the handle, creates another and
gives its history to the controller.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ink import __version__
from ink.agent.history import History
from ink.ai.jsonform import to_json
from ink.ai.messages import AssistantMessage, Usage
from ink.store.entries import SessionHeader
from ink.store.errors import SessionError, SessionNotFound
from ink.store.paths import cwd_folder, default_session_dir, normalise_cwd, session_file_name
from ink.store.writer import ErrorReporter, SessionWriter

if TYPE_CHECKING:  # imported where a session is read or listed: a new session's turn does neither
    from ink.store.listing import SessionInfo
    from ink.store.loader import LoadedSession

log = logging.getLogger(__name__)


class SessionHandle:
    """One open session: its history, kept on disk as it changes."""

    def __init__(self, writer: SessionWriter, history: History, loaded: LoadedSession | None) -> None:
        self.writer = writer
        self.history = history
        self.loaded = loaded  # how it was loaded (repairs, usage so far); None for a new session

    @property
    def id(self) -> str:
        return self.writer.header.id

    @property
    def path(self) -> Path:
        return self.writer.path

    @property
    def cwd(self) -> str:
        return self.writer.header.cwd

    def record_model_change(self, model: str, provider: str) -> None:
        self.writer.write_model_change(model, provider)

    def going_on_with(self, model: str, provider: str) -> None:
        """This resumed session goes on with ``model`` of ``provider``: recorded when the file ended with
        another, so the next resume starts with the model really used."""
        loaded = self.loaded
        if loaded is not None and (loaded.model, loaded.provider) != (model, provider):
            self.record_model_change(model, provider)

    def record_job(self, kind: Literal["job_start", "job_end"], fields: Mapping[str, Any]) -> None:
        """A background job started or ended (``ink.store.jobs`` says what the fields are)."""
        self.writer.write_job(kind, fields)

    def on_event(self, event: object) -> None:
        """A run-event listener (duck-typed: the store does not import ``run``): fsync when a run ends;
        record a sub-agent's model call, whose message is kept in its own transcript, so the session's
        totals count it; record the plan as it changes (shown again on resume)."""
        kind = getattr(event, "type", None)
        if kind == "run_end":
            self.sync()
        source = getattr(event, "source", None)
        if kind == "plan_update" and source is None:  # the session's plan (a sub-agent's is its own)
            self.writer.write_plan(to_json(event))
        if kind == "message_end" and source is not None:
            message, usage = getattr(event, "message", None), getattr(event, "usage", None)
            if isinstance(message, AssistantMessage) and isinstance(usage, Usage):
                self.writer.write_usage(usage, message.model, str(getattr(source, "id", "")))

    def sync(self) -> None:
        self.writer.sync()

    def close(self) -> None:
        """Stop recording, fsync and close the file. Idempotent."""
        self.writer.close()


class SessionStore:
    def __init__(
        self,
        session_dir: Path | None = None,
        *,
        secrets: Sequence[str | None] = (),
        on_error: ErrorReporter | None = None,
    ) -> None:
        """``secrets`` (API keys) are redacted from everything written; ``on_error`` hears once when a
        session can no longer be written."""
        self.session_dir = session_dir if session_dir is not None else default_session_dir()
        self.secrets = tuple(s for s in secrets if s)
        self.on_error = on_error

    def create(self, cwd: str | os.PathLike[str], model: str, provider: str) -> SessionHandle:
        """A new, empty session. Its file appears with the first message."""
        created = time.time()
        header = SessionHeader(uuid.uuid4().hex, normalise_cwd(cwd), model, provider, __version__, created)
        path = cwd_folder(self.session_dir, cwd) / session_file_name(header.id, created)
        history = History()
        return SessionHandle(self._writer(path, header, exists=False, history=history), history, None)

    def resume(self, target: SessionInfo | Path) -> SessionHandle:
        """Load a session to go on with it; later changes are appended to the same file.

        Synthetic results that loading added at the end of the history (a crash during a tool call) are
        written to the file at once, so the file itself is valid again (R33). Raises what ``load`` raises,
        ``SessionInUse`` when another ink process has it open, ``SessionError`` when it cannot be opened.
        """
        loaded = self.load(target)
        history = History(loaded.messages)
        writer = SessionWriter(
            loaded.path, loaded.header, exists=True, secrets=self.secrets, on_error=self.on_error
        )
        try:
            writer.open()
        except OSError as exc:
            raise SessionError(
                f"{loaded.path}: cannot open the session for writing ({exc.strerror or exc})"
            ) from exc
        writer.attach(history)
        writer.header.model, writer.header.provider = loaded.model, loaded.provider
        if loaded.repair.at_tail:
            for result in loaded.repair.inserted:
                writer.write_message(result)
        return SessionHandle(writer, history, loaded)

    def load(self, target: SessionInfo | Path) -> LoadedSession:
        """Read a session without opening it for writing. Raises ``SessionError`` subclasses. A torn last
        line that loading dropped is reported (a warning in the log): nothing is lost silently."""
        from ink.store.listing import SessionInfo
        from ink.store.loader import load_session

        loaded = load_session(target.path if isinstance(target, SessionInfo) else target)
        if loaded.torn_bytes:
            log.warning(
                "%s: dropped an unfinished last line (%d bytes, a write cut off by a crash)",
                loaded.path,
                loaded.torn_bytes,
            )
        return loaded

    def sessions(self, cwd: str | os.PathLike[str]) -> list[SessionInfo]:
        """The sessions of ``cwd``, most recently updated first (`ink sessions`)."""
        from ink.store.listing import list_sessions

        return list_sessions(self.session_dir, cwd)

    def latest(self, cwd: str | os.PathLike[str]) -> SessionInfo | None:
        from ink.store.listing import latest_session

        return latest_session(self.session_dir, cwd)

    def resolve(self, cwd: str | os.PathLike[str], prefix: str) -> SessionInfo:
        from ink.store.listing import resolve_session

        return resolve_session(self.session_dir, cwd, prefix)

    def continue_latest(self, cwd: str | os.PathLike[str]) -> SessionHandle:
        """``--continue``: resume the latest session of ``cwd``. Raises ``SessionNotFound`` if none."""
        info = self.latest(cwd)
        if info is None:
            raise SessionNotFound(
                f"no session to continue in {normalise_cwd(cwd)}; start one with `ink` or list them with "
                "`ink sessions`"
            )
        return self.resume(info)

    def _writer(self, path: Path, header: SessionHeader, *, exists: bool, history: History) -> SessionWriter:
        writer = SessionWriter(path, header, exists=exists, secrets=self.secrets, on_error=self.on_error)
        writer.attach(history)
        return writer
