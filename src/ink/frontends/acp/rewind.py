"""``/rewind`` over ACP (docs/rewind.md): a slash command the editor offers, answered by ink itself.

    /rewind                           the inputs to rewind to, numbered newest first, with their files
    /rewind N [files|conversation]    back to just before input N: both (default), or one of them
    /rewind N ... force               also overwrite files changed outside ink after a run

The prompt that carries the command is never sent to the model: its turn ends (``end_turn``) once the
answer is shown as agent message text. The rewind itself is the app's (``App.checkpoints``); a run that
goes on is aborted first, as everywhere. The inputs the rewind undid are quoted in the answer (an editor's
prompt box cannot be filled by the agent).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import msgspec

from ink.agent.tasks import Tasks
from ink.checkpoints.keeper import Checkpoint
from ink.rewind import ChangedOutside, RewindError, RewindResult, SessionCheckpoints, ago, one_line

NAME = "rewind"
COMMAND: dict[str, Any] = {
    "name": NAME,
    "description": "Undo files (bash included) and/or the conversation back to before an earlier input",
    "input": {"hint": "[N] [files|conversation] [force]"},
}
USAGE = "usage: /rewind, or /rewind N [files|conversation] [force]"
LISTED = 20


def is_rewind(text: str) -> bool:
    words = text.split()
    return bool(words) and words[0] == f"/{NAME}"


class Request(msgspec.Struct, frozen=True):
    number: int  # 1 = the newest checkpoint
    files: bool
    conversation: bool
    force: bool


def parse(text: str) -> Request | str | None:
    """None for the bare command (list), a ``Request``, or the problem in words."""
    words = text.split()[1:]
    if not words:
        return None
    if not words[0].isdecimal() or int(words[0]) < 1:
        return USAGE
    files = conversation = True
    force = False
    for word in words[1:]:
        if word == "files":
            conversation = False
        elif word == "conversation":
            files = False
        elif word == "force":
            force = True
        else:
            return USAGE
    if not files and not conversation:
        return "choose files or conversation, not both words (neither means both)"
    return Request(int(words[0]), files, conversation, force)


class AcpRewind:
    """Answers one session's ``/rewind`` prompts: ``say`` shows text, ``done`` ends the prompt's turn.
    Each answer is a task of the session's app (``tasks``), cancelled and awaited when it closes."""

    def __init__(
        self,
        part: SessionCheckpoints,
        say: Callable[[str], None],
        done: Callable[[Any], None],
        tasks: Tasks,
    ) -> None:
        self.part, self._say, self._done, self._tasks = part, say, done, tasks

    def handle(self, request_id: Any, text: str) -> None:
        self._tasks.spawn(self._handle(request_id, text), "ACP /rewind")

    async def _handle(self, request_id: Any, text: str) -> None:
        await self.part.settled()  # the last run's end snapshot: its files are known
        newest_first = list(reversed(self.part.checkpoints()))
        parsed = parse(text)
        if parsed is None or isinstance(parsed, str):
            self._say(parsed if isinstance(parsed, str) else listing(newest_first))
            self._done(request_id)
            return
        if parsed.number > len(newest_first):
            self._say(f"there is no input {parsed.number}: /rewind lists {len(newest_first)}")
            self._done(request_id)
            return
        checkpoint = newest_first[parsed.number - 1]
        try:
            task = self.part.start_rewind(
                checkpoint.input_id, files=parsed.files, conversation=parsed.conversation, force=parsed.force
            )
        except RewindError as exc:
            self._say(f"cannot rewind: {exc}")
            self._done(request_id)
            return
        task.add_done_callback(lambda t: self._finished(request_id, parsed, checkpoint, t))

    def _finished(
        self, request_id: Any, request: Request, checkpoint: Checkpoint, task: asyncio.Future[RewindResult]
    ) -> None:
        problem = None if task.cancelled() else task.exception()
        if isinstance(problem, ChangedOutside):
            shown = "\n".join(f"  {p}" for p in problem.paths[:LISTED])
            self._say(
                f"Nothing was changed: {len(problem.paths)} file(s) changed outside ink after a run "
                f"would be overwritten:\n{shown}\n"
                f"Send `/rewind {request.number} ... force` to overwrite them."
            )
        elif problem is not None or task.cancelled():
            self._say(f"rewind failed, nothing was changed: {problem}")
        else:
            self._say(done_text(request, checkpoint, task.result()))
        self._done(request_id)


def listing(newest_first: list[Checkpoint]) -> str:
    if not newest_first:
        return "Nothing to rewind to yet: a checkpoint is taken before each input."
    now = time.time()
    lines = ["Inputs to rewind to, newest first:"]
    for number, entry in enumerate(newest_first[:LISTED], 1):
        files = (
            f"{len(entry.files)} file(s): {', '.join(entry.files[:5])}" if entry.files else "no files changed"
        )
        if len(entry.files) > 5:
            files += ", …"
        only = " (files only)" if entry.kind == "rewind" else ""
        lines.append(f"{number}. {ago(now - entry.time)} “{one_line(entry.text)}”{only} · {files}")
    if len(newest_first) > LISTED:
        lines.append(f"… {len(newest_first) - LISTED} older")
    lines.append("`/rewind N` rewinds files and conversation; add `files` or `conversation` for one of them.")
    return "\n".join(lines)


def done_text(request: Request, checkpoint: Checkpoint, result: RewindResult) -> str:
    lines = [f"Rewound to just before “{one_line(checkpoint.text)}”."]
    if request.files:
        lines.append(f"Files: {len(result.written)} restored, {len(result.removed)} removed.")
    if result.restored_input:
        texts = "\n".join(f"> {i.text}" for i in result.restored_input)
        lines.append(f"The conversation was cut before it; the inputs it undid:\n{texts}")
    if result.undo is not None and (result.written or result.removed):
        lines.append("`/rewind 1 files` undoes this rewind.")
    return "\n".join(lines)
