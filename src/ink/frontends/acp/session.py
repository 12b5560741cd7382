"""One ACP session: an ink ``App`` (its own run controller, history and session file) seen by the editor.

The session only translates. Prompts go to ``controller.submit``, ``session/cancel`` to
``controller.abort``, permission answers to ``controller.permissions.answer``; the controller's events
come back as ``session/update`` notifications and as the answers to prompt requests (``turns``). No run
control happens here: queueing, settling, restoring and the abort itself are the controller's (R8-R36).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ink.agent.events import (
    InputTaken,
    MessageEnd,
    Notice,
    RetryEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCancelling,
    ToolEnd,
    ToolRunning,
    ToolSettled,
    ToolStart,
    ToolUpdate,
)
from ink.agent.tool import Tool, ToolKind, describe_call, find_tool, kind_of
from ink.frontends.acp import updates
from ink.frontends.acp.jsonrpc import INTERNAL_ERROR, Peer, PeerGone, RequestId, RpcError
from ink.frontends.acp.rewind import AcpRewind, is_rewind
from ink.frontends.acp.turns import Answer, PromptTurns, StopReason
from ink.run.events import (
    BangEnd,
    BangStart,
    InputRestored,
    PermissionRequest,
    PermissionResolved,
    RunEnd,
    RunEvent,
)
from ink.run.permissions import UnknownRequest
from ink.vocabulary import ALLOWING, InputMode
from ink.vocabulary import Answer as PermissionAnswer

if TYPE_CHECKING:
    from ink.wiring import App

log = logging.getLogger(__name__)

CANCEL_REASON = "cancelled by the editor"


@dataclass(frozen=True, slots=True)
class _Shown:
    """A tool call the editor was told about: what it needs again when the call ends."""

    title: str
    kind: ToolKind
    diffs: tuple[dict[str, Any], ...]


class AcpSession:
    """``prompt``, ``cancel`` and ``replay`` never block; ``aclose`` is the one clean-up call."""

    def __init__(self, session_id: str, app: App, peer: Peer) -> None:
        self.id = session_id
        self.app = app
        self.controller = app.controller
        self.peer = peer
        self.turns = PromptTurns()
        self.closing = False
        self._calls: dict[str, _Shown] = {}
        self._finished: set[str] = set()  # calls whose result was shown at tool_settled (R6)
        self._asked: dict[str, str] = {}  # permission request id -> tool call id
        self._asks: set[asyncio.Task[None]] = set()
        self._last_reply_stop = ""
        self._bang_ids = itertools.count(1)
        self._bang_call = ""
        self._unsubscribe = self.controller.subscribe(self.on_event)
        part = app.checkpoints
        self._rewind = AcpRewind(part, self._say, self._end_turn) if part is not None else None
        if app.commands.commands or part is not None:  # after the answer naming the session: call_soon
            offered = updates.available_commands(app.commands, rewind=part is not None)
            asyncio.get_running_loop().call_soon(self._update, offered)

    # -- from the editor ---------------------------------------------------------------------------

    def prompt(self, request_id: RequestId, text: str) -> None:
        """R8: idle starts a run; running queues ``text`` as a follow-up. Answered later (``turns``)."""
        if self.closing:
            raise RpcError(INTERNAL_ERROR, "the session is closing")
        if self._rewind is not None and is_rewind(text):  # ink's own command: never sent to the model
            self._rewind.handle(request_id, text)
            return
        mode: InputMode = "steer" if self.controller.state == "idle" else "follow_up"
        submitted = self.app.submit(text, mode)  # a custom command's /name is expanded
        self.turns.submitted(submitted.input_id, request_id)

    def cancel(self) -> None:
        """Abort the current run (R17); its prompts and the queued ones end ``cancelled``."""
        self.controller.abort(CANCEL_REASON)

    def replay(self) -> None:
        """Show the history as updates (``session/load``)."""
        for update in updates.replay(self.controller.history.messages, self._tool):
            self._update(update)

    async def aclose(self, reason: str) -> None:
        """Abort what runs, let it settle (its prompts are answered on the way), close the app, and end
        every prompt still waiting with ``cancelled``. Bounded by the app's own clean-up bounds."""
        self.closing = True
        self.controller.abort(reason)
        try:
            await self.app.aclose()
        finally:
            for task in tuple(self._asks):
                task.cancel()
            self._unsubscribe()
            self._send(self.turns.drain())

    # -- from the controller -----------------------------------------------------------------------

    def on_event(self, event: RunEvent) -> None:
        if event.source is not None and not isinstance(event, PermissionRequest | PermissionResolved):
            self._on_sub_agent(event)  # a sub-agent's work is not this conversation (R7)
            return
        match event:
            case TextDeltaEvent(text=text):
                self._update(updates.message_chunk(text))
            case ThinkingDeltaEvent(text=text):
                self._update(updates.thought_chunk(text))
            case MessageEnd(message=message):
                self._last_reply_stop = message.stop_reason
            case ToolStart() | ToolRunning() | ToolSettled() | ToolEnd() | ToolCancelling():
                self._on_tool(event)
            case ToolUpdate(tool_call_id=running, output=output):
                self._update(updates.live_output(running, output))
            case RetryEvent(attempt=attempt, delay_seconds=delay, error=error):
                note = f"retrying in {delay:.1f} s (attempt {attempt + 1}): {error}"
                self._update(updates.thought_chunk(f"\n[{note}]\n"))
            case Notice(text=text):
                self._update(updates.thought_chunk(f"\n[{text}]\n"))
            case InputTaken(mode=mode, inputs=inputs):
                self._send(self.turns.taken(mode, (i.input_id for i in inputs), self._finished_reason()))
            case RunEnd():
                changed = event.receipt.changed_files if event.receipt is not None else None
                if changed:  # issue 14: what a rewind to the run's input would restore
                    listed = ", ".join(changed[:10]) + (", …" if len(changed) > 10 else "")
                    note = f"the run changed {len(changed)} file(s): {listed}; /rewind restores them"
                    self._update(updates.thought_chunk(f"\n[{note}]\n"))
                restored = (i.input_id for i in event.restored_input)
                finished = self._finished_reason()
                self._send(self.turns.run_ended(event.stop_reason, restored, finished, event.error))
                self._last_reply_stop = ""
            case InputRestored(restored_input=restored):
                self._send(self.turns.restored(i.input_id for i in restored))
            case BangStart() | BangEnd():
                self._on_bang(event)
            case PermissionRequest():
                self._ask(event)
            case PermissionResolved(request_id=request_id, decision=decision):
                call_id = self._asked.pop(request_id, None)
                if call_id is not None and decision in ALLOWING:
                    self._update(updates.status_update(call_id, "in_progress"))

    def _on_sub_agent(self, event: RunEvent) -> None:
        """A sub-agent's tool calls show as updates of the ``task`` call it works for."""
        if isinstance(event, ToolStart) and event.source is not None:
            title = describe_call(self._tool(event.name), event.name, event.args).title
            note = updates.status_update(event.source.id, "in_progress", content=[_text_content(title)])
            self._update(note)

    def _on_tool(self, event: ToolStart | ToolRunning | ToolSettled | ToolEnd | ToolCancelling) -> None:
        call_id = event.tool_call_id
        match event:
            case ToolStart(name=name, args=args):
                tool = self._tool(name)
                update = updates.tool_call(call_id, name, args, tool)
                self._calls[call_id] = _Shown(
                    update["title"], kind_of(tool), tuple(update.get("content", ()))
                )
                self._update(update)
            case ToolRunning():
                self._update(updates.status_update(call_id, "in_progress"))
            case ToolSettled(result=result) | ToolEnd(result=result):
                if call_id not in self._finished:  # R6: a result is shown once
                    shown = self._calls.get(call_id)
                    kind = shown.kind if shown else kind_of(self._tool(result.name))
                    self._update(updates.tool_result(result, kind, shown.diffs if shown else ()))
                    self._finished.add(call_id)
                if isinstance(event, ToolEnd):
                    self._calls.pop(call_id, None)
                    self._finished.discard(call_id)
            case ToolCancelling(grace_seconds=grace):
                shown = self._calls.get(call_id)
                title = f"{shown.title if shown else call_id} (stopping: waiting up to {grace:g} s)"
                self._update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "title": title})

    def _on_bang(self, event: BangStart | BangEnd) -> None:
        if isinstance(event, BangStart):  # one bang line at a time: its end names the same call
            self._bang_call = f"bang-{event.input_id or next(self._bang_ids)}"
            self._update(updates.bang_call(self._bang_call, event.command))
            return
        call_id = self._bang_call
        self._update(updates.bang_result(call_id, event.output, event.exit_code, bool(event.interrupted)))
        self._send(self.turns.bang_ended(event.input_id, bool(event.interrupted)))

    def _finished_reason(self) -> StopReason:
        return "max_tokens" if self._last_reply_stop == "length" else "end_turn"

    # -- permission questions ----------------------------------------------------------------------

    def _ask(self, event: PermissionRequest) -> None:
        self._asked[event.request_id] = event.tool_call_id
        tool = self._tool(event.name)
        params = updates.permission_request(self.id, event.tool_call_id, event.name, event.args, tool)
        task = asyncio.ensure_future(self._ask_editor(event.request_id, params))
        self._asks.add(task)
        task.add_done_callback(self._asks.discard)

    async def _ask_editor(self, request_id: str, params: Mapping[str, Any]) -> None:
        """Put the question to the editor and hand its answer to the broker. An answer that comes after
        the question was closed (an abort answered it ``cancelled``, or it timed out) is dropped."""
        try:
            result = await self.peer.request("session/request_permission", params)
        except PeerGone:
            return  # closing: the abort that follows answers the question
        except RpcError as exc:
            log.warning("the editor could not answer a permission request (%s): denied", exc.message)
            result = None
        try:
            self.controller.permissions.answer(request_id, decision(result))
        except UnknownRequest:
            pass

    # -- output ------------------------------------------------------------------------------------

    def _tool(self, name: str) -> Tool | None:
        """The tool called ``name`` in the app's current set (MCP tools join while it runs)."""
        return find_tool(self.controller.setup.tools, name)

    def _say(self, text: str) -> None:
        self._update(updates.message_chunk(text))

    def _end_turn(self, request_id: RequestId) -> None:
        self.peer.respond(request_id, {"stopReason": "end_turn"})

    def _update(self, update: Mapping[str, Any]) -> None:
        self.peer.notify("session/update", {"sessionId": self.id, "update": update})

    def _send(self, answers: Iterable[Answer]) -> None:
        for answer in answers:
            if answer.error is not None:
                self.peer.fail(answer.request_id, RpcError(INTERNAL_ERROR, answer.error))
            else:
                self.peer.respond(answer.request_id, {"stopReason": answer.stop_reason})


def decision(result: object) -> PermissionAnswer:
    """The broker's answer for the editor's ``RequestPermissionResponse``: the option picked, and a deny
    for anything else (``cancelled``, an unknown option, a malformed answer)."""
    outcome = result.get("outcome") if isinstance(result, Mapping) else None
    if isinstance(outcome, Mapping) and outcome.get("outcome") == "selected":
        picked = outcome.get("optionId")
        if picked == "allow":
            return "allow"
        if picked == "always":
            return "always"
    return "deny"


def _text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}
