"""What each RPC command does: a thin mapping onto the run controller and the app (one core, R7-R36).

``Handlers.handle(command)`` returns the response's ``data`` (None for none) or raises ``CommandFailed``
with the reason; it never blocks and never awaits: every controller operation it calls returns at once,
and what follows (a run, its ``run_end``) arrives as events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ink.ai.jsonform import to_json
from ink.ai.messages import message_to_json
from ink.app.plan import PlanKeeper, plan_json
from ink.run.controller import QueueError, Submitted
from ink.run.permissions import UnknownRequest
from ink.tools.jobs import UnknownJob
from ink.vocabulary import Answer, TakeMode
from ink.wiring.mcp_part import mcp_of

if TYPE_CHECKING:
    from ink.app import App
    from ink.frontends.rpc.protocol import Command
    from ink.vocabulary import InputMode

Data = Mapping[str, Any] | None
Fields = Mapping[str, Any]  # strings, and booleans for the flags of ``rewind``


class CommandFailed(Exception):
    """The command was well formed but cannot be done now (``ok: false`` with this reason)."""


class Handlers:
    def __init__(self, app: App) -> None:
        self.app = app
        self.controller = app.controller
        self._table: dict[str, Callable[[Fields], Data]] = {
            "prompt": lambda f: self._submit(f["text"], "steer"),
            "steer": self._steer,
            "follow_up": lambda f: self._submit(f["text"], "follow_up"),
            "interrupt_with": lambda f: _submitted(self.controller.interrupt_with(f["text"])),
            "abort": self._abort,
            "pause": self._pause,
            "resume": self._resume,
            "get_state": lambda _f: self.state(),
            "get_messages": lambda _f: self.messages(),
            "get_queue": lambda _f: self.queue(),
            "get_mcp": lambda _f: self.mcp(),
            "set_modes": self._set_modes,
            "permission": self._permission,
            "new_session": self._new_session,
            "set_model": self._set_model,
            "edit_queued": self._edit_queued,
            "cancel_queued": self._cancel_queued,
            "set_queued_mode": self._set_queued_mode,
            "list_checkpoints": lambda _f: self.checkpoints(),
            "list_jobs": lambda _f: self.jobs(),
            "kill_job": self._kill_job,
            "rewind": self._rewind,
        }
        part = mcp_of(app)
        if part is not None:
            part.ask_the_user()  # an MCP server's question: elicitation_request, elicitation_response

    def handle(self, command: Command) -> Data:
        """The ``data`` of the response. Raises ``CommandFailed``; the command was checked by
        ``parse_line``, so its fields are present and of the right type."""
        if command.type == "elicitation_response":
            return self._elicitation(command)
        return self._table[command.type](command.fields)

    def _elicitation(self, command: Command) -> Data:
        """The answer to an MCP server's question (``elicitation_request``), named by its ``id``."""
        from ink.mcp.elicitation import BadAnswer

        part = mcp_of(self.app)
        if not command.has_id:
            raise CommandFailed('elicitation_response needs the "id" of the elicitation_request it answers')
        if part is None or part.questions is None:
            raise CommandFailed("no MCP server is configured: there is no question to answer")
        fields = command.fields
        try:
            part.questions.answer(str(command.id), fields["action"], fields.get("content"))
        except BadAnswer as exc:
            raise CommandFailed(str(exc)) from None
        return None

    # -- reading -----------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        controller, settings = self.controller, self.app.settings
        usage = self.app.usage
        return {
            "state": controller.state,
            "queue": self.queue()["queue"],
            "sessionId": self.app.session_id,
            "model": self.app.settings.model,
            "provider": settings.provider,
            "steeringMode": controller.modes.steering,
            "followUpMode": controller.modes.follow_up,
            "paused": controller.paused,  # R44: nothing new of the run starts until resume
            "held": controller.held,  # paused, and waiting at a safe point now
            "pausedAgents": self.app.agents.paused(),
            "budget": self.app.budget.state() if self.app.budget is not None else [],  # R45
            "sandbox": self.app.sandbox.mode,  # what commands run in (R41): read-only|workspace-write|off
            "permissionRequests": [to_json(q) for q in controller.permissions.open_questions()],
            "elicitationRequests": self._open_elicitations(),
            "usage": {"session": to_json(usage.session), "sessionCostUsd": usage.session_cost},
            "plan": self._plan(),  # {entries, explanation?}: the session's plan, a resumed one's too
        }

    def _plan(self) -> dict[str, Any] | None:
        keeper = self.app.part(PlanKeeper)
        return plan_json(keeper.plan) if keeper is not None else None

    def _open_elicitations(self) -> list[dict[str, Any]]:
        part = mcp_of(self.app)
        questions = part.questions.open_questions() if part is not None and part.questions else []
        return [to_json(q) for q in questions]

    def messages(self) -> dict[str, Any]:
        return {"messages": [message_to_json(m) for m in self.controller.history.messages]}

    def mcp(self) -> dict[str, Any]:
        """Each configured MCP server: its state (``starting`` while the app opens), error and tools."""
        part = mcp_of(self.app)
        servers = part.manager.statuses() if part is not None and part.manager is not None else []
        return {"servers": [status.to_json() for status in servers]}

    def queue(self) -> dict[str, Any]:
        return {"queue": [to_json(q) for q in self.controller.queue()]}

    def checkpoints(self) -> dict[str, Any]:
        """Oldest first; ``files`` of the newest is filled in once its run ended."""
        part = self.app.checkpoints
        found = part.checkpoints() if part is not None else []
        keys = ("inputId", "text", "runId", "time", "files", "kind")
        return {"checkpoints": [{k: c.to_json()[k] for k in keys} for c in found]}

    def jobs(self) -> dict[str, Any]:
        """R43: every background job of the session (earlier processes' too, when resumed), oldest first."""
        return {"jobs": [to_json(job) for job in self.app.jobs.listing()]}

    # -- acting ------------------------------------------------------------------------------------

    def _submit(self, text: str, mode: InputMode) -> Data:
        return _submitted(self.app.submit(text, mode))  # a custom command's /name is expanded

    def _steer(self, fields: Fields) -> Data:
        if "source" not in fields:
            return self._submit(fields["text"], "steer")
        if not self.app.agents.steer(fields["source"], fields["text"]):
            raise CommandFailed(f"no running sub-agent {fields['source']!r} (source.id of its events)")
        return {"source": fields["source"], "queued": True}

    def _abort(self, fields: Fields) -> Data:
        if "source" in fields:  # one sub-agent: the parent run goes on with its honest result
            if not self.app.agents.abort(fields["source"]):
                raise CommandFailed(f"no running sub-agent {fields['source']!r} (source.id of its events)")
            return {"wasRunning": True}
        was_running = self.controller.state == "running"
        self.controller.abort("user")
        return {"wasRunning": was_running}

    def _pause(self, fields: Fields) -> Data:
        """R44: hold the run (or one sub-agent) at its next safe point; ``run_paused`` follows."""
        if "source" in fields:
            changed = self.app.agents.pause(fields["source"])
            if changed is None:
                raise CommandFailed(f"no running sub-agent {fields['source']!r} (source.id of its events)")
            return {"source": fields["source"], "wasPaused": not changed}
        try:
            changed = self.controller.pause()
        except QueueError as exc:
            raise CommandFailed(f"{exc}; send it while a run goes on") from exc
        return {"wasPaused": not changed}

    def _resume(self, fields: Fields) -> Data:
        """Lift a pause; ``run_resumed`` follows. Not paused (idle included): nothing changes."""
        if "source" in fields:
            changed = self.app.agents.resume(fields["source"])
            if changed is None:
                raise CommandFailed(f"no running sub-agent {fields['source']!r} (source.id of its events)")
            return {"source": fields["source"], "wasPaused": changed}
        return {"wasPaused": self.controller.resume()}

    def _set_modes(self, fields: Fields) -> Data:
        steering = cast("TakeMode | None", fields.get("steering"))
        follow_up = cast("TakeMode | None", fields.get("followUp"))
        modes = self.app.set_queue_modes(steering, follow_up)  # R13: read at the start of each run
        return {"steeringMode": modes.steering, "followUpMode": modes.follow_up}

    def _permission(self, fields: Fields) -> Data:
        try:
            self.controller.permissions.answer(fields["requestId"], cast(Answer, fields["decision"]))
        except UnknownRequest as exc:
            why = "it was never asked, or it was already answered or timed out"
            raise CommandFailed(f"{exc} ({why})") from exc
        return None

    def _new_session(self, _fields: Fields) -> Data:
        try:
            self.app.new_session()
        except QueueError as exc:
            raise CommandFailed(f"{exc}: abort the run first, or wait for its run_end") from exc
        return {"sessionId": self.app.session_id}

    def _set_model(self, fields: Fields) -> Data:
        """Later runs use the model; a run going on keeps its own (R13: read at each run's start)."""
        try:
            self.app.switch_model(fields["model"].strip(), fields.get("provider"))
        except ValueError as exc:
            raise CommandFailed(str(exc)) from exc
        return {"model": self.app.settings.model, "provider": self.app.settings.provider}

    def _rewind(self, fields: Fields) -> Data:
        """Checked now (``ok:false`` with the reason); done in the background, announced by ``rewind_end``
        (after the ``run_end`` of a run it aborted)."""
        from ink.rewind import RewindError

        part = self.app.checkpoints
        if part is None:
            raise CommandFailed("workspace checkpoints are off")
        input_id, files, conversation = fields["inputId"], fields["files"], fields["conversation"]
        try:
            task = part.start_rewind(
                input_id, files=files, conversation=conversation, force=fields.get("force", False)
            )
        except RewindError as exc:
            raise CommandFailed(str(exc)) from exc
        task.add_done_callback(_seen)  # a refusal is told by its rewind_end
        return {"inputId": input_id, "files": files, "conversation": conversation}

    def _kill_job(self, fields: Fields) -> Data:
        """Asked now: the job is ``ending`` (its tree gets SIGTERM, SIGKILL after the kill delay); its
        ``job_end`` event follows. A job that already ended is answered as it is."""
        try:
            info = self.app.jobs.stop(fields["jobId"], "user")
        except UnknownJob as exc:
            raise CommandFailed(str(exc)) from exc
        data: dict[str, Any] = to_json(info)
        return data

    def _edit_queued(self, fields: Fields) -> Data:
        return self._queue_op(lambda: self.controller.edit_queued(fields["inputId"], fields["text"]))

    def _cancel_queued(self, fields: Fields) -> Data:
        return self._queue_op(lambda: self.controller.cancel_queued(fields["inputId"]))

    def _set_queued_mode(self, fields: Fields) -> Data:
        mode = cast("InputMode", fields["mode"])
        return self._queue_op(lambda: self.controller.set_queued_mode(fields["inputId"], mode))

    def _queue_op(self, operation: Callable[[], None]) -> Data:
        """R32: the queue after the change; ``QueueError`` (not queued any more) becomes the reason."""
        try:
            operation()
        except QueueError as exc:
            raise CommandFailed(str(exc)) from exc
        return self.queue()


def _seen(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _submitted(submitted: Submitted) -> Data:
    return {"inputId": submitted.input_id, "queued": submitted.queued}
