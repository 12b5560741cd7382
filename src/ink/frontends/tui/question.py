"""When a key answers a permission question, and when it is text for the editor.

A question pops up while the user may be typing: keys meant for the editor must never answer it (a
sentence with an ``a`` in it once saved an always-allow rule). So ``y``/``a``/``n`` answer only when the
editor is empty *and* the question has been on screen for ``delay`` seconds, counted from the first time
it was painted; Esc denies only after that delay. Every other key, and these same keys before then, go to
the editor as usual.
"""

from __future__ import annotations

from collections.abc import Callable


class QuestionGate:
    def __init__(self, delay: float, clock: Callable[[], float]) -> None:
        self.delay = delay
        self._clock = clock
        self._painted: dict[str, float] = {}

    def painted(self, request_id: str) -> None:
        """Called when the question is drawn; only the first call counts."""
        self._painted.setdefault(request_id, self._clock())

    def wait_left(self, request_id: str) -> float:
        """Seconds before the answer keys of this question count (the delay when not yet painted)."""
        since = self._painted.get(request_id)
        if since is None:
            return self.delay
        return max(0.0, self.delay - (self._clock() - since))

    def keys_live(self, request_id: str, editor_text: str) -> bool:
        return not editor_text and self.wait_left(request_id) <= 0

    def forget(self, open_ids: set[str]) -> None:
        """Drop the paint times of questions no longer open."""
        for request_id in [r for r in self._painted if r not in open_ids]:
            del self._painted[request_id]
