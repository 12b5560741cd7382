"""A hypothesis state machine over the run controller (R8-R36, the ledger invariant of R30).

Actions: submit (steer, follow-up, bang line), queue edits (edit, cancel, switch mode), abort,
interrupt-and-redirect, model reply, tool finish, provider error. Everything is real but the model: the
controller, the loop, a scripted serial tool; the model is the in-memory scripted provider, which checks
every request against the strict OpenAI history rules.

After every action the system is driven to a quiet point: idle, or blocked at a gate the machine controls
(a held model reply or a held tool). Then the invariant is checked: every submitted input ends exactly
once as committed, restored or cancelled, or is still queued; nothing is duplicated; restored input comes
back in submission order.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ink.ai.messages import UserMessage
from ink.run.events import InputRestored, RunEnd
from ink.run.ledger import QueueError
from tests.fakeserver import Fault, Gate, Reply, text, tool_call
from tests.run.harness import Harness
from tests.scripted_provider import ScriptedProvider
from tests.scripted_tools import ScriptedTool

SCRIPTED_FAILURE = "scripted failure"


class ControllerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.server = ScriptedProvider()
        self.server.responder = self._respond
        self.tool = ScriptedTool("work", safe=False)
        self.harness = self.loop.run_until_complete(self._make_harness())
        self.gates: list[tuple[Gate, Any]] = []
        self.call_ids = itertools.count(1)
        self.texts = itertools.count(1)
        self.submitted: list[str] = []
        self.stale: set[object] = set()  # gates and tool calls an abort left behind
        self.next_kind = "text"

    async def _make_harness(self) -> Harness:
        return Harness(self.server, tools=[self.tool])

    def _respond(self, request: Any) -> Reply:
        """Every reply holds at a gate first, so the machine decides when the model answers."""
        gate = Gate(timeout=60)
        self.gates.append((gate, request))
        kind = self.next_kind
        if kind == "error":
            return Reply([gate], fault=Fault.http(400, SCRIPTED_FAILURE))
        if kind == "tool":
            call_id = f"w{next(self.call_ids)}"
            self.tool.gate(call_id)
            return Reply([gate, text("working"), tool_call("work", {}, id=call_id)])
        return Reply([gate, text("done")])

    # -- driving to a quiet point ------------------------------------------------------------------

    def _working(self) -> bool:
        """Running and not aborting: only then can a held gate or tool be what the run waits for."""
        c = self.harness.controller
        return c.state == "running" and not (c._signal is not None and c._signal.aborted)

    def _held_gates(self) -> list[Gate]:
        if not self._working() or not self.gates:
            return []
        g, r = self.gates[-1]  # runs are sequential: only the newest request can hold the run
        held = g.reached.is_set() and not g.opened.is_set() and not r.finished.is_set()
        return [g] if held and g not in self.stale else []

    def _held_tools(self) -> list[str]:
        if not self._working():
            return []
        return [
            cid
            for cid, started in self.tool.started.items()
            if started.is_set()
            and not self.tool.gate(cid).is_set()
            and cid not in self.tool.finished
            and cid not in self.stale
        ]

    def _mark_stale(self) -> None:
        """What an abort interrupts can never hold a later run: forget it, whatever the other threads
        have noticed yet."""
        self.stale.update(g for g, _ in self.gates)
        self.stale.update(self.tool.started)

    def _quiet(self) -> bool:
        if self.harness.controller.state == "idle":
            return True
        return bool(self._held_gates()) or bool(self._held_tools())  # an abort settling: wait for idle

    def act(self, action: Any) -> Any:
        """Call a controller method from inside the event loop, as every frontend does."""

        async def call() -> Any:
            return action()

        return self.loop.run_until_complete(call())

    def settle(self) -> None:
        async def wait() -> None:
            for _ in range(5000):
                if self._quiet():
                    return
                await asyncio.sleep(0.002)  # polling for a condition, bounded
            raise AssertionError("the controller never reached a quiet point")

        self.loop.run_until_complete(wait())

    # -- rules -----------------------------------------------------------------------------------

    @rule(
        mode=st.sampled_from(["steer", "follow_up", "bang"]), reply=st.sampled_from(["text", "tool", "error"])
    )
    def submit(self, mode: str, reply: str) -> None:
        self.next_kind = reply
        label = f"m{next(self.texts)}"
        text_ = f"!echo {label}" if mode == "bang" else label
        c = self.harness.controller
        result = self.act(lambda: c.submit(text_, "follow_up" if mode == "follow_up" else "steer"))
        self.submitted.append(result.input_id)
        self.settle()

    @precondition(lambda self: bool(self._held_gates()))
    @rule(next_reply=st.sampled_from(["text", "tool", "error"]))
    def model_replies(self, next_reply: str) -> None:
        self.next_kind = next_reply
        for gate in self._held_gates():
            gate.open()
        self.settle()

    @precondition(lambda self: bool(self._held_tools()))
    @rule(next_reply=st.sampled_from(["text", "tool", "error"]))
    def tool_finishes(self, next_reply: str) -> None:
        self.next_kind = next_reply
        for cid in self._held_tools():
            self.tool.gate(cid).set()
        self.settle()

    @rule(then=st.sampled_from(["abort", "redirect"]))
    def submit_and_stop_in_one_step(self, then: str) -> None:
        """A submit and an abort (or a redirect) with no await between them (one RPC read holding both
        lines): the stop must land on the run the submit started."""
        c = self.harness.controller
        self.next_kind = "text"
        first, second = f"m{next(self.texts)}", f"r{next(self.texts)}"

        def both() -> list[str]:
            ids = [c.submit(first).input_id]
            if then == "abort":
                c.abort()
            else:
                ids.append(c.interrupt_with(second).input_id)
            return ids

        self.submitted.extend(self.act(both))
        self._mark_stale()
        self.settle()

    @rule()
    def abort(self) -> None:
        self.act(self.harness.controller.abort)
        self._mark_stale()
        self.settle()

    @precondition(lambda self: self.harness.controller.state == "running")
    @rule()
    def redirect(self) -> None:
        label = f"r{next(self.texts)}"
        result = self.act(lambda: self.harness.controller.interrupt_with(label))
        self._mark_stale()
        self.submitted.append(result.input_id)
        self.settle()

    @rule(data=st.data(), action=st.sampled_from(["edit", "cancel", "switch"]))
    def edit_queue(self, data: st.DataObject, action: str) -> None:
        queue = self.harness.controller.queue()
        if not queue:
            return
        entry = data.draw(st.sampled_from(queue))
        c = self.harness.controller
        try:
            if action == "edit":
                self.act(lambda: c.edit_queued(entry.input_id, entry.text + "-edited"))
            elif action == "cancel":
                self.act(lambda: c.cancel_queued(entry.input_id))
            else:
                mode = "steer" if entry.mode == "follow_up" else "follow_up"
                self.act(lambda: c.set_queued_mode(entry.input_id, mode))
        except QueueError:
            raise AssertionError(f"{action} of a listed queue entry failed") from None
        self.settle()

    # -- the invariant ---------------------------------------------------------------------------

    @invariant()
    def every_input_ends_once(self) -> None:
        ledger = self.harness.controller.ledger
        running = self.harness.controller.state == "running"
        in_history = [m.input_id for m in self.harness.history if isinstance(m, UserMessage) and m.input_id]
        assert len(in_history) == len(set(in_history)), "an input entered the history twice"
        queued = {q.input_id for q in self.harness.controller.queue()}
        for input_id in self.submitted:
            state = ledger.state(input_id)
            assert state is not None
            entry = ledger.get(input_id)
            assert entry is not None
            if state == "committed" and not entry.is_bang:
                assert input_id in in_history, f"{input_id} committed but not in the history"
            elif state in ("restored", "cancelled", "queued"):
                assert input_id not in in_history, f"{input_id} is {state} but in the history"
            if state == "queued":
                assert input_id in queued
                assert running, f"{input_id} still queued while idle: neither flushed nor restored"
            if state == "taken":
                assert running, f"{input_id} is still taken while idle"
        restored_events = [e for e in self.harness.events if isinstance(e, RunEnd | InputRestored)]
        restored_ids = [r.input_id for e in restored_events for r in e.restored_input]
        assert len(restored_ids) == len(set(restored_ids)), "an input was restored twice"
        for input_id in self.submitted:
            if ledger.state(input_id) == "restored":
                assert input_id in restored_ids, f"{input_id} restored but never handed back to the user"
        for e in restored_events:
            seqs = [int(r.input_id.split("-")[1]) for r in e.restored_input]
            assert seqs == sorted(seqs), "restored input out of submission order"
        for e in self.harness.run_ends():
            assert e.error is None or SCRIPTED_FAILURE in e.error, f"unexpected failure: {e.error}"

    def teardown(self) -> None:
        c = self.harness.controller
        self.act(c.abort)
        for gate, _ in self.gates:
            gate.open()
        for cid in list(self.tool.gates):
            self.tool.gate(cid).set()
        try:
            self.loop.run_until_complete(asyncio.wait_for(c.wait_idle(), 10))
            self.every_input_ends_once()
            if self.harness.controller.state == "idle":
                # the history left behind is valid for a strict API: one more run completes
                self.next_kind = "text"
                self.server.responder = lambda request: Reply([text("final")])
                self.act(lambda: c.submit("final check"))
                self.loop.run_until_complete(asyncio.wait_for(c.wait_idle(), 10))
                assert self.harness.run_ends()[-1].stop_reason == "completed", self.harness.run_ends()[-1]
        finally:
            self.loop.run_until_complete(self.harness.aclose())
            self.loop.close()


ControllerMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_controller_state_machine = ControllerMachine.TestCase
