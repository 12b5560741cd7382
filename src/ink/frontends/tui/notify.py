"""R46: a word when it matters. When a run ends, a question waits or a background job ends, and the
terminal has had no key for ``after_seconds`` (the user may be looking elsewhere), ring the terminal
(BEL, plus an OSC 9 notification where the terminal shows one) and run the user's ``notify`` command
with the event as one JSON object on stdin.

Only what the user waits for counts: the top-level run's end (a sub-agent's end is not the user's),
any question (a sub-agent's too: it holds the run), a job's end. The command runs in its own process
group, is given ``COMMAND_SECONDS`` to finish and is then killed with its group; its output is dropped
and its failure is one warning line, never a broken UI.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable, Mapping

from ink.config.notify import NotifySettings
from ink.run.events import PermissionRequest, PermissionResolved, RunEnd, RunEvent, event_to_json
from ink.tools import orphans

log = logging.getLogger(__name__)

COMMAND_SECONDS = 10.0
BELL = "\a"
# Terminals that show ``ESC ] 9 ; text BEL`` as a desktop notification. Others may take OSC 9 for
# something else (ConEmu and Windows Terminal: 9;N sub-commands), so it is sent only to these.
OSC9_TERMINALS = ("iTerm.app", "WezTerm", "ghostty", "kitty")
WHAT = {
    "run_end": "the run ended",
    "permission_request": "a question waits for you",
    "job_end": "a background job ended",
}


class Notifier:
    """``key_pressed`` on every key; ``on_event`` for every run event (a controller subscriber).
    ``write`` puts raw text on the terminal; ``spawn`` runs a coroutine as an owned background task."""

    def __init__(
        self,
        settings: NotifySettings,
        write: Callable[[str], None],
        spawn: Callable[..., object],
        clock: Callable[[], float],
        env: Mapping[str, str] = os.environ,
    ) -> None:
        self._settings = settings
        self._write = write
        self._spawn = spawn
        self._clock = clock
        self._osc9 = env.get("TERM_PROGRAM", "") in OSC9_TERMINALS or "kitty" in env.get("TERM", "")
        self._last_key = clock()
        self._waiting: set[str] = set()  # questions asked while the user was at the keyboard, still open

    def key_pressed(self) -> None:
        self._last_key = self._clock()

    def on_event(self, event: RunEvent) -> None:
        if isinstance(event, PermissionResolved):
            self._waiting.discard(event.request_id)
        elif isinstance(event, RunEnd) and event.source is None:
            self._waiting.clear()  # its questions are gone with it
        what = WHAT.get(event.type)
        if what is None or (event.type == "run_end" and getattr(event, "source", None) is not None):
            return
        if self._clock() - self._last_key < self._settings.after_seconds:
            if isinstance(event, PermissionRequest):  # it waits: told once the user has looked away
                self._waiting.add(event.request_id)
                self._spawn(self._when_away(event), "notify when away")
            return  # the user is at the keyboard: the screen says it already
        self._tell(event, what)

    async def _when_away(self, question: PermissionRequest) -> None:
        """A question asked while the user was typing still waits after ``after_seconds`` without a
        key: they may have gone (it came right after their Enter and they walked away)."""
        while question.request_id in self._waiting:
            wait = self._last_key + self._settings.after_seconds - self._clock()
            if wait <= 0:
                self._waiting.discard(question.request_id)
                self._tell(question, WHAT[question.type])
                return
            await asyncio.sleep(wait)

    def _tell(self, event: RunEvent, what: str) -> None:
        if self._settings.bell:
            self._write(BELL + (f"\x1b]9;ink: {what}\x07" if self._osc9 else ""))
        command = self._settings.command
        if command:
            payload = json.dumps(event_to_json(event), ensure_ascii=False).encode()  # stream-json's form
            self._spawn(run_command(command, payload), "notify command")


async def run_command(command: str, payload: bytes) -> None:
    """Run ``command`` in the shell with ``payload`` on stdin; at most ``COMMAND_SECONDS``, then its whole
    process group is killed. A failure is logged (a warning), never raised. The command is noted as
    ink's own child: in a session of its own it would otherwise be taken for a command's escaped
    descendant, ended on an interrupt and reaped under asyncio (its exit status lost)."""
    try:
        with orphans.starting_child():
            process = await asyncio.create_subprocess_shell(
                command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,
            )
            orphans.own_child(process.pid)
    except OSError as exc:
        log.warning("the notify command could not start: %s", exc.strerror or exc)
        return
    try:
        async with asyncio.timeout(COMMAND_SECONDS):
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await process.communicate(payload)
    except TimeoutError:
        log.warning("the notify command ran longer than %g s: it was stopped", COMMAND_SECONDS)
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        orphans.own_child_done(process.pid)
    if process.returncode:
        log.warning("the notify command failed (exit status %s)", process.returncode)
