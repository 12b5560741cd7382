"""Sessions as append-only JSON-lines files: write as it happens, load, repair, list (CONTRACT "Sessions").

The names below are imported from their modules on first use (PEP 562): a run without a session
(``--no-session``, ``-p``) needs the errors and the paths, not the loader, writer and listing, which
cost a turn's start-up time to import (``bench/run.py startup``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for the type checker (``as``: re-exported)
    from ink.store.entries import redact as redact
    from ink.store.errors import (
        AmbiguousSession as AmbiguousSession,
    )
    from ink.store.errors import (
        CorruptSession as CorruptSession,
    )
    from ink.store.errors import (
        NotASession as NotASession,
    )
    from ink.store.errors import (
        SessionError as SessionError,
    )
    from ink.store.errors import (
        SessionInUse as SessionInUse,
    )
    from ink.store.errors import (
        SessionNotFound as SessionNotFound,
    )
    from ink.store.listing import SessionInfo as SessionInfo
    from ink.store.loader import (
        LoadedSession as LoadedSession,
    )
    from ink.store.loader import (
        Repair as Repair,
    )
    from ink.store.loader import (
        load_session as load_session,
    )
    from ink.store.loader import (
        repair_tool_calls as repair_tool_calls,
    )
    from ink.store.paths import default_session_dir as default_session_dir
    from ink.store.session import SessionHandle as SessionHandle
    from ink.store.session import SessionStore as SessionStore
    from ink.store.writer import SessionWriter as SessionWriter

_MODULE_OF = {
    "AmbiguousSession": "errors",
    "CorruptSession": "errors",
    "LoadedSession": "loader",
    "NotASession": "errors",
    "Repair": "loader",
    "SessionError": "errors",
    "SessionHandle": "session",
    "SessionInUse": "errors",
    "SessionInfo": "listing",
    "SessionNotFound": "errors",
    "SessionStore": "session",
    "SessionWriter": "writer",
    "default_session_dir": "paths",
    "load_session": "loader",
    "redact": "entries",
    "repair_tool_calls": "loader",
}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'ink.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ink.store.{module}"), name)
    globals()[name] = value  # looked up once
    return value
