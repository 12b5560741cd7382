"""R38 as a property: generated interleavings of typing, Enter, Alt+Enter and paste, with the permission
question appearing before any of them, never answer it; with hand-over, scroll and answer keys mixed in,
it is answered exactly when the deliberate sequence occurred (a hand-over after a pause, then y/a/n).

Against the real key handling: the real TUI app (``TuiApp`` over a real ``build_app``, its question
asked by the real permission hook for a real bash call) reads the bytes from a pipe as it reads a
terminal (prompt_toolkit's parser, key processor and the app's bindings). Time is the test's: the app's
clock is injected, so a pause is a step of the clock, never a sleep.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.keys import Keys
from prompt_toolkit.output import DummyOutput

from ink.config import Flags, load_settings
from ink.frontends.tui.app import TuiApp
from ink.frontends.tui.theme import make_theme
from ink.run.events import PermissionResolved, RunEvent
from ink.wiring import build_app
from tests.fakeserver import Gate, Reply, say, tool_call
from tests.scripted_provider import ScriptedProvider
from tests.waiting import wait_until

DELAY = 0.5  # question_delay
Action = tuple[str, Any]
KEYS = {
    "enter": "\r",
    "alt_enter": "\x1b\r",
    "tab": "\t",
    "ctrl_o": "\x0f",
    "pgdn": "\x1b[6~",
    "up": "\x1b[A",
}
TEXT = st.text(alphabet="ynaYNAbc z.,-?", min_size=1, max_size=5)
PASTED = st.text(alphabet="yna \n\r\tq", min_size=1, max_size=8)
PAUSES = st.sampled_from([0.0, 0.1, 0.3, 0.49, 0.5, 0.6, 1.0, 5.0])
TYPING = st.one_of(
    st.tuples(st.just("type"), TEXT),
    st.tuples(st.just("enter"), st.none()),
    st.tuples(st.just("alt_enter"), st.none()),
    st.tuples(st.just("paste"), PASTED),
    st.tuples(st.just("pause"), PAUSES),
)
DELIBERATE = st.one_of(
    TYPING,
    st.tuples(st.sampled_from(["tab", "ctrl_o", "pgdn", "up"]), st.none()),
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Outcome(msgspec.Struct):
    decisions: list[str]
    editor: str
    queued: list[str]
    expected: str | None = None  # what the oracle says the answer is (None: no answer)


def key_bytes(action: Action) -> str:
    kind, value = action
    if kind == "type":
        return str(value)
    if kind == "paste":
        return f"\x1b[200~{value}\x1b[201~"
    return KEYS[kind]


def key_count(data: str) -> int:
    """How many keys prompt_toolkit's parser makes of ``data`` (the app counts the same ones)."""
    keys: list[object] = []
    parser = Vt100Parser(keys.append)
    parser.feed(data)
    parser.flush()
    return sum(1 for key in keys if getattr(key, "key", None) != Keys.CPRResponse)


@contextmanager
def project() -> Iterator[tuple[Path, dict[str, str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "proj").mkdir()
        env = {"INK_HOME": str(root / "inkhome"), "HOME": str(root), "PATH": "/usr/bin:/bin"}
        yield root / "proj", env


async def play(actions: list[Action], question_at: int, one_write: bool) -> Outcome:
    """Run ``actions`` against the real app; the question appears before ``actions[question_at]``
    (after all of them when it is their length). ``one_write``: keys between two pauses reach the app
    in one read, as type-ahead does when it is typed faster than the app reads."""
    with project() as (cwd, env):
        flags = Flags(base_url="http://127.0.0.1:9/v1", api_key="k", permission_mode="ask", no_session=True)
        gate = Gate()
        provider = ScriptedProvider(Reply([gate, tool_call("bash", {"command": "true"}, id="c1")]), say("ok"))
        core = build_app(load_settings(flags, env, cwd), checkpoints=False, provider=provider)
        decisions: list[str] = []

        def on_event(event: RunEvent) -> None:
            if isinstance(event, PermissionResolved):
                decisions.append(event.decision)

        core.controller.subscribe(on_event)
        clock = Clock()
        try:
            with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
                tui = TuiApp(core, clock=clock, theme=make_theme("dark", color=False))
                running = asyncio.ensure_future(tui.run())
                try:
                    player = Player(tui, pipe, clock, gate)
                    await player.start()
                    expected = await player.play(actions, question_at, one_write, decisions)
                    queued = [entry.text for entry in core.controller.queue()]
                    outcome = Outcome(list(decisions), tui.buffer.text, queued, expected)
                    core.controller.abort("user")
                    await until(lambda: core.controller.state == "idle", "the run's end")
                finally:
                    tui.quit(0)
                    await asyncio.wait_for(running, 10)
                    tui.close()
        finally:
            await core.aclose()
    return outcome


class Player:
    """Sends the keys and the clock's steps, and keeps the oracle's account of the deliberate sequence:
    a hand-over key counts when the question has been drawn ``DELAY`` seconds and no key came for as
    long (Tab only on an empty input); then y/a/n answer, scroll keys and Ctrl+O keep the keyboard at
    the question, Enter and Alt+Enter do nothing, Tab and any other key or paste give it back."""

    def __init__(self, tui: TuiApp, pipe: Any, clock: Clock, gate: Gate) -> None:
        self.tui, self.pipe, self.clock, self.gate = tui, pipe, clock, gate
        self.keys_done = 0
        tui.app.key_processor.after_key_press += self._counted
        self.shown_at: float | None = None
        self.last_key = -1e9
        self.holding = False
        self.expected: str | None = None

    def _counted(self, _processor: object) -> None:
        self.keys_done += 1

    async def start(self) -> None:
        await until(lambda: self.tui.app.is_running, "the app to run")
        self.tui.controller.submit("go")
        await until(lambda: self.gate.reached.is_set(), "the model call")

    async def play(
        self, actions: list[Action], question_at: int, one_write: bool, decisions: list[str]
    ) -> str | None:
        pending = ""
        for index, action in enumerate([*actions, ("pause", 0.0)]):
            if index == question_at or action[0] == "pause":
                await self.send(pending)
                pending = ""
            if index == question_at:
                await self.ask()
            if action[0] == "pause":
                self.clock.now += float(action[1])
                continue
            self.expect(action)
            data = key_bytes(action)
            if one_write:
                pending += data
            else:
                await self.send(data)
        if question_at >= len(actions):
            await self.ask()
        if self.expected is not None:
            await until(lambda: bool(decisions), "the answer")
        return self.expected

    async def send(self, data: str) -> None:
        if not data:
            return
        target = self.keys_done + key_count(data)
        self.pipe.send_text(data)
        await until(lambda: self.keys_done >= target, f"the keys {data!r} handled")

    async def ask(self) -> None:
        """The question appears: the model's reply goes on to its bash call, which asks."""
        self.gate.open()
        tui = self.tui
        await until(lambda: bool(tui.view.questions), "the question")
        request_id = tui.view.questions[0].request_id
        await until(lambda: tui.questions.focus.painted_at(request_id) is not None, "the question drawn")
        self.shown_at = self.clock.now

    def expect(self, action: Action) -> None:
        """The oracle, before the keys of ``action`` are sent (the editor's text is the app's own)."""
        kind, value = action
        now = self.clock.now
        if self.expected is not None:
            return  # answered: the question is gone
        if self.holding:
            self._holding(kind, value)
        elif kind in ("tab", "ctrl_o") and self.shown_at is not None:
            paused = now - self.shown_at >= DELAY and now - self.last_key >= DELAY
            empty = kind == "ctrl_o" or not self._editor_after_pending()
            self.holding = paused and empty
        self.last_key = now

    def _holding(self, kind: str, value: Any) -> None:
        if kind == "type":
            first = str(value)[0]
            answers = {"y": "allow", "a": "always", "n": "deny"}
            self.expected = answers.get(first.lower())
            self.holding = False
        elif kind in ("paste", "tab"):
            self.holding = False

    def _editor_after_pending(self) -> str:
        return self.tui.buffer.text  # sent one action at a time whenever a Tab could hand over


async def until(predicate: Any, what: str) -> None:
    await wait_until(predicate, 20.0, what)


def run(actions: list[Action], question_at: int, one_write: bool) -> Outcome:
    return asyncio.run(play(actions, question_at, one_write))


def typed_letters(actions: list[Action]) -> dict[str, int]:
    text = "".join(str(value) for kind, value in actions if kind in ("type", "paste"))
    return {letter: text.count(letter) for letter in "ynaYNA"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    actions=st.lists(TYPING, min_size=1, max_size=12),
    question_at=st.integers(min_value=0, max_value=12),
    one_write=st.booleans(),
)
@example(  # issue 23 item 1: shown a while, then `queued msg` Enter `another` in one go
    actions=[("pause", 1.0), ("type", "queued msg"), ("enter", None), ("type", "another")],
    question_at=0,
    one_write=True,
)
@example(actions=[("pause", 5.0), ("type", "y")], question_at=0, one_write=False)  # alone, after a pause
@example(actions=[("pause", 5.0), ("paste", "a\n")], question_at=0, one_write=False)
def test_typing_enter_and_paste_never_answer_a_question(
    actions: list[Action], question_at: int, one_write: bool
) -> None:
    question_at = min(question_at, len(actions))
    outcome = run(actions, question_at, one_write)
    assert outcome.decisions == []  # R38: still open (then cancelled by the test's own abort)
    kept = outcome.editor + "".join(outcome.queued)
    assert {letter: kept.count(letter) for letter in "ynaYNA"} == typed_letters(actions)  # nothing eaten


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    actions=st.lists(DELIBERATE, min_size=1, max_size=12),
    question_at=st.integers(min_value=0, max_value=12),
)
@example(actions=[("pause", 0.5), ("tab", None), ("type", "a")], question_at=0)
@example(
    actions=[("pause", 0.6), ("ctrl_o", None), ("pgdn", None), ("enter", None), ("type", "n")], question_at=0
)
@example(  # a Tab in the same burst as an Enter is no hand-over
    actions=[("pause", 0.6), ("type", "x"), ("enter", None), ("tab", None), ("type", "y")], question_at=0
)
@example(actions=[("pause", 0.4), ("tab", None), ("type", "y")], question_at=0)
def test_a_question_is_answered_exactly_after_the_deliberate_sequence(
    actions: list[Action], question_at: int
) -> None:
    question_at = min(question_at, len(actions))
    outcome = run(actions, question_at, one_write=False)
    if outcome.expected is None:
        assert outcome.decisions == []
    else:
        assert outcome.decisions == [outcome.expected]
