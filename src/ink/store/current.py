"""Which session an app has open, as one value made before everything that records per session.

The hooks' events name the session and its transcript, the sub-agents' transcripts go next to its file,
the workspace checkpoints are kept with it: each of them is given this object when it is built and reads
it when it needs to, instead of reaching into the app. ``switch`` (``/new``, ``/resume``) tells those that
follow it (``on_switch``). Cheap to import: nothing of the store's reading and writing comes with it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ink.store.session import SessionHandle, SessionStore

SwitchListener = Callable[["SessionHandle | None"], None]


class CurrentSession:
    """``handle`` None: nothing is written (``--no-session``). ``store``: where the sessions are kept, for
    ``/new`` and ``/resume`` (None: sessions are off)."""

    def __init__(self, handle: SessionHandle | None, store: SessionStore | None = None) -> None:
        self.handle = handle
        self.store = store
        self._listeners: list[SwitchListener] = []

    @property
    def id(self) -> str | None:
        return self.handle.id if self.handle is not None else None

    def described(self) -> tuple[str | None, Path | None]:
        """The session's id and transcript (its file), as a hook's event names them."""
        return (self.handle.id, self.handle.path) if self.handle is not None else (None, None)

    def transcripts(self) -> Path | None:
        """Where the sub-agents' transcripts go: next to the session file (kept with it)."""
        return self.handle.path.with_suffix(".subagents") if self.handle is not None else None

    def switch(self, handle: SessionHandle | None) -> None:
        """Another session is open now; those that follow it hear it, in the order they subscribed."""
        self.handle = handle
        for listener in tuple(self._listeners):
            listener(handle)

    def on_switch(self, listener: SwitchListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None
