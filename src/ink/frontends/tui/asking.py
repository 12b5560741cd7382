"""The permission question on screen and its keys (R38): the first open question drawn with its
hand-over state, and what the question's keys do (``keys.QuestionActions``). Who holds the keyboard is
``question.QuestionFocus``'s; the answer goes to the run's permission broker."""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.buffer import Buffer

from ink.frontends.tui.layout import INPUT_ROWS
from ink.frontends.tui.question import QuestionFocus
from ink.frontends.tui.questionview import Asking, Fragments, KeysState, QuestionPanel
from ink.frontends.tui.theme import Theme
from ink.frontends.tui.view import EventView
from ink.run.permissions import PermissionBroker, UnknownRequest
from ink.vocabulary import Answer


class QuestionKeys:
    def __init__(
        self,
        view: EventView,
        focus: QuestionFocus,
        broker: Callable[[], PermissionBroker],
        buffer: Buffer,
        changed: Callable[[], None],
        theme: Theme | None = None,
    ) -> None:
        self._view, self.focus, self._broker = view, focus, broker
        self._buffer, self._changed = buffer, changed
        self._panel = QuestionPanel(theme)

    def shown(self) -> str | None:
        """The request id of the question on screen (the first open one)."""
        return self._view.questions[0].request_id if self._view.questions else None

    # -- keys (keys.QuestionActions) -----------------------------------------------------------------

    def has_question(self) -> bool:
        return bool(self._view.questions)

    def question_has_keyboard(self) -> bool:
        return self.focus.holds_keyboard(self.shown())

    def can_hand_over(self) -> bool:
        shown = self.shown()
        return shown is not None and self.focus.can_take(shown)

    def hand_over(self, expanded: bool) -> None:
        """The question takes the keyboard (Tab, Ctrl+O) only after a pause in typing."""
        shown = self.shown()
        if shown is not None and self.focus.can_take(shown):
            self.focus.take(shown, expanded=expanded)
            self._changed()

    def take_back(self, typed: str = "") -> None:
        """The keyboard back to the editor; ``typed`` (a key or a paste that gave it back) goes there."""
        self.focus.give_back()
        if typed:
            self._buffer.insert_text(typed)
        self._changed()

    def scroll_question(self, rows: int) -> None:
        self.focus.scroll = max(0, self.focus.scroll + rows)  # the panel keeps it within the body
        self._changed()

    def answer(self, answer: Answer) -> None:
        """Only the question holding the keyboard is answered; the keyboard goes back either way."""
        shown = self.shown()
        held = self.focus.holds_keyboard(shown)
        self.focus.give_back()
        self._changed()
        if shown is not None and held:
            self.resolve(shown, answer)

    def expand(self) -> None:
        """Ctrl+O with the question shown: hand it the keyboard on the whole screen; again: half."""
        if self.question_has_keyboard():
            self.focus.expanded = not self.focus.expanded
        else:
            self.hand_over(expanded=True)
        self._changed()

    def resolve(self, request_id: str, answer: Answer) -> None:
        try:
            self._broker().answer(request_id, answer)
        except UnknownRequest:  # answered meanwhile (a timeout, an abort): its resolution is on its way
            pass

    # -- drawing ---------------------------------------------------------------------------------------

    def fragments(self, width: int, rows: int) -> Fragments:
        """The question in at most ``rows`` rows (``rows_for`` says how many it may take)."""
        questions = self._view.questions
        if not questions:
            return []
        first = questions[0]
        self.focus.painted(first.request_id)  # R38: the pause is counted from the first time it is seen
        self.focus.forget({q.request_id for q in questions})
        wait = self.focus.wait_left(first.request_id)
        keys: KeysState = "answering" if self.focus.holds_keyboard(first.request_id) else "wait"
        if keys == "wait" and wait <= 0:
            keys = "ready"
        described = self._view.described(first)
        typing = bool(self._buffer.text)
        asker = self._view.asker(first)
        asking = Asking(first, described, len(questions) - 1, keys, wait, typing, self.focus.scroll, asker)
        fragments, self.focus.scroll = self._panel.draw(asking, width, rows)
        return fragments

    def rows_for(self, screen_rows: int) -> int:
        """Half the screen; all of it but the input and the status once Ctrl+O expanded the question."""
        if self.focus.expanded and self.focus.answering is not None:
            editor = min(INPUT_ROWS, self._buffer.text.count("\n") + 1)
            return max(3, screen_rows - editor - 4)  # the rule, the status line, one spare
        return max(3, screen_rows // 2)
