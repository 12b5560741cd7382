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
from typing import TYPE_CHECKING, Any

import msgspec

from ink.agent.tasks import cancel_and_wait
from ink.agent.tool import Tool, ToolKind, describe_call, kind_of
from ink.ai.messages import ToolImage, ToolResult
from ink.app.jobs import resume_note
from ink.app.plan import PlanKeeper
from ink.frontends.acp import jobs, updates
from ink.frontends.acp.jsonrpc import INTERNAL_ERROR, Peer, PeerGone, RequestId, RpcError
from ink.frontends.acp.mcp import offer_mcp_prompts
from ink.frontends.acp.rewind import AcpRewind, is_rewind
from ink.frontends.acp.subagents import SubAgentProgress
from ink.frontends.acp.turns import Answer, PromptTurns, StopReason
from ink.frontends.reducer import EventReducer
from ink.run import events as ev
from ink.run.budget import warning_text as budget_warning_text
from ink.run.permissions import UnknownRequest
from ink.vocabulary import ALLOWING, InputMode
from ink.vocabulary import Answer as PermissionAnswer

if TYPE_CHECKING:
    from ink.app import App

log = logging.getLogger(__name__)

CANCEL_REASON = "cancelled by the editor"


class _Shown(msgspec.Struct, frozen=True):
    """A tool call the editor was told about: what it needs again when the call ends."""

    title: str
    kind: ToolKind
    diffs: tuple[dict[str, Any], ...]


class AcpSession(EventReducer):
    """``prompt``, ``cancel`` and ``replay`` never block; ``aclose`` is the one clean-up call."""

    def __init__(self, session_id: str, app: App, peer: Peer) -> None:
        self.id = session_id
        self.app = app
        self.controller = app.controller
        self.peer = peer
        self.turns = PromptTurns()
        self.closing = False
        self._calls: dict[str, _Shown] = {}
        # the progress each sub-agent shows on its task call
        self._sub_agents = SubAgentProgress(
            lambda name, args: describe_call(self._tool(name), name, args).title
        )
        self._asked: dict[str, str] = {}  # permission request id -> tool call id
        self._asks: set[asyncio.Task[None]] = set()
        self._last_reply_stop = ""
        self._bang_ids = itertools.count(1)
        self._bang_call = ""
        self._unsubscribe = self.controller.subscribe(self.on_event)
        part = app.checkpoints
        self._rewind = AcpRewind(part, self._say, self._end_turn, app.tasks) if part is not None else None
        if app.commands.commands or part is not None:  # after the answer naming the session: call_soon
            offered = updates.available_commands(app.commands, rewind=part is not None)
            asyncio.get_running_loop().call_soon(self._update, offered)
        offer_mcp_prompts(
            app,
            lambda prompts: self._update(
                updates.available_commands(app.commands, rewind=part is not None, prompts=prompts)
            ),
        )

    # -- from the editor ---------------------------------------------------------------------------

    def prompt(self, request_id: RequestId, text: str, images: tuple[ToolImage, ...] = ()) -> None:
        """R8: idle starts a run; running queues ``text`` (and its images) as a follow-up. Answered
        later (``turns``)."""
        if self.closing:
            raise RpcError(INTERNAL_ERROR, "the session is closing")
        if self._rewind is not None and is_rewind(text):  # ink's own command: never sent to the model
            self._rewind.handle(request_id, text)
            return
        mode: InputMode = "steer" if self.controller.state == "idle" else "follow_up"
        submitted = self.app.submit(text, mode, images=images)  # a custom command's /name is expanded
        self.turns.submitted(submitted.input_id, request_id)

    def cancel(self) -> None:
        """Abort the current run (R17); its prompts and the queued ones end ``cancelled``."""
        self.controller.abort(CANCEL_REASON)

    def replay(self) -> None:
        """Show the history as updates (``session/load``), then which background jobs ended with the
        session's last ink process (R43)."""
        for update in updates.replay(self.controller.history.messages, self._tool):
            self._update(update)
        ended = resume_note(self.app.jobs, "by the model, with job_output")
        if ended is not None:
            self._update(updates.thought_chunk(f"\n[{ended}]\n"))
        keeper = self.app.part(PlanKeeper)
        if keeper is not None and keeper.plan is not None:  # the session's plan, as it stood
            self._update(updates.plan_update(keeper.plan))

    async def aclose(self, reason: str) -> None:
        """Abort what runs, let it settle (its prompts are answered on the way), close the app, and end
        every prompt still waiting with ``cancelled``. Bounded by the app's own clean-up bounds."""
        self.closing = True
        self.controller.abort(reason)
        try:
            await self.app.aclose()
        finally:
            await asyncio.gather(*(cancel_and_wait(task) for task in tuple(self._asks)))
            self._unsubscribe()
            self._send(self.turns.drain())

    def update_config(self, options: list[dict[str, Any]]) -> None:
        """Tell the editor every config option's value (after a change it did not make through them)."""
        self._update({"sessionUpdate": "config_option_update", "configOptions": options})

    def update_mode(self, mode: str) -> None:
        """Tell the editor the session's current mode (after a change through the config options)."""
        self._update({"sessionUpdate": "current_mode_update", "currentModeId": mode})

    # -- from the controller -----------------------------------------------------------------------

    # EventReducer: one method per event type; on_event dispatches.

    def text_delta(self, event: ev.TextDeltaEvent) -> None:
        self._update(updates.message_chunk(event.text))

    def thinking_delta(self, event: ev.ThinkingDeltaEvent) -> None:
        self._update(updates.thought_chunk(event.text))

    def message_end(self, event: ev.MessageEnd) -> None:
        self._last_reply_stop = event.message.stop_reason

    def tool_start(self, event: ev.ToolStart) -> None:
        tool = self._tool(event.name)
        update = updates.tool_call(event.tool_call_id, event.name, event.args, tool)
        self._calls[event.tool_call_id] = _Shown(
            update["title"], kind_of(tool), tuple(update.get("content", ()))
        )
        self._update(update)

    def tool_running(self, event: ev.ToolRunning) -> None:
        self._update(updates.status_update(event.tool_call_id, "in_progress"))

    def tool_update(self, event: ev.ToolUpdate) -> None:
        self._update(updates.live_output(event.tool_call_id, event.output))

    def tool_result(self, result: ToolResult) -> None:
        shown = self._calls.get(result.tool_call_id)
        kind = shown.kind if shown else kind_of(self._tool(result.name))
        self._update(updates.tool_result(result, kind, shown.diffs if shown else ()))

    def tool_end(self, event: ev.ToolEnd) -> None:
        self._sub_agents.finished(event.tool_call_id)
        self._calls.pop(event.tool_call_id, None)

    def tool_cancelling(self, event: ev.ToolCancelling) -> None:
        call_id = event.tool_call_id
        shown = self._calls.get(call_id)
        title = f"{shown.title if shown else call_id} (stopping: waiting up to {event.grace_seconds:g} s)"
        self._update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "title": title})

    def retry(self, event: ev.RetryEvent) -> None:
        note = f"retrying in {event.delay_seconds:.1f} s (attempt {event.attempt + 1}): {event.error}"
        self._update(updates.thought_chunk(f"\n[{note}]\n"))

    def budget_warning(self, event: ev.BudgetWarning) -> None:
        self._update(updates.thought_chunk(f"\n[{budget_warning_text(event)}]\n"))

    def notice(self, event: ev.Notice) -> None:
        self._update(updates.thought_chunk(f"\n[{event.text}]\n"))

    def input_taken(self, event: ev.InputTaken) -> None:
        taken = (i.input_id for i in event.inputs)
        self._send(self.turns.taken(event.mode, taken, self._finished_reason()))

    def run_end(self, event: ev.RunEnd) -> None:
        restored = (i.input_id for i in event.restored_input)
        finished = self._finished_reason()
        if event.refused:  # ACP has a word for it: the service's words are shown, the turn ends ``refusal``
            self._update(updates.message_chunk(f"\n[{event.error}]\n"))
        stop = "refused" if event.refused else event.stop_reason
        if event.receipt is not None and event.receipt.message:  # a hook stopped the run: its stopReason
            self._update(updates.message_chunk(f"\n[stopped: {event.receipt.message}]\n"))
        if event.budget is not None:  # R45: ends max_turn_requests, the user is told which limit
            self._update(updates.message_chunk(f"\n[stopped at a budget limit: {event.budget}]\n"))
        self._send(self.turns.run_ended(stop, restored, finished, event.error))
        self._last_reply_stop = ""
        running = event.receipt.jobs_running if event.receipt is not None else ()
        if running:  # R43: an interrupt leaves the background jobs running
            listed = ", ".join(job.job_id for job in running)
            self._update(updates.thought_chunk(f"\n[background jobs still running: {listed}]\n"))
        changed = event.receipt.changed_files if event.receipt is not None else None
        if changed:  # what a rewind to the run's input would restore
            listed = ", ".join(changed[:10]) + (", …" if len(changed) > 10 else "")
            note = f"the run changed {len(changed)} file(s): {listed}; /rewind restores them"
            self._update(updates.thought_chunk(f"\n[{note}]\n"))

    def input_restored(self, event: ev.InputRestored) -> None:
        self._send(self.turns.restored(i.input_id for i in event.restored_input))

    def bang_start(self, event: ev.BangStart) -> None:
        self._on_bang(event)

    def bang_end(self, event: ev.BangEnd) -> None:
        self._on_bang(event)

    def permission_request(self, event: ev.PermissionRequest) -> None:
        if event.source is not None:  # a sub-agent asks: its task call says it waits
            self.sub_agent(event)
        self._ask(event)

    def permission_resolved(self, event: ev.PermissionResolved) -> None:
        call_id = self._asked.pop(event.request_id, None)
        if call_id is not None and event.decision in ALLOWING:
            self._update(updates.status_update(call_id, "in_progress"))

    def plan_update(self, event: ev.PlanUpdate) -> None:
        self._update(updates.plan_update(event))  # a sub-agent's plan is its own (``sub_agent``)

    def job_start(self, event: ev.JobStart) -> None:
        self._update(jobs.job_call(event))  # R43: a tool call of its own, in progress until it ends

    def job_end(self, event: ev.JobEnd) -> None:
        self._update(jobs.job_result(event, self.app.jobs))

    def sub_agent(self, event: ev.RunEvent) -> None:
        """A sub-agent's work is not this conversation (R7): its tool calls show as updates of the
        ``task`` call it works for, listed in its content (``SubAgentProgress``)."""
        progress = self._sub_agents.on_event(event)
        if progress is not None:
            self._update(progress)

    def _on_bang(self, event: ev.BangStart | ev.BangEnd) -> None:
        if isinstance(event, ev.BangStart):  # one bang line at a time: its end names the same call
            self._bang_call = f"bang-{event.input_id or next(self._bang_ids)}"
            self._update(updates.bang_call(self._bang_call, event.command))
            return
        call_id = self._bang_call
        self._update(updates.bang_result(call_id, event.output, event.exit_code, bool(event.interrupted)))
        self._send(self.turns.bang_ended(event.input_id, bool(event.interrupted)))

    def _finished_reason(self) -> StopReason:
        return "max_tokens" if self._last_reply_stop == "length" else "end_turn"

    # -- permission questions ----------------------------------------------------------------------

    def _ask(self, event: ev.PermissionRequest) -> None:
        self._asked[event.request_id] = event.tool_call_id
        tool = self._tool(event.name)
        params = updates.permission_request(
            self.id, event.tool_call_id, event.name, event.args, tool, event.reason or "", event.remember
        )
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
        return self.app.tools.find(name)

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
