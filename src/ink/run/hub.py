"""The one stream of run events an app has (docs/design/events.md).

Built first, before anything that tells the user something: the permission broker, the hooks' notes, a
part, a failed background task and the run controller all emit into it, and every frontend subscribes
to it. Nothing needs to wait for the controller to exist in order to speak.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ink.run.events import RunEvent, RunEventListener

log = logging.getLogger(__name__)


class EventHub:
    """Listeners run synchronously on the event loop's thread, in the order they subscribed, and must not
    block; one that raises is logged and never reaches whoever emitted (a frontend's bug must not break
    the run)."""

    def __init__(self) -> None:
        self._listeners: list[RunEventListener] = []

    def subscribe(self, listener: RunEventListener) -> Callable[[], None]:
        """Hear every event from now on; the function returned stops it (idempotent)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: RunEvent) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed on %s", event.type)
