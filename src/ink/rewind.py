"""Rewind: the workspace, the conversation, or both, back to just before an input was taken (issue 14).

``Rewinder.rewind`` first stops a run that is going on (an abort like any other: R17-R23, so the history
stays valid), then restores what was asked:

- **files**: the workspace as the input's checkpoint holds it (``ink.checkpoints``): files the runs changed
  written back, deleted ones brought back, created ones removed. Files changed *outside* ink since the
  last run ended are named first and the rewind refuses (``ChangedOutside``) unless ``force``: they would
  be overwritten. The restore itself can be undone (``RewindResult.undo``, a checkpoint of the workspace
  just before it).
- **conversation**: the history cut just before the input's message; that input and every later one come
  back to the user like restored input (an ``input_restored`` event, in submission order, R30).

Every frontend calls this one method; none restores anything itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from ink.ai.messages import UserMessage
from ink.checkpoints.keeper import Checkpoints
from ink.run.controller import RunController
from ink.run.events import InputRestored, QueuedInput


class RewindError(Exception):
    """The rewind cannot be done; nothing was changed."""


class ChangedOutside(RewindError):
    def __init__(self, paths: list[str]) -> None:
        shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
        super().__init__(
            f"{len(paths)} file(s) changed outside ink since the last run would be overwritten: {shown}"
        )
        self.paths = paths


@dataclass(frozen=True, slots=True)
class RewindResult:
    input_id: str
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    undo: str | None = None  # the checkpoint that undoes the file part
    restored_input: tuple[QueuedInput, ...] = ()


class Rewinder:
    def __init__(self, controller: RunController, checkpoints: Checkpoints) -> None:
        self.controller, self.checkpoints = controller, checkpoints

    async def rewind(
        self, input_id: str, *, files: bool, conversation: bool, force: bool = False
    ) -> RewindResult:
        """Raises ``RewindError`` (``ChangedOutside`` among them) before changing anything."""
        if not files and not conversation:
            raise RewindError("nothing to rewind: ask for the files, the conversation, or both")
        if files and self.checkpoints.get(input_id) is None:
            raise RewindError(f"no checkpoint for input {input_id!r}")
        cut = self._cut(input_id) if conversation else None
        if self.controller.state == "running":
            self.controller.abort("rewind")
            await self.controller.wait_idle()
            cut = self._cut(input_id) if conversation else None  # the abort added its marker
        result = RewindResult(input_id)
        if files:
            outside = await self.checkpoints.changed_outside()
            if outside and not force:
                raise ChangedOutside(outside)
            report = await self.checkpoints.restore(input_id)
            result = RewindResult(input_id, report.written, report.removed, report.undo)
        if cut is not None:
            restored = self._truncate(cut)
            result = RewindResult(input_id, result.written, result.removed, result.undo, restored)
        return result

    def _cut(self, input_id: str) -> int:
        for index, message in enumerate(self.controller.history.messages):
            if isinstance(message, UserMessage) and message.input_id == input_id:
                return index
        raise RewindError(f"input {input_id!r} is not in this conversation")

    def _truncate(self, cut: int) -> tuple[QueuedInput, ...]:
        history = self.controller.history
        undone = [m for m in history.messages[cut:] if isinstance(m, UserMessage) and m.input_id is not None]
        history.replace(history.messages[:cut], "rewind")
        restored = tuple(QueuedInput(m.input_id or "", m.text, "steer") for m in undone)
        if restored:
            self.controller.emit(InputRestored(restored))
        return restored
