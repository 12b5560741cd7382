"""The key map: each key calls one method of the app; the controller does the rest.

``KEYS`` is the one list of what each key does: ``/help`` prints it and the README copies it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol

from prompt_toolkit.filters import Always, Condition, Filter
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from ink.vocabulary import Answer, InputMode

KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send; while a run goes on, queue it as a steer (taken before the next model call)"),
    ("Alt+Enter", "queue as a follow-up (taken when the model would stop)"),
    ("Ctrl+J", "new line"),
    ("Esc", "interrupt the run at once: the model stream and tools stop, queued inputs come back here"),
    ("Esc Esc", "on an empty input: rewind files and/or conversation to before an earlier input"),
    ("Ctrl+C", "running: interrupt; again while it stops: quit at once (exit 130)"),
    ("", "idle: clear the input; twice on an empty input: quit"),
    ("Ctrl+R", "interrupt and redirect: stop the current work and send the input now"),
    ("Up", "on an empty input while a run goes on: take the last queued input back to edit it"),
    ("Ctrl+O", "show a folded output whole, with the call it belongs to; again: the one before"),
    ("Ctrl+D", "quit (on an empty input)"),
    ("Tab", "complete: a command's name after /, its argument (/model, /resume), a path after @"),
    ("Shift+Tab", "switch the permission mode: ask -> accept-edits -> yolo (shown in the status line)"),
    ("Ctrl+G", "write the input in $VISUAL/$EDITOR; saved, it comes back here"),
    ("Ctrl+T", "while sub-agents run: pick the next one (its line opens); /agents stop or steer it"),
    ("Up (history)", "idle, empty input: earlier prompts of this project; with text: those starting so"),
    ("y / a / n", "answer a permission question: allow once / always allow / deny (Esc denies too)"),
    ("", "only on an empty input, once the question has been shown for 0.5 s; else they type"),
    ("Alt+y / a / n", "answer a permission question whatever the input holds (the text stays)"),
)

ALWAYS = Always()


class KeyActions(Protocol):
    """What the keys do; the TUI app implements it."""

    def has_question(self) -> bool: ...

    def answer_keys_live(self) -> bool: ...

    def question_shown_long_enough(self) -> bool: ...

    def can_pull_queued(self) -> bool: ...

    def submit(self, mode: InputMode) -> None: ...

    def redirect(self) -> None: ...

    def escape(self) -> None: ...

    def interrupt_key(self) -> None: ...

    def quit_key(self) -> None: ...

    def pull_queued(self) -> None: ...

    def expand(self) -> None: ...

    def answer(self, answer: Answer) -> None: ...

    def cycle_mode(self) -> None: ...

    def edit_in_editor(self) -> None: ...

    def has_sub_agents(self) -> bool: ...

    def pick_sub_agent(self) -> None: ...


def build_key_bindings(actions: KeyActions) -> KeyBindings:
    """Bindings that take priority over prompt_toolkit's defaults (the app's bindings come after them).

    A permission question never takes the keyboard: keys type into the editor as usual, and only the
    answer keys, when ``answer_keys_live`` (an empty editor, the question shown long enough), answer it.
    """
    kb = KeyBindings()
    question = Condition(actions.has_question)
    live = question & Condition(actions.answer_keys_live)

    def bind(*keys: str | Keys, run: Callable[[], None], when: Filter = ALWAYS) -> None:
        kb.add(*keys, filter=when)(lambda _event: run())

    bind("enter", run=lambda: actions.submit("steer"))
    bind("escape", "enter", run=lambda: actions.submit("follow_up"))
    bind("escape", run=actions.escape, when=~question)
    bind("c-c", run=actions.interrupt_key)
    bind(Keys.SIGINT, run=actions.interrupt_key)  # prompt_toolkit ignores it by default
    bind("c-r", run=actions.redirect)
    bind("up", run=actions.pull_queued, when=Condition(actions.can_pull_queued))
    bind("c-o", run=actions.expand)
    bind("s-tab", run=actions.cycle_mode)
    bind("c-g", run=actions.edit_in_editor)
    bind("c-t", run=actions.pick_sub_agent, when=Condition(actions.has_sub_agents))  # else: transpose

    @kb.add("c-j")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.newline(copy_margin=False)

    @kb.add("tab")
    def _complete(event: KeyPressEvent) -> None:
        from ink.frontends.tui.completion import complete_slash

        complete_slash(event.current_buffer)

    @kb.add("c-d")
    def _quit(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.delete()
        else:
            actions.quit_key()

    _question_keys(kb, actions, question, live)
    return kb


def _question_keys(kb: KeyBindings, actions: KeyActions, question: Filter, live: Filter) -> None:
    """y/a/n answer a question only while its keys are live; before that they type (no binding matches).
    Alt+y/a/n are deliberate: they answer whatever the editor holds, once the question was shown long
    enough. Esc denies after that delay, and is swallowed before (never an abort meant for a question
    the user has not read)."""
    answers: tuple[tuple[str, Answer], ...] = (("y", "allow"), ("a", "always"), ("n", "deny"))
    for key, answer in answers:
        kb.add(key, filter=live)(partial(_answer, actions, answer))
        kb.add("escape", key, filter=question)(partial(_deliberate, actions, answer))
    kb.add("escape", filter=question)(partial(_escape_question, actions))


def _answer(actions: KeyActions, answer: Answer, event: KeyPressEvent) -> None:
    actions.answer(answer)


def _deliberate(actions: KeyActions, answer: Answer, event: KeyPressEvent) -> None:
    if actions.question_shown_long_enough():
        actions.answer(answer)


def _escape_question(actions: KeyActions, event: KeyPressEvent) -> None:
    if actions.question_shown_long_enough():
        actions.answer("deny")
