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
    (
        "Esc",
        "interrupt the run at once: the model stream and tools stop, queued inputs come back here; with a "
        "permission question shown too (the call is not executed)",
    ),
    ("Esc Esc", "on an empty input: rewind files and/or conversation to before an earlier input"),
    (
        "Ctrl+C",
        "running: interrupt; again while it stops: quit at once (exit 130). Idle: clear the input; twice "
        "on an empty input: quit",
    ),
    (
        "Ctrl+R",
        "idle: search the prompt history (type to filter; ctrl+r older; enter takes it). While a run goes "
        "on: interrupt and redirect: stop the current work and send the input now",
    ),
    ("Up", "on an empty input while a run goes on: take the last queued input back to edit it"),
    ("Ctrl+O", "show a folded output whole, with the call it belongs to; again: the one before"),
    ("Ctrl+D", "quit (on an empty input)"),
    ("Ctrl+Z", "suspend ink to the shell; fg brings it back"),
    (
        "/ and @",
        "a menu of commands (after /), a command's values (/model, /resume), files and MCP resources "
        "(after @), filtered fuzzily as you type: ↑↓ choose, Tab pick, Enter run a command, Esc close",
    ),
    ("Tab", "pick the menu's entry; with the menu closed by Esc: open it again"),
    ("Shift+Tab", "switch the permission mode: ask -> accept-edits -> yolo (shown in the status line)"),
    ("Ctrl+G", "write the input in $VISUAL/$EDITOR; saved, it comes back here"),
    ("Ctrl+T", "while sub-agents run: pick the next one (its line opens); /agents stop or steer it"),
    ("Ctrl+B", "while bash runs: send it to the background; it runs on as a job (/jobs), the run goes on"),
    (
        "Ctrl+S",
        "while a run goes on: pause it at the next safe point (what streams or runs finishes, nothing new "
        "starts; the queue stays open); again: resume as if nothing happened",
    ),
    (
        "Up (history)",
        "idle, on an empty input: the earlier prompts of this project; with text typed: the earlier "
        "prompts that start with it",
    ),
    (
        "Tab / Ctrl+O",
        "a permission question shown: hand it the keyboard (Tab on an empty input; Ctrl+O also shows it "
        "whole), once typing has paused 0.5 s; typed text, Enter and paste never answer it",
    ),
    ("y / a / n", "the question has the keyboard: allow once / always allow (shows the rule) / deny"),
    ("↑ ↓ PgUp PgDn", "the question has the keyboard: scroll what it asks about; Tab: back to the input"),
)

ALWAYS = Always()
ANSWER_KEYS: tuple[tuple[str, Answer], ...] = (("y", "allow"), ("a", "always"), ("n", "deny"))
SCROLL_KEYS: tuple[tuple[str, int], ...] = (
    ("up", -1),
    ("down", 1),
    ("pageup", -10),
    ("pagedown", 10),
    ("home", -1_000_000),
    ("end", 1_000_000),
)


class QuestionActions(Protocol):
    """What the permission question's keys do (``asking.QuestionKeys``)."""

    def question_has_keyboard(self) -> bool: ...

    def can_hand_over(self) -> bool: ...

    def hand_over(self, expanded: bool) -> None: ...

    def take_back(self, typed: str = "") -> None: ...

    def scroll_question(self, rows: int) -> None: ...

    def answer(self, answer: Answer) -> None: ...


class KeyActions(Protocol):
    """What the other keys do; the TUI app implements it."""

    def can_pull_queued(self) -> bool: ...

    def submit(self, mode: InputMode) -> None: ...

    def redirect(self) -> None: ...

    def escape(self) -> None: ...

    def interrupt_key(self) -> None: ...

    def quit_key(self) -> None: ...

    def pull_queued(self) -> None: ...

    def expand(self) -> None: ...

    def cycle_mode(self) -> None: ...

    def edit_in_editor(self) -> None: ...

    def has_sub_agents(self) -> bool: ...

    def pick_sub_agent(self) -> None: ...

    def can_background(self) -> bool: ...

    def background(self) -> None: ...

    def toggle_pause(self) -> None: ...

    def suspend(self) -> None: ...

    def paste(self, text: str) -> None: ...

    def placeholder_before_cursor(self) -> bool: ...

    def delete_placeholder(self) -> None: ...

    def complete(self) -> None: ...


def build_key_bindings(actions: KeyActions, question: QuestionActions) -> KeyBindings:
    """Bindings that take priority over prompt_toolkit's defaults (the app's bindings come after them).

    A permission question never takes the keyboard by itself (R38, ``question``): keys type into the
    editor as usual until a deliberate hand-over (Tab on an empty input, Ctrl+O) after a pause.
    """
    kb = KeyBindings()
    answering = Condition(question.question_has_keyboard)
    _question_keys(kb, question, answering)

    def bind(*keys: str | Keys, run: Callable[[], None], when: Filter = ALWAYS) -> None:
        kb.add(*keys, filter=when)(lambda _event: run())

    bind("enter", run=lambda: actions.submit("steer"), when=~answering)
    bind("escape", "enter", run=lambda: actions.submit("follow_up"), when=~answering)
    bind("escape", run=actions.escape)  # a question shown too: Esc interrupts (R38)
    bind("c-c", run=actions.interrupt_key)
    bind(Keys.SIGINT, run=actions.interrupt_key)  # prompt_toolkit ignores it by default
    bind("c-r", run=actions.redirect, when=~answering)
    bind("up", run=actions.pull_queued, when=~answering & Condition(actions.can_pull_queued))
    bind("c-o", run=actions.expand)
    bind("s-tab", run=actions.cycle_mode, when=~answering)
    bind("c-g", run=actions.edit_in_editor, when=~answering)
    bind("c-z", run=actions.suspend)  # as in a shell: the job stops, `fg` brings it back
    bind("backspace", run=actions.delete_placeholder, when=Condition(actions.placeholder_before_cursor))

    @kb.add(Keys.BracketedPaste, filter=~answering)
    def _paste(event: KeyPressEvent) -> None:
        actions.paste(event.data)

    sub_agents = Condition(actions.has_sub_agents)
    bind("c-t", run=actions.pick_sub_agent, when=~answering & sub_agents)  # else: transpose
    bind("c-b", run=actions.background, when=Condition(actions.can_background))  # else: cursor left
    bind("c-s", run=actions.toggle_pause)  # raw mode has flow control (IXON) off: the key reaches us

    @kb.add("c-j", filter=~answering)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.newline(copy_margin=False)

    @kb.add("tab", filter=~answering)
    def _complete(event: KeyPressEvent) -> None:
        if not event.current_buffer.text and question.can_hand_over():
            question.hand_over(expanded=False)
            return
        actions.complete()

    @kb.add("c-d", filter=~answering)
    def _quit(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.delete()
        else:
            actions.quit_key()

    return kb


def _question_keys(kb: KeyBindings, actions: QuestionActions, answering: Filter) -> None:
    """While the question holds the keyboard (after a hand-over): y/a/n answer, the scroll keys move
    its preview, Tab gives the keyboard back; any other printable key or a paste gives it back *and*
    goes into the editor (never lost, never an answer). Enter and Alt+Enter do nothing there. Keys
    bound for every state (Esc, Ctrl+C, Ctrl+O) are bound after these and win over ``<any>``."""

    @kb.add(Keys.Any, filter=answering)
    def _other(event: KeyPressEvent) -> None:
        if event.data and event.data.isprintable():
            actions.take_back(event.data)

    @kb.add(Keys.BracketedPaste, filter=answering)
    def _paste(event: KeyPressEvent) -> None:
        actions.take_back(event.data.replace("\r\n", "\n").replace("\r", "\n"))

    kb.add("tab", filter=answering)(lambda _event: actions.take_back())
    kb.add("enter", filter=answering)(lambda _event: None)  # not an answer: only y/a/n are
    kb.add("escape", "enter", filter=answering)(lambda _event: None)  # Alt+Enter: not an interrupt
    for key, answer in ANSWER_KEYS:
        kb.add(key, filter=answering)(partial(_answer, actions, answer))
        kb.add(key.upper(), filter=answering)(partial(_answer, actions, answer))
    for key, rows in SCROLL_KEYS:
        kb.add(key, filter=answering)(partial(_scroll, actions, rows))


def _answer(actions: QuestionActions, answer: Answer, event: KeyPressEvent) -> None:
    actions.answer(answer)


def _scroll(actions: QuestionActions, rows: int, event: KeyPressEvent) -> None:
    actions.scroll_question(rows)
