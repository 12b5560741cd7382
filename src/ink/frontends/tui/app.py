"""The interactive terminal UI: a prompt_toolkit ``Application`` (not full screen) over the run controller.

The UI renders events and forwards keys; the controller owns every run-control decision (queue, abort,
restore, flush). Events only append to the view (the stream never waits for the UI); a paint loop prints
finished blocks above the input and redraws at most ``FRAMES_PER_SECOND`` times a second. Blocks are
written between an erase and a redraw of the app without leaving raw mode, so a key typed meanwhile is
never echoed into the scrollback by the terminal.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import merge_key_bindings
from prompt_toolkit.styles import Style

from ink.agent.events import PlanUpdate
from ink.agent.tasks import cancel_and_wait
from ink.app import App
from ink.app.jobs import resume_note
from ink.app.plan import PlanKeeper
from ink.frontends.tui.asking import QuestionKeys
from ink.frontends.tui.blocks import Block
from ink.frontends.tui.commands import is_command, run_command, shorten_home
from ink.frontends.tui.editor import replace_text, restore_into
from ink.frontends.tui.external_editor import edit_in_editor
from ink.frontends.tui.file_index import FileIndex
from ink.frontends.tui.history import HistoryBuffer, prompt_history
from ink.frontends.tui.history_search import HistorySearch
from ink.frontends.tui.history_search import key_bindings as search_key_bindings
from ink.frontends.tui.jobs import status_count
from ink.frontends.tui.keys import build_key_bindings
from ink.frontends.tui.layout import INPUT_ROWS, build_layout
from ink.frontends.tui.mentions import Attached, attach
from ink.frontends.tui.modes import cycle_permission_mode
from ink.frontends.tui.notify import Notifier
from ink.frontends.tui.palette import Palette, describe_command
from ink.frontends.tui.palette import key_bindings as palette_key_bindings
from ink.frontends.tui.palette_sources import AppSources
from ink.frontends.tui.panels import (
    QUEUE_ROWS,
    Status,
    live_fragments,
    queue_fragments,
    sandbox_label,
    status_fragments,
)
from ink.frontends.tui.pastes import Pastes
from ink.frontends.tui.pausing import PAUSED_HINT, status_state, toggle_pause
from ink.frontends.tui.plan import plan_fragments, plan_rows, showing
from ink.frontends.tui.question import QuestionFocus
from ink.frontends.tui.rewind import RewindPicker
from ink.frontends.tui.rewind import key_bindings as rewind_key_bindings
from ink.frontends.tui.scrollback import InlineApplication, Scrollback
from ink.frontends.tui.served_models import ServedModels
from ink.frontends.tui.theme import Theme, make_theme
from ink.frontends.tui.typeahead import split_typed
from ink.frontends.tui.view import EventView
from ink.run.controller import QueueError
from ink.run.events import BangStart, InputRestored, RunEnd, RunEvent, RunStart
from ink.vocabulary import InputMode
from ink.wiring.mcp_part import mcp_of

log = logging.getLogger(__name__)

FRAMES_PER_SECOND = 20
ESCAPE_SECONDS = 0.01  # a lone Esc byte is the Esc key once nothing followed it for this long
TICK_SECONDS = 0.25  # elapsed times and the spinner move this often while something runs
HINTS = {
    "idle": "enter send · alt+enter follow-up · ctrl+j new line · /help keys and commands",
    "running": "enter steer · alt+enter follow-up · esc interrupt · ctrl+r redirect · ↑ edit queued",
    "pulled-follow-up": "enter queues it again as a follow-up · esc interrupt · ctrl+r redirect",
    "aborting": "stopping the run… ctrl+c again quits at once",
    "armed": "press ctrl+c again to quit",
    "answering": "y/a/n answer · tab back to the input · esc interrupt",
    "paused": PAUSED_HINT,
    "pausing": PAUSED_HINT,
}


class TuiApp:
    """One interactive session. ``run`` returns the exit status; the caller closes ``core``."""

    def __init__(
        self, core: App, *, clock: Callable[[], float] = time.monotonic, theme: Theme | None = None
    ) -> None:
        """``theme``: the colours (``theme.choose``; default dark)."""
        theme = theme or make_theme("dark")
        self._core = core
        self.controller = core.controller
        self._clock = clock
        if (mcp := mcp_of(core)) is not None:
            mcp.ask_the_user()  # an MCP server's question shows as a form (tui/mcp_question.py)
        self._view = EventView(clock, core.tools.find)
        self.scrollback = Scrollback(theme)
        self.buffer = HistoryBuffer(
            multiline=True,
            history=prompt_history(core.settings.ink_home, core.settings.cwd),
            enable_history_search=True,  # Up with text typed finds the earlier prompts starting so
        )
        self.buffer.on_text_changed += lambda _buffer: self._text_changed()
        self._pulled_mode: InputMode | None = None  # the mode of a queued input taken back with Up
        self.pastes = Pastes()
        self._dirty = asyncio.Event()
        self.served_models = ServedModels(core, self._say, self._models_answered)  # /model on a server
        self._sources = AppSources(core, self.served_models)
        files = FileIndex(core.settings.cwd, self._files_listed)
        self.palette = Palette(self._sources, files, self._dirty.set, core.tasks.spawn)  # / and @ menus
        self._loop = asyncio.get_running_loop()
        focus = QuestionFocus(core.settings.question_delay, clock)
        self.questions = QuestionKeys(
            self._view, focus, lambda: self.controller.permissions, self.buffer, self._dirty.set, theme
        )
        self._quit_armed = False
        self._aborting = False
        self._exited = False
        self._unsent: list[str] = []  # input handed back after the UI closed: printed at the end
        self.rewind = RewindPicker(core, self._say, self._dirty.set, clock, self._view.hold_notes)
        self.search = HistorySearch(self.buffer, self._dirty.set)  # Ctrl+R while idle
        answering = Condition(self.questions.question_has_keyboard)
        self.app: Application[int] = InlineApplication(
            self._width_changed,
            layout=build_layout(
                self.buffer,
                live=self._live,
                question=self._question,
                queue=self._queue,
                status=self._status,
                has_question=self.questions.has_question,
                has_queue=lambda: bool(self._view.queue),
                picker=lambda: self.rewind.fragments(self._width()),  # type: ignore[arg-type,return-value]
                has_picker=lambda: self.rewind.is_open,
                menu=self._menu,
                has_menu=lambda: self.search.is_open or self.palette.is_open,
                plan=lambda: plan_fragments(self._plan(), self._width()),
                has_plan=lambda: showing(self._plan()),
            ),
            key_bindings=merge_key_bindings(
                [
                    build_key_bindings(self, self.questions),
                    rewind_key_bindings(self.rewind),
                    palette_key_bindings(self.palette, self.buffer, self, ~answering),
                    search_key_bindings(self.search, ~answering),
                ]
            ),
            style=Style.from_dict(dict(theme.styles)),
            full_screen=False,
            erase_when_done=True,
            mouse_support=False,
        )
        # Esc must interrupt at once. A terminal sends an escape sequence (an arrow, Alt+Enter)
        # in one write, so a lone Esc is a key after ESCAPE_SECONDS, and no binding waits for a second
        # key typed by hand: Esc then Enter is no longer Alt+Enter.
        self.app.ttimeoutlen = ESCAPE_SECONDS
        self.app.timeoutlen = 0.0
        self._notifier = Notifier(core.settings.notify, self._write, core.tasks.spawn, clock)  # R46
        self.app.key_processor.before_key_press += lambda _processor: self._notifier.key_pressed()
        # The pause a question's hand-over waits for is measured from every key the app handles.
        self.app.key_processor.after_key_press += lambda _processor: focus.key_pressed()
        self._unsubscribe = self.controller.subscribe(self._on_event)

    @property
    def core(self) -> App:
        return self._core

    @property
    def view(self) -> EventView:
        return self._view

    # -- running ----------------------------------------------------------------------------------

    async def run(
        self, first_prompt: str | None = None, banner: list[Block] | None = None, typed: str = ""
    ) -> int:
        """Run until the user quits; returns 0, or the status ``quit`` was given (143 on SIGTERM).
        ``typed``: what was typed before the UI was up (``typeahead``): its lines are sent as Enter
        would send them, its unended rest waits in the editor."""
        if banner:  # before the app is first drawn: erased on the screen's top row (its first print) the
            # app was a "clear screen" to tmux (scroll-on-clear), which kept a stale copy in its scrollback
            self._write(self.scrollback.paint(banner, self._width()))
        ended = resume_note(self._core.jobs, "/jobs")  # R43: what the last ink process of this session ended
        if ended is not None:
            self._view.print(Block("warning", ended))
            self._dirty.set()
        if first_prompt:
            self.controller.submit(first_prompt)
        lines, rest = split_typed(typed)
        for line in lines:
            replace_text(self.buffer, line)
            self.submit("steer")
        replace_text(self.buffer, rest)
        painter = asyncio.ensure_future(self._paint_loop())
        try:
            status = await self.app.run_async(handle_sigint=True)
        finally:
            self._exited = True
            await cancel_and_wait(painter)
            self._flush_printed()
        return status

    def quit(self, status: int) -> None:
        if self.app.is_running and not self.app.future.done():  # type: ignore[union-attr]
            self.app.exit(result=status)

    def erase(self) -> None:
        """Before an exit that skips prompt_toolkit's clean-up: the app's rows cleared, the cursor on the
        first of them, so what is printed next starts on a clean line. Best effort."""
        try:
            if self.app.is_running:
                self.app.renderer.erase()
        except Exception:
            log.debug("erasing the screen before the exit failed", exc_info=True)

    def close(self) -> None:
        """After ``run``: stop listening; print whatever is still pending, unsent input included (R30)."""
        self._flush_printed()
        self._unsubscribe()
        if self._unsent:
            self._write("".join(f"not sent: {text}\n" for text in self._unsent))

    # -- events -----------------------------------------------------------------------------------

    def _on_event(self, event: RunEvent) -> None:
        self._view.on_event(event)
        self._notifier.on_event(event)
        if isinstance(event, RunStart | BangStart):
            self._aborting = False
        restored = event.restored_input if isinstance(event, RunEnd | InputRestored) else ()
        if restored:
            texts = [self._view.typed.get(r.input_id, r.text) for r in restored]  # as typed
            if self._exited:
                self._unsent.extend(texts)
            else:
                restore_into(self.buffer, texts)  # R22, R30
        self._dirty.set()

    # -- painting ---------------------------------------------------------------------------------

    async def _paint_loop(self) -> None:
        """Print finished blocks and redraw, at most FRAMES_PER_SECOND times a second; while something
        runs, also every TICK_SECONDS for the elapsed times; once a resize settled, lay it all out."""
        frame = 1.0 / FRAMES_PER_SECOND
        while True:
            busy = self.controller.state == "running" or bool(self._view.tools)
            relayout = self.scrollback.due()
            waits = [t for t in (TICK_SECONDS if busy else None, relayout) if t is not None]
            try:
                await asyncio.wait_for(self._dirty.wait(), min(waits) if waits else None)
            except TimeoutError:
                pass
            self._dirty.clear()
            if self.controller.state == "idle":
                self._aborting = False
            if self.app.is_running and self.app.output.responds_to_cpr:
                # A cursor-position answer still on its way describes the screen before this print:
                # it would make the app claim the wrong rows. Bounded: 1 s when the terminal never answers.
                await self.app.renderer.wait_for_cpr_responses()
            try:
                self._frame()
            except Exception:  # a drawing bug must not stop the drawing, nor the run
                log.exception("drawing the screen failed")
            await asyncio.sleep(frame)

    def _frame(self) -> None:
        """Print the finished blocks above the app, then redraw it under them (not while a stray print
        is being shown: it has the terminal). After a change of width, everything is printed again."""
        app = self.app
        if app.is_running and getattr(app, "_running_in_terminal", False):
            self._dirty.set()
            return
        width = self._width()
        relayout = app.is_running and self.scrollback.due() == 0
        blocks = self._view.take_printed()
        if (blocks or relayout) and app.is_running:
            app.renderer.erase()  # the cursor to the app's first row, the app's rows cleared
        text = self.scrollback.relayout(width) if relayout else ""
        self._write(text + self.scrollback.paint(blocks, width) if blocks else text)
        if relayout:
            app.renderer.request_absolute_cursor_position()  # the rows below the cursor changed
        app.invalidate()

    def _width_changed(self) -> None:
        self.scrollback.resized()
        self._dirty.set()

    def _flush_printed(self) -> None:
        blocks = self._view.take_printed()
        if blocks:
            self._write(self.scrollback.paint(blocks, self._width()))

    def _write(self, text: str) -> None:
        if not text:
            return
        output = self.app.output
        output.write_raw(text)
        output.flush()

    def _width(self) -> int:
        return self.app.output.get_size().columns

    # -- the screen's parts -----------------------------------------------------------------------

    def _live(self) -> StyleAndTextTuples:
        """As many rows as the screen has left once everything else is drawn: the app never scrolls."""
        size = self.app.output.get_size()
        editor = min(INPUT_ROWS, self.buffer.text.count("\n") + 1)
        queue = min(len(self._view.queue), QUEUE_ROWS) + 1 if self._view.queue else 0
        question = _rows(self._question()) if self._view.questions else 0
        menu = (self.search.rows() or self.palette.rows()) + plan_rows(self._plan())
        rows = max(2, size.rows - editor - queue - question - menu - 4)  # the rule, the status, one spare
        return live_fragments(self._view, size.columns, rows, self._clock())  # type: ignore[return-value]

    def _menu(self) -> StyleAndTextTuples:
        menu = self.search if self.search.is_open else self.palette
        return menu.fragments(self._width())  # type: ignore[return-value]

    def _question(self) -> StyleAndTextTuples:
        rows = self.questions.rows_for(self.app.output.get_size().rows)
        return self.questions.fragments(self._width(), rows)  # type: ignore[return-value]

    def _plan(self) -> PlanUpdate | None:
        keeper = self._core.part(PlanKeeper)
        return keeper.plan if keeper is not None else None

    def _queue(self) -> StyleAndTextTuples:
        return queue_fragments(self._view.queue, self._width())  # type: ignore[return-value]

    def _status(self) -> StyleAndTextTuples:
        state: str = self.controller.state
        if state == "running" and self._aborting:
            state = "aborting"
        state = status_state(self.controller, state)  # R44: pausing, then paused once held
        view, usage, settings = self._view, self._core.usage, self._core.settings
        activity = view.activity if state != "idle" else ""
        answering = self.questions.question_has_keyboard()
        hint = HINTS["armed" if self._quit_armed else "answering" if answering else state]
        if self._pulled_mode == "follow_up" and state == "running" and not view.questions:
            hint = HINTS["pulled-follow-up"]
        if self.search.is_open:
            hint = self.search.hint()
        elif self.palette.is_open:
            hint = self.palette.hint()
        elif (described := describe_command(self.buffer.text, self._sources.commands())) is not None:
            hint = described  # what the command in the editor does
        picked = view.sub_agents.running.get(view.sub_agents.selected or "")
        if picked is not None and not view.questions and not self._quit_armed:
            hint = f"{picked.label()} picked: /agents steer TEXT · /agents stop · ctrl+t next"
        used = usage.session
        prompt = used.input_tokens + used.cache_read_tokens + used.cache_write_tokens
        mark = {"estimated": "~", "missing": "≥"}.get(used.accuracy or "", "")  # not the service's count
        tokens = f"{mark}{_count(prompt)} in · {_count(used.output_tokens)} out"
        cost = f"${usage.session_cost:.2f}" if usage.session_cost is not None else ""
        if usage.session_cost is None and usage.known_cost:  # some calls of a model without prices
            cost = f"≥${usage.known_cost:.2f}"
        status = Status(
            state,
            activity,
            self._clock() - view.activity_since,
            settings.model,
            shorten_home(settings.cwd),
            tokens,
            cost if usage.session_cost != 0 else "",
            hint,
            settings.permission_mode,
            sandbox_label(self._core.sandbox.mode),
            status_count(self._core.jobs),
        )
        return status_fragments(status, self._width())  # type: ignore[return-value]

    # -- keys (KeyActions) ------------------------------------------------------------------------

    def can_pull_queued(self) -> bool:
        return self.controller.state == "running" and not self.buffer.text and bool(self.controller.queue())

    def submit(self, mode: InputMode) -> None:
        text = self.buffer.text
        if not text.strip():
            return
        if mode == "steer" and self._pulled_mode is not None:  # Enter keeps the mode it was queued with
            mode = self._pulled_mode
        self._clear_input(text)
        if is_command(text.strip()):
            run_command(self, self.pastes.expand(text.strip()), mode, typed=text.strip())
        else:  # without the space a pick from the menu left at its end
            self._send((text[1:] if text.startswith("//") else text).rstrip(" "), mode)
        self._dirty.set()

    def _clear_input(self, text: str) -> None:
        """The editor emptied, ``text`` kept in the history as it was sent (a paste's text, not its
        placeholder: the placeholder means nothing in another session)."""
        if self.pastes.holds(text):
            self.buffer.history.append_string(self.pastes.expand(text))
            self.buffer.reset()
        else:
            self.buffer.reset(append_to_history=True)

    def _send(self, text: str, mode: InputMode) -> None:
        """``@path`` mentions go with the prompt (their text or listing, an image as image content), and
        so does an image's pasted path; what cannot go is said. A paste's placeholder goes as its text;
        the scrollback shows it as typed."""
        attached = self._attach(text)
        prompt = self.pastes.expand(attached.prompt)
        submitted = self.controller.submit(prompt, mode, attached.images)
        if prompt != attached.prompt:
            self._view.typed[submitted.input_id] = text

    def _attach(self, text: str) -> Attached:
        settings = self._core.settings
        attached = attach(text, settings.cwd, settings.model)
        for problem in attached.problems:
            self._view.print(Block("warning", problem))
        return attached

    def open_rewind(self) -> None:
        """``/rewind``: the picker, as Esc Esc opens it."""
        self.rewind.open()

    def _say(self, block: Block) -> None:
        self._view.print(block)
        self._dirty.set()

    def cycle_mode(self) -> None:
        """Shift+Tab: ask -> accept-edits -> yolo -> ask, from the next tool call on."""
        mode = cycle_permission_mode(self._core)
        if mode is None:
            self._view.print(Block("info", "the permission mode is fixed by this set-up"))
        self._dirty.set()

    def has_sub_agents(self) -> bool:
        return bool(self._view.sub_agents.running)

    def pick_sub_agent(self) -> None:
        """Ctrl+T: open the next running sub-agent's line; /agents then acts on it."""
        self._view.sub_agents.pick_next()
        self._view.changes += 1
        self._dirty.set()

    def can_background(self) -> bool:
        return bool(self._core.jobs.foreground_calls)

    def background(self) -> None:
        """Ctrl+B (R43): the running bash call returns now with its output so far and the job it became;
        its command runs on (/jobs), and the run goes on with the model."""
        sent = self._core.jobs.background_running()
        if not sent:
            self._view.print(Block("info", "no bash call runs: ctrl+b sends a running one to the background"))
        self._dirty.set()

    def toggle_pause(self) -> None:
        """Ctrl+S (R44): pause the run at its next safe point, or resume it."""
        block = toggle_pause(self.controller)
        if block is not None:
            self._view.print(block)
        self._dirty.set()

    def suspend(self) -> None:
        """Ctrl+Z: ink stops as a shell job does (SIGTSTP to its process group, after putting the
        terminal back); ``fg`` resumes it and the screen is drawn again. What runs goes on meanwhile in
        its own processes; ink's own work waits until it is resumed."""
        self.app.suspend_to_background()

    def edit_in_editor(self) -> None:
        """Ctrl+G: the input opens in $VISUAL/$EDITOR (pastes as their text); what is saved there comes
        back into the input."""
        self._core.tasks.spawn(edit_in_editor(self.buffer, self.pastes.expand(self.buffer.text)), "ctrl+g")

    def paste(self, text: str) -> None:
        """A paste goes into the editor; a long one as a placeholder (``pastes``)."""
        self.buffer.insert_text(self.pastes.hold(text.replace("\r\n", "\n").replace("\r", "\n")))

    def placeholder_before_cursor(self) -> bool:
        return self.pastes.ending(self.buffer.document.text_before_cursor) is not None

    def delete_placeholder(self) -> None:
        """Backspace right after a paste's placeholder takes the whole of it away."""
        placeholder = self.pastes.ending(self.buffer.document.text_before_cursor)
        if placeholder is not None:
            self.buffer.delete_before_cursor(len(placeholder))

    def _expand_pastes(self) -> bool:
        text = self.buffer.text
        if not self.pastes.holds(text):
            return False
        replace_text(self.buffer, self.pastes.expand(text))
        return True

    def redirect(self) -> None:
        """R24: abort the current work and run the input next, with what was done kept in the history.
        Idle, there is nothing to redirect: Ctrl+R searches the prompt history instead."""
        text = self.buffer.text
        if self.controller.state == "idle":
            self.search.open()
        elif not text.strip():
            self._view.print(Block("info", "type the new instruction first, then ctrl+r"))
        elif is_command(text.strip()):
            self.submit("steer")
        else:
            self._clear_input(text)
            self._aborting = True
            attached = self._attach(text)
            prompt = self.pastes.expand(attached.prompt)
            submitted = self.controller.interrupt_with(prompt, attached.images)
            if prompt != attached.prompt:
                self._view.typed[submitted.input_id] = text
        self._dirty.set()

    def escape(self) -> None:
        """Esc interrupts the run; Esc Esc on an empty input, once idle, opens the rewind picker (an Esc
        that interrupted is not the first of the two). With a question shown, Esc interrupts the run
        too, and the call is not executed (R38); a question with no run to stop is denied."""
        self.questions.focus.give_back()
        if self.controller.abort("user"):
            self.rewind.escape_pressed(input_empty=False)
            self._aborting = True
            self._dirty.set()
            return
        shown = self.questions.shown()
        if shown is not None:
            self.questions.resolve(shown, "deny")
            return
        self.rewind.escape_pressed(input_empty=not self.buffer.text)

    def interrupt_key(self) -> None:
        """Ctrl+C: running, interrupt (a second one while it stops exits 130, R21); idle, clear the input,
        and on an empty input ask once more before quitting."""
        if self.controller.state == "running":
            self._aborting = True
            self.controller.interrupt()
        elif self.buffer.text:
            self.buffer.reset(append_to_history=True)
        elif self._quit_armed:
            self.quit(0)
        else:
            self._quit_armed = True
        self._dirty.set()

    def quit_key(self) -> None:
        self.quit(0)

    def pull_queued(self) -> None:
        """R32: the last queued input comes back into the editor to be changed and sent again."""
        queue = self.controller.queue()
        if not queue:
            return
        last = queue[-1]
        try:
            self.controller.cancel_queued(last.input_id)
        except QueueError:  # taken by the run in the meantime: it is no longer in the queue to edit
            return
        replace_text(self.buffer, self._view.typed.get(last.input_id, last.text))
        self._pulled_mode = last.mode

    def expand(self) -> None:
        """Ctrl+O: with a question shown, hand it the keyboard and show it whole (again: back to half
        the screen); else the next folded output, whole."""
        if self.questions.has_question():
            self.questions.expand()
            return
        if self._expand_pastes():  # the input holds a paste's placeholder: its text, to edit
            self._dirty.set()
            return
        if not self._view.expand_next():
            self._view.print(Block("info", "nothing folded to expand"))
        self._dirty.set()

    def _models_answered(self) -> None:
        """A server said what it serves: the /model menu lists it."""
        self.palette.refresh()
        self._dirty.set()

    def _files_listed(self) -> None:
        """From the file index's thread: the menu ranks the files again, on the loop."""
        self._loop.call_soon_threadsafe(self.palette.refresh)

    def complete(self) -> None:
        """Tab with no menu shown: the menu Esc closed, again."""
        self.palette.reopen()

    def _text_changed(self) -> None:
        self._quit_armed = False
        # A prompt brought back from the history (Up) opens no menu: Up goes on walking the history.
        self.palette.update("" if self.buffer.recalling else self.buffer.document.text_before_cursor)
        if not self.buffer.text:
            self._pulled_mode = None


def _rows(fragments: StyleAndTextTuples) -> int:
    return sum(text.count("\n") for _style, text, *_rest in fragments) + 1


def _count(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
