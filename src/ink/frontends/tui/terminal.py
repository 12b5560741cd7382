"""Starting and ending the UI: the terminal check, the session, signals, logging, the forced exit.

Exit statuses: 0 when the user quits, 2 when stdin or stdout is not a terminal, 130 when a second
interrupt arrives while an abort is still settling (R21), 143 on SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import termios
from collections.abc import Iterator
from typing import Any

from ink.config import Invocation, Settings
from ink.frontends.tui.blocks import Block
from ink.frontends.tui.theme import ASK_BACKGROUND, Theme, choose
from ink.frontends.tui.typeahead import read_typed_ahead
from ink.wiring import App, SessionChoice, hard_exit, open_app

EXIT_USAGE, EXIT_FORCED, EXIT_TERMINATED = 2, 130, 143
# Undo what the UI set on the terminal: bracketed paste, hidden cursor, colours.
TERMINAL_RESET = b"\x1b[?2004l\x1b[?25h\x1b[0m\r\n"


def run_tui(settings: Settings, invocation: Invocation) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            'ink: the interactive UI needs a terminal; for pipes and scripts use ink -p "task" or --mode rpc',
            file=sys.stderr,
        )
        return EXIT_USAGE
    choice = SessionChoice(invocation.continue_session, invocation.resume_id)
    return asyncio.run(_serve(settings, invocation.prompt, choice, pick=invocation.pick_session))


async def _serve(settings: Settings, prompt: str | None, choice: SessionChoice, *, pick: bool = False) -> int:
    """Build the app, run the UI, then close everything (aborting a run that still goes on). ``pick``:
    the session is chosen in a picker first (``ink --resume`` without an id); quitting it quits ink."""
    from prompt_toolkit.patch_stdout import patch_stdout

    from ink.frontends.tui.app import TuiApp

    if pick:
        picked = await _picked_session(settings)
        if picked is None:
            return 0
        choice = SessionChoice(resume_id=picked)
    saved = _terminal_modes()

    def force_exit(status: int) -> None:  # R21: the second interrupt; no more waiting for the abort
        tui.erase()  # the app's rows would stay on screen, the shell's prompt drawn over them
        _restore_terminal(saved)
        os.write(2, b"ink: quit without waiting for the interrupted run to stop\n")
        hard_exit(core.processes)(status)

    async with open_app(settings, session=choice, force_exit=force_exit) as core:
        typed, theme = _typed_and_theme(settings)  # what was typed while ink started: kept, Enter sends
        tui = TuiApp(core, theme=theme)
        loop = asyncio.get_running_loop()
        try:
            with patch_stdout(raw=True), _logs_to_proxy():
                loop.add_signal_handler(signal.SIGTERM, tui.quit, EXIT_TERMINATED)
                status = await tui.run(prompt, banner=_banner(core, choice), typed=typed)
        finally:
            # The UI is gone: Ctrl+C now comes as SIGINT while a run is being stopped.
            loop.add_signal_handler(signal.SIGINT, core.controller.interrupt)
            try:
                await core.aclose()
            finally:
                loop.remove_signal_handler(signal.SIGINT)
                loop.remove_signal_handler(signal.SIGTERM)
                tui.close()
    return status


async def _picked_session(settings: Settings) -> str | None:
    """The id of the session the user picks among this directory's, or None: none there (said in one
    line) or the picker quit. Nothing is written either way."""
    from ink.frontends.tui.commands import shorten_home
    from ink.frontends.tui.session_picker import pick_session
    from ink.store import SessionStore

    where = shorten_home(settings.cwd)
    sessions = SessionStore(settings.session_dir).sessions(settings.cwd)
    if not sessions:
        print(f"ink: no sessions in {where} to resume yet; `ink` starts one", file=sys.stderr)
        return None
    theme = choose(settings.theme, settings.code_theme, os.environ, None)  # not asked yet: no answer
    picked = await pick_session(sessions, where, theme)
    return picked.id if picked is not None else None


def _typed_and_theme(settings: Settings) -> tuple[str, Theme]:
    """The keys typed while ink started, and the colours: with ``theme = "auto"`` the terminal is asked
    for its background at the same time (its answer comes in with the keys)."""
    asking = settings.theme == "auto" and not os.environ.get("NO_COLOR")
    ask = ASK_BACKGROUND if asking else ""
    typed, answers = read_typed_ahead(sys.stdin.fileno(), sys.stdout.fileno(), ask)
    return typed, choose(settings.theme, settings.code_theme, os.environ, answers or None)


def _banner(core: App, choice: SessionChoice) -> list[Block]:
    from ink import __version__
    from ink.frontends.tui.commands import shorten_home
    from ink.frontends.tui.replay import replay

    settings = core.settings
    where = shorten_home(settings.cwd)
    head = f"ink {__version__} · {settings.model} · {where} · /help for keys and commands"
    blocks = [Block("info", head)]
    if core.session is not None and core.session.loaded is not None:
        count = len(core.controller.history.messages)
        blocks.append(Block("info", f"── resumed session {core.session.id[:8]} · {count} messages ──"))
        blocks.extend(replay(core.controller.history.messages, core.tools.find))
    return blocks


@contextlib.contextmanager
def _logs_to_proxy() -> Iterator[None]:
    """Log lines go through the stdout proxy while the UI runs, so they print above it, not into it."""
    moved = []
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream in (sys.__stderr__, sys.__stdout__):
            moved.append((handler, handler.setStream(sys.stderr)))
    try:
        yield
    finally:
        for handler, stream in moved:
            handler.setStream(stream)


def _terminal_modes() -> list[Any] | None:
    try:
        return termios.tcgetattr(sys.stdin.fileno())
    except (termios.error, OSError, ValueError):
        return None


def _restore_terminal(saved: list[Any] | None) -> None:
    """Best effort, for an exit that skips prompt_toolkit's own clean-up: cooked mode, cursor shown."""
    try:
        if saved is not None:
            termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, saved)
        os.write(sys.__stdout__.fileno() if sys.__stdout__ is not None else 1, TERMINAL_RESET)
    except (termios.error, OSError, ValueError):
        pass
