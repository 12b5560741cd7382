"""Measuring and cutting a history (the mechanism under compaction), and usage totals."""

from __future__ import annotations

from ink.agent.events import MessageEnd
from ink.ai.messages import AssistantMessage, TextBlock, ToolResult, Usage, UserMessage
from ink.run.context import estimate_tokens, find_cut, shorten, transcript, truncate_tool_outputs
from ink.run.events import RunStart
from ink.run.usage import UsageTotals
from tests.store.helpers import answer, calls, result, strict_errors


def test_the_estimate_uses_the_last_reply_usage_plus_what_came_after() -> None:
    reply = AssistantMessage((TextBlock("ok"),), "tool_use", usage=Usage(1_000, 100, 500, 0), timestamp=10.0)
    messages = [UserMessage("x" * 400), reply, ToolResult("a", "read", "y" * 4_000)]
    assert estimate_tokens(messages, overhead_tokens=50, valid_after=0.0) == 1_600 + 1_001


def test_replies_from_before_a_compaction_or_cut_off_are_not_trusted() -> None:
    old = AssistantMessage((TextBlock("ok"),), "stop", usage=Usage(90_000, 100), timestamp=10.0)
    aborted = AssistantMessage((TextBlock("partial"),), "aborted", usage=Usage(80_000, 0), timestamp=30.0)
    summary = UserMessage("s" * 400, kind="summary", timestamp=20.0)
    messages = [summary, old, aborted]
    assert estimate_tokens(messages, overhead_tokens=50, valid_after=20.0) == 50 + 100 + 1 + 2


def test_the_cut_never_separates_a_call_from_its_result() -> None:
    messages = [
        UserMessage("task"),
        calls("a", "b"),
        result("a", "x" * 400),
        result("b", "x" * 400),
        answer(),
    ]
    for keep in range(0, 400, 10):
        cut = find_cut(messages, keep)
        assert cut is not None and not isinstance(messages[cut], ToolResult)
        assert strict_errors([UserMessage("summary", kind="summary"), *messages[cut:]]) == [None, None]


def test_the_cut_keeps_as_many_recent_turns_as_fit() -> None:
    messages = [UserMessage("a" * 400), answer("b" * 400), UserMessage("c" * 400), answer("d" * 400)]
    assert find_cut(messages, keep_tokens=200) == 2
    assert find_cut(messages, keep_tokens=100) == 3
    assert find_cut(messages, keep_tokens=10) == 3  # the last boundary even if it is too large


def test_nothing_to_cut_when_only_a_summary_or_a_single_message_is_older() -> None:
    assert find_cut([UserMessage("only")], 0) is None
    assert find_cut([UserMessage("s", kind="summary"), answer("x" * 4_000)], 0) is None


def test_truncation_shortens_outputs_before_the_end_index_only_and_once() -> None:
    messages = [UserMessage("t"), calls("a", "b"), result("a", "A" * 5_000), result("b", "B" * 5_000)]
    shortened, removed = truncate_tool_outputs(messages, end=3, max_chars=500)
    first, second = shortened[2], shortened[3]
    assert (
        isinstance(first, ToolResult)
        and first.output.startswith("A" * 333)
        and first.output.endswith("A" * 167)
    )
    assert "4500 characters of this output were removed" in first.output
    assert second is messages[3] and removed == 5_000 - len(first.output)
    again, removed_again = truncate_tool_outputs(shortened, end=3, max_chars=500)
    assert removed_again == 0 and again[2] is first


def test_transcript_shortens_outputs_and_the_middle() -> None:
    messages = [UserMessage("start"), calls("a"), result("a", "z" * 10_000), answer("the end")]
    text = transcript(messages, max_chars=100_000, output_chars=1_000)
    assert "[user]\nstart" in text and "[assistant called read]" in text and "the end" in text
    assert len(text) < 2_000
    assert shorten("q" * 10_000, 1_000).count("q") == 1_000


def test_usage_totals_per_run_and_session_with_unknown_prices() -> None:
    totals = UsageTotals(session=Usage(100, 10), session_cost=0.5)
    known = AssistantMessage((TextBlock("x"),), "stop", model="gpt-4.1", usage=Usage(1_000_000, 0))
    totals.on_event(RunStart("run-1"))
    totals.on_event(MessageEnd(known, known.usage))
    assert totals.run == Usage(1_000_000, 0, cost_usd=2.0) and totals.run_cost == 2.0
    assert totals.session == Usage(1_000_100, 10, cost_usd=2.5) and totals.session_cost == 2.5
    unknown = AssistantMessage((TextBlock("x"),), "stop", model="my-local-model", usage=Usage(10, 1))
    totals.on_event(MessageEnd(unknown, unknown.usage))
    assert totals.run_cost is None and totals.session_cost is None  # unknown, never a made-up zero
    totals.on_event(RunStart("run-2"))
    assert totals.run == Usage() and totals.run_cost == 0.0 and totals.session_cost is None
