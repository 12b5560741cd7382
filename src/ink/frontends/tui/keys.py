"""The key map (issue 4): each key calls one method of the app; the controller does the rest.

``KEYS`` is the one list of what each key does: ``/help`` prints it and the README copies it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol

from prompt_toolkit.filters import Always, Condition, Filter
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from ink.agent.events import InputMode
from ink.run.permissions import Answer

KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send; while a run goes on, queue it as a steer (taken before the next model call)"),
    ("Alt+Enter", "queue as a follow-up (taken when the model would stop); Esc then Enter works too"),
    ("Ctrl+J", "new line"),
    ("Esc", "interrupt the run: the model stream and tools stop, queued inputs come back here"),
    ("Ctrl+C", "running: interrupt; again while it stops: quit at once (exit 130)"),
    ("", "idle: clear the input; twice on an empty input: quit"),
    ("Ctrl+R", "interrupt and redirect: stop the current work and send the input now"),
    ("Up", "on an empty input while a run goes on: take the last queued input back to edit it"),
    ("Ctrl+O", "show the whole of the last folded output"),
    ("Ctrl+D", "quit (on an empty input)"),
    ("Tab", "after /: complete the command's name (again: the next match)"),
    ("y / a / n", "answer a permission question: allow once / always allow / deny (Esc denies too)"),
)


class KeyActions(Protocol):
    """What the keys do; the TUI app implements it."""

    def has_question(self) -> bool: ...

    def can_pull_queued(self) -> bool: ...

    def submit(self, mode: InputMode) -> None: ...

    def redirect(self) -> None: ...

    def escape(self) -> None: ...

    def interrupt_key(self) -> None: ...

    def quit_key(self) -> None: ...

    def pull_queued(self) -> None: ...

    def expand(self) -> None: ...

    def answer(self, answer: Answer) -> None: ...


def build_key_bindings(actions: KeyActions) -> KeyBindings:
    """Bindings that take priority over prompt_toolkit's defaults (the app's bindings come after them)."""
    kb = KeyBindings()
    question = Condition(actions.has_question)
    typing = ~question

    def bind(*keys: str | Keys, run: Callable[[], None], when: Filter = typing) -> None:
        kb.add(*keys, filter=when)(lambda _event: run())

    bind("enter", run=lambda: actions.submit("steer"))
    bind("escape", "enter", run=lambda: actions.submit("follow_up"))
    bind("escape", run=actions.escape)
    bind("c-c", run=actions.interrupt_key, when=Always())
    bind(Keys.SIGINT, run=actions.interrupt_key, when=Always())  # prompt_toolkit ignores it by default
    bind("c-r", run=actions.redirect)
    bind("up", run=actions.pull_queued, when=typing & Condition(actions.can_pull_queued))
    bind("c-o", run=actions.expand, when=Always())

    @kb.add("c-j", filter=typing)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.newline(copy_margin=False)

    @kb.add("tab", filter=typing)
    def _complete(event: KeyPressEvent) -> None:
        from ink.frontends.tui.completion import complete_slash

        complete_slash(event.current_buffer)

    @kb.add("c-d", filter=typing)
    def _quit(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.delete()
        else:
            actions.quit_key()

    _question_keys(kb, actions, question)
    return kb


def _question_keys(kb: KeyBindings, actions: KeyActions, question: Condition) -> None:
    """While a permission question is open, y/a/n (and Esc) answer it and every other key but Ctrl+C
    and Ctrl+O is swallowed: the question has the keyboard until it is answered."""
    answers: tuple[tuple[str, Answer], ...] = (
        ("y", "allow"),
        ("a", "always"),
        ("n", "deny"),
        ("escape", "deny"),
    )
    for key, answer in answers:
        kb.add(key, filter=question)(partial(_answer, actions, answer))
    for key in (Keys.Any, "enter", "c-j", "tab", "backspace", "delete", "up", "down", "c-r", "c-d"):
        kb.add(key, filter=question)(_held)


def _answer(actions: KeyActions, answer: Answer, event: KeyPressEvent) -> None:
    actions.answer(answer)


def _held(event: KeyPressEvent) -> None:
    """Swallow the key: it neither edits the input nor answers the question."""
