"""Sessions as append-only JSON-lines files: write as it happens, load, repair, list (CONTRACT "Sessions")."""

from ink.store.entries import redact
from ink.store.errors import (
    AmbiguousSession,
    CorruptSession,
    NotASession,
    SessionError,
    SessionInUse,
    SessionNotFound,
)
from ink.store.listing import SessionInfo
from ink.store.loader import LoadedSession, Repair, load_session, repair_tool_calls
from ink.store.paths import default_session_dir
from ink.store.session import SessionHandle, SessionStore
from ink.store.writer import SessionWriter

__all__ = [
    "AmbiguousSession",
    "CorruptSession",
    "LoadedSession",
    "NotASession",
    "Repair",
    "SessionError",
    "SessionHandle",
    "SessionInUse",
    "SessionInfo",
    "SessionNotFound",
    "SessionStore",
    "SessionWriter",
    "default_session_dir",
    "load_session",
    "redact",
    "repair_tool_calls",
]
