"""The one reader of run events that every interactive frontend (the TUI, ACP) builds on.

A frontend subclasses ``EventReducer`` and overrides a method per event ``type`` it shows
(``text_delta``, ``tool_start``, ``run_end``, ...); the others do nothing. What every frontend must read
the same way is done here, once:

- a sub-agent's events (R7) go to ``sub_agent``, except its permission questions, which are the user's
  to answer like any other;
- a tool result goes to ``tool_result`` exactly once (R6): at ``tool_settled``, or at ``tool_end`` when
  ``tool_settled`` did not show it (``tool_end.shown``), before the event's own method is called.
"""

from __future__ import annotations

from ink.ai.messages import ToolResult
from ink.run import events as ev


def result_to_show(event: ev.RunEvent) -> ToolResult | None:
    """The tool result to show on ``event``: that of a ``tool_settled``, or of a ``tool_end`` whose
    result was not shown at its ``tool_settled``. None for every other event."""
    if isinstance(event, ev.ToolSettled) or (isinstance(event, ev.ToolEnd) and not event.shown):
        return event.result
    return None


class EventReducer:
    def on_event(self, event: ev.RunEvent) -> None:
        if event.source is not None and not isinstance(event, ev.PermissionRequest | ev.PermissionResolved):
            self.sub_agent(event)
            return
        result = result_to_show(event)
        if result is not None:
            self.tool_result(result)
        getattr(self, event.type)(event)  # the method named like the event's type

    # -- what the reducer itself derives ----------------------------------------------------------

    def sub_agent(self, event: ev.RunEvent) -> None:
        """An event of a sub-agent's run (``event.source`` names it)."""

    def tool_result(self, result: ToolResult) -> None:
        """A call's result, to be shown now: called once per call (R6)."""

    # -- one method per event type ----------------------------------------------------------------

    def message_start(self, event: ev.MessageStart) -> None:
        pass

    def text_delta(self, event: ev.TextDeltaEvent) -> None:
        pass

    def thinking_delta(self, event: ev.ThinkingDeltaEvent) -> None:
        pass

    def message_end(self, event: ev.MessageEnd) -> None:
        pass

    def tool_start(self, event: ev.ToolStart) -> None:
        pass

    def tool_running(self, event: ev.ToolRunning) -> None:
        pass

    def tool_update(self, event: ev.ToolUpdate) -> None:
        pass

    def tool_settled(self, event: ev.ToolSettled) -> None:
        pass

    def tool_end(self, event: ev.ToolEnd) -> None:
        pass

    def tool_cancelling(self, event: ev.ToolCancelling) -> None:
        pass

    def retry(self, event: ev.RetryEvent) -> None:
        pass

    def input_taken(self, event: ev.InputTaken) -> None:
        pass

    def notice(self, event: ev.Notice) -> None:
        pass

    def run_start(self, event: ev.RunStart) -> None:
        pass

    def run_end(self, event: ev.RunEnd) -> None:
        pass

    def queue_update(self, event: ev.QueueUpdate) -> None:
        pass

    def input_restored(self, event: ev.InputRestored) -> None:
        pass

    def bang_start(self, event: ev.BangStart) -> None:
        pass

    def bang_end(self, event: ev.BangEnd) -> None:
        pass

    def permission_request(self, event: ev.PermissionRequest) -> None:
        pass

    def permission_resolved(self, event: ev.PermissionResolved) -> None:
        pass

    def rewind_end(self, event: ev.RewindEnd) -> None:
        pass

    def elicitation_request(self, event: ev.ElicitationRequest) -> None:
        pass

    def elicitation_resolved(self, event: ev.ElicitationResolved) -> None:
        pass

    def job_start(self, event: ev.JobStart) -> None:
        pass

    def job_end(self, event: ev.JobEnd) -> None:
        pass

    def run_paused(self, event: ev.RunPaused) -> None:
        pass

    def run_held(self, event: ev.RunHeld) -> None:
        pass

    def run_resumed(self, event: ev.RunResumed) -> None:
        pass

    def plan_update(self, event: ev.PlanUpdate) -> None:
        pass

    def budget_warning(self, event: ev.BudgetWarning) -> None:
        pass
