"""Who has the keyboard while a permission question is shown: the editor, or the question.

A question pops up while the user may be typing, and whatever they type must stay theirs (R38): no
printable key, Enter or paste answers it, whatever the order or timing, because any of them can be
type-ahead meant for the editor (a sentence typed on after an Enter once answered "always allow" with
the ``a`` of ``another``). So the editor keeps the keyboard while a question is shown, and the question
is answered only after a deliberate hand-over:

- Tab on an empty editor, or Ctrl+O (which also shows the question whole), hands the keyboard to the
  question, and only once the question has been on screen for ``delay`` seconds *and* no key came for
  ``delay`` seconds before the hand-over key: a Tab or Ctrl+O typed in a burst (with an Enter before it,
  say) does nothing of the kind.
- Then ``y``/``a``/``n`` answer. Any other printable key or a paste gives the keyboard back to the
  editor and goes there; Tab gives it back too. Each question needs its own hand-over: after an answer
  the keyboard is the editor's again, even when another question is waiting.

Esc is not an answer: it interrupts the run, as everywhere else, and the call is not executed.
"""

from __future__ import annotations

import math
from collections.abc import Callable


class QuestionFocus:
    """The hand-over's state: when each question was first drawn, when the last key came, and which
    question (if any) holds the keyboard. ``clock`` is injected (tests drive time)."""

    def __init__(self, delay: float, clock: Callable[[], float]) -> None:
        self.delay = delay
        self._clock = clock
        self._painted: dict[str, float] = {}
        self._last_key = -math.inf
        self.answering: str | None = None  # the request id of the question holding the keyboard
        self.scroll = 0  # the first row of its preview shown, while it holds the keyboard
        self.expanded = False  # shown with every row the screen has (Ctrl+O)

    def painted(self, request_id: str) -> None:
        """Called when the question is drawn; only the first call counts."""
        self._painted.setdefault(request_id, self._clock())

    def painted_at(self, request_id: str) -> float | None:
        """When the question was first drawn (None: not yet)."""
        return self._painted.get(request_id)

    def key_pressed(self) -> None:
        """Called after every key the app handles (not after a terminal's answer to a query)."""
        self._last_key = self._clock()

    def wait_left(self, request_id: str) -> float:
        """Seconds before a hand-over key counts: until the question has been shown ``delay`` seconds
        and the typing has paused that long (the delay itself when it is not drawn yet)."""
        since = self._painted.get(request_id)
        if since is None:
            return self.delay
        now = self._clock()
        return max(0.0, self.delay - (now - since), self.delay - (now - self._last_key))

    def can_take(self, request_id: str) -> bool:
        return self.wait_left(request_id) <= 0

    def take(self, request_id: str, *, expanded: bool = False) -> None:
        self.answering, self.scroll, self.expanded = request_id, 0, expanded

    def give_back(self) -> None:
        self.answering, self.scroll, self.expanded = None, 0, False

    def holds_keyboard(self, request_id: str | None) -> bool:
        """Whether the question ``request_id`` (the one shown) holds the keyboard."""
        return request_id is not None and self.answering == request_id

    def forget(self, open_ids: set[str]) -> None:
        """Drop what is kept of questions no longer open; one that held the keyboard gives it back."""
        for request_id in [r for r in self._painted if r not in open_ids]:
            del self._painted[request_id]
        if self.answering is not None and self.answering not in open_ids:
            self.give_back()
