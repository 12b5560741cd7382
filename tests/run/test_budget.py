"""R45 Budgets through the real controller, loop and scheduler with the in-memory scripted model: limits
on cost, tokens and time checked at every safe point, a warning at 80 %, the run ended at the next safe
point (never mid-reply or mid-tool) with stop reason ``budget`` and its queue handed back (R22); unknown
prices are unknown, never zero."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from msgspec.structs import replace

from ink.agent.budget import BudgetStop
from ink.agent.events import RunHeld
from ink.ai.messages import ToolResult
from ink.config.limits import Limits, LimitSettings
from ink.run.budget import Budget, warning_text
from ink.run.events import BudgetWarning, InputRestored, RunEnd
from ink.run.usage import UsageTotals
from tests.events import events_of
from tests.fakeserver import Gate, Reply, Usage, say, text, tool_call
from tests.run.harness import Harness
from tests.scripted_provider import ScriptedProvider
from tests.scripted_tools import ScriptedTool

PRICED = "gpt-4.1"  # $2 per million input tokens, $8 per million output tokens


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def budgeted(h: Harness, limits: LimitSettings, clock: Clock | None = None, model: str = PRICED) -> Budget:
    """``h`` with a budget wired as the app wires it: counted by the usage totals, timed by the events."""
    budget = Budget(limits, h.controller.emit, clock or Clock())
    usage = UsageTotals()
    usage.counters.append(budget.count)
    h.controller.subscribe(usage.on_event)
    h.controller.subscribe(budget.on_event)
    h.setup = replace(h.setup, budget=budget, model=model)
    return budget


def run_limit(**limits: float) -> LimitSettings:
    return LimitSettings(run=Limits(**limits))  # type: ignore[arg-type]


@pytest.fixture
async def h(model: ScriptedProvider) -> AsyncIterator[Harness]:
    harness = Harness(model, tools=[ScriptedTool("read"), ScriptedTool("slow", safe=False)])
    yield harness
    await harness.aclose()


def read(call_id: str) -> object:
    return tool_call("read", {"x": call_id}, id=call_id)


async def test_R45_a_token_limit_warns_at_80_percent_then_ends_the_run_at_its_next_safe_point(
    h: Harness, model: ScriptedProvider
) -> None:
    budgeted(h, run_limit(max_tokens=36))  # each reply: 10 in + 5 out
    model.script(Reply([read("r1")]), Reply([read("r2")]), Reply([text("more"), read("r3")]), say("never"))
    h.controller.submit("go")
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "budget"
    assert end.budget == BudgetStop("tokens", "run", 45.0, 36.0)
    assert len(model.requests) == 3  # no fourth model call
    [warning] = events_of(h.events, BudgetWarning)
    assert (warning.kind, warning.scope, warning.used, warning.limit) == ("tokens", "run", 30.0, 36.0)
    assert h.events.index(warning) < h.events.index(end)
    results = {m.tool_call_id: m for m in h.history if isinstance(m, ToolResult)}
    assert not results["r2"].is_error  # the calls before the limit ran
    assert results["r3"].is_error and "stopped at its budget" in results["r3"].output  # never started
    assert "the run used 45 tokens of its tokens limit of 36 tokens" in results["r3"].output
    model.script(say("fine"))
    assert await h.next_run_completes()  # the history is valid, and a run's limit starts again


async def test_R45_a_budget_never_stops_a_tool_mid_run_and_the_queue_comes_back(
    h: Harness, model: ScriptedProvider
) -> None:
    clock = Clock()
    budgeted(h, run_limit(max_seconds=60), clock)
    calls = [tool_call("slow", {"x": str(i)}, id=f"s{i}") for i in (1, 2)]
    model.script(Reply(calls), say("never"))
    release = h.tools[1].gate("s1")  # type: ignore[attr-defined]
    h.controller.submit("go")
    await h.tools[1].started_event("s1").wait()  # type: ignore[attr-defined]
    queued = h.controller.submit("queued meanwhile")
    clock.now += 61  # the limit passes while s1 runs: it is not killed
    release.set()
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "budget" and end.budget is not None and end.budget.kind == "time"
    results = {m.tool_call_id: m for m in h.history if isinstance(m, ToolResult)}
    assert not results["s1"].is_error and not results["s1"].interrupted  # finished as it would have
    assert "stopped at its budget" in results["s2"].output  # the next safe point
    assert [q.input_id for q in end.restored_input] == [queued.input_id]  # R22
    assert end.receipt is None  # not an abort
    assert len(model.requests) == 1


async def test_R45_time_paused_does_not_count(h: Harness, model: ScriptedProvider) -> None:
    clock = Clock()
    budget = budgeted(h, run_limit(max_seconds=60), clock)
    g = Gate()
    model.script(Reply([text("a"), g, read("r1")]), say("done"))
    h.controller.submit("go")
    await g.wait_reached_async()
    clock.now += 10
    h.controller.pause()
    g.open()
    await h.wait_event(RunHeld)
    clock.now += 3600  # an hour paused
    h.controller.resume()
    await h.settled()
    assert h.run_ends()[-1].stop_reason == "completed"
    assert budget.run.seconds == pytest.approx(10)


async def test_R45_a_used_up_session_budget_hands_the_next_prompt_back_unsent(
    h: Harness, model: ScriptedProvider
) -> None:
    budgeted(h, LimitSettings(session=Limits(max_tokens=15)))
    model.script(say("first"))
    h.controller.submit("one")
    await h.settled()
    assert h.run_ends()[-1].stop_reason == "completed"  # the work was done when the limit was reached
    second = h.controller.submit("two")
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "budget" and end.budget is not None and end.budget.scope == "session"
    [restored] = events_of(h.events, InputRestored)
    assert [r.input_id for r in restored.restored_input] == [second.input_id]
    assert len(model.requests) == 1 and "two" not in h.user_texts()


async def test_R45_queued_input_at_the_would_end_point_goes_back_when_the_budget_is_used_up(
    h: Harness, model: ScriptedProvider
) -> None:
    budgeted(h, run_limit(max_tokens=15))
    g = Gate()
    model.script(Reply([text("done "), g, text("now")]), say("never"))
    h.controller.submit("go")
    await g.wait_reached_async()
    follow = h.controller.submit("and then this", "follow_up")
    g.open()
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "budget"
    back = [r.input_id for e in events_of(h.events, InputRestored) for r in e.restored_input]
    assert back + [r.input_id for r in end.restored_input] == [follow.input_id]
    assert len(model.requests) == 1


async def test_R45_an_unknown_price_under_a_cost_limit_ends_the_run_never_counts_zero(
    h: Harness, model: ScriptedProvider
) -> None:
    budgeted(h, run_limit(max_cost_usd=100.0), model="some-unpriced-model")
    model.script(Reply([read("r1")]), say("never"))
    h.controller.submit("go")
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "budget" and end.budget is not None
    assert end.budget.used is None and "some-unpriced-model has no known prices" in str(end.budget)


async def test_R45_a_cost_limit_counts_each_reply_at_its_models_price(
    h: Harness, model: ScriptedProvider
) -> None:
    budget = budgeted(h, run_limit(max_cost_usd=0.05))
    big = Usage(input_tokens=10_000, output_tokens=1_000)  # $0.02 + $0.008 a reply
    model.script(Reply([read("r1")], usage=big), Reply([read("r2")], usage=big), say("never", usage=big))
    h.controller.submit("go")
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "budget" and end.budget is not None and end.budget.kind == "cost"
    assert budget.run.cost == pytest.approx(0.056)
    [warning] = events_of(h.events, BudgetWarning)
    assert "of its cost limit of $0.05" in warning_text(warning)


def test_R45_a_model_without_prices_is_refused_under_a_cost_limit_only() -> None:
    limits = LimitSettings(session=Limits(max_cost_usd=1.0), origins={"session.max_cost_usd": "--max-cost"})
    limited = Budget(limits, print)
    problem = limited.model_problem("my-local-model")
    assert problem is not None and "--max-cost" in problem and "my-local-model" in problem
    assert limited.model_problem(PRICED) is None
    assert Budget(run_limit(max_tokens=10), print).model_problem("my-local-model") is None


async def test_R45_without_a_budget_a_run_ends_as_before(h: Harness, model: ScriptedProvider) -> None:
    model.script(Reply([read("r1")]), say("done"))
    h.controller.submit("go")
    await h.settled()
    assert h.run_ends()[-1].stop_reason == "completed"
    assert isinstance(h.run_ends()[-1], RunEnd) and h.run_ends()[-1].budget is None
