"""The renderer without a terminal: run events in, printed blocks and live state out."""

from __future__ import annotations

from pathlib import Path

from ink.agent.events import (
    InputTaken,
    MessageEnd,
    MessageStart,
    TakenInput,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCancelling,
    ToolEnd,
    ToolRunning,
    ToolSettled,
    ToolStart,
)
from ink.agent.tool import Tool, find_tool
from ink.ai.details import FileDiff
from ink.ai.messages import AssistantBlock, AssistantMessage, TextBlock, ToolCall, ToolResult, Usage
from ink.frontends.tui.blocks import Block
from ink.frontends.tui.editor import merge_restored
from ink.frontends.tui.paint import Painter
from ink.frontends.tui.panels import live_fragments, queue_fragments
from ink.frontends.tui.view import EventView
from ink.frontends.tui.wrapping import wrap_tail
from ink.run.events import (
    AbortReceipt,
    BangEnd,
    BangStart,
    InputRestored,
    PermissionRequest,
    PermissionResolved,
    QueuedInput,
    QueueUpdate,
    RunEnd,
    RunStart,
    Survivor,
)
from ink.tools import ProcessRegistry, default_tools

_BUILT_IN = default_tools(Path.cwd(), ProcessRegistry())


def builtin_tool(name: str) -> Tool | None:  # the lookup the app gives the view
    return find_tool(_BUILT_IN, name)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def kinds(blocks: list[Block]) -> list[str]:
    return [b.kind for b in blocks]


def reply(text: str, *calls: ToolCall) -> MessageEnd:
    content: tuple[AssistantBlock, ...] = (TextBlock(text), *calls) if text else calls
    return MessageEnd(AssistantMessage(content, "tool_use" if calls else "stop"), Usage())


def test_text_is_printed_a_finished_block_at_a_time_and_the_rest_at_message_end() -> None:
    view = EventView(Clock(), builtin_tool)
    view.on_event(RunStart("run-1"))
    view.on_event(InputTaken("steer", (TakenInput("in-1", "hello"),)))
    assert view.take_printed() == [Block("user", "hello")]
    view.on_event(MessageStart())
    for chunk in ["Para one", ".\n\nPara", " two."]:
        view.on_event(TextDeltaEvent(chunk))
    assert view.take_printed() == []  # para one may still go on: a blank line alone ends nothing
    assert view.text.live_lines(5) == ["Para one.", "", "Para two."]
    view.on_event(reply("Para one.\n\nPara two."))
    assert view.take_printed() == [Block("markdown", "Para one."), Block("markdown", "Para two.")]
    assert view.text.empty


def test_thinking_is_printed_dimmed_before_the_text_and_folded_when_long() -> None:
    view = EventView(Clock(), builtin_tool)
    view.on_event(ThinkingDeltaEvent("\n".join(f"step {i}" for i in range(20))))
    assert view.thinking_tail(2) == ["step 18", "step 19"]
    view.on_event(TextDeltaEvent("Answer"))
    [thinking] = view.take_printed()
    assert thinking.kind == "thinking" and thinking.text.startswith("step 0\n")
    assert "12 more lines of thinking (ctrl+o to expand)" in thinking.text
    assert view.expand_next()
    assert view.take_printed()[1:] == [Block("thinking", "\n".join(f"step {i}" for i in range(20)))]


def test_a_tool_goes_queued_running_done_with_its_duration() -> None:
    clock = Clock()
    view = EventView(clock, builtin_tool)
    call = ToolCall("c1", "bash", {"command": "ls -la"})
    view.on_event(reply("", call))
    assert view.tools["c1"].status == "queued"
    view.on_event(ToolStart("c1", "bash", call.arguments))
    clock.now += 2.5
    [running] = [text for _style, text in live_fragments(view, 80, 10, clock.now) if "running" in text]
    assert "running 2.5s" in running
    result = ToolResult("c1", "bash", "a\nb\nc\nd\ne\nf", duration_ms=2500)
    view.on_event(ToolEnd("c1", result))
    assert view.tools == {}
    line, output = view.take_printed()
    assert line == Block("tool", "✓ bash ls -la · 2.5s", "ok")
    assert output.text == "a\nb\nc\nd\n… 2 more lines (ctrl+o to expand)"
    assert view.expand_next()
    assert view.take_printed()[1:] == [Block("output", "a\nb\nc\nd\ne\nf", "dim")]


def test_a_concurrent_result_is_shown_at_settle_and_not_again_at_end() -> None:
    """R6: showing a result twice is a bug."""
    view = EventView(Clock(), builtin_tool)
    result = ToolResult("c1", "read", "content", duration_ms=3)
    for event in (
        ToolStart("c1", "read", {"path": "a.txt"}),
        ToolRunning("c1"),
        ToolSettled("c1", result),
        ToolEnd("c1", result, shown=True),  # the scheduler says it was shown
    ):
        view.on_event(event)
    assert kinds(view.take_printed()) == ["tool", "output"]


def test_an_error_result_is_red_and_an_interrupted_one_is_not_an_error() -> None:
    view = EventView(Clock(), builtin_tool)
    view.on_event(ToolStart("c1", "read", {"path": "nope.txt"}))
    view.on_event(ToolEnd("c1", ToolResult("c1", "read", "File not found: nope.txt", is_error=True)))
    view.on_event(ToolStart("c2", "bash", {"command": "sleep 9"}))
    view.on_event(ToolCancelling("c2", 10.0))
    assert view.tools["c2"].status == "cancelling"
    partial = ToolResult("c2", "bash", "Interrupted", is_error=True, duration_ms=1200, interrupted=True)
    view.on_event(ToolEnd("c2", partial))
    printed = view.take_printed()
    assert printed[0] == Block("tool", "✗ read nope.txt · error", "error")
    assert printed[1].tone == "error"
    assert printed[2] == Block("tool", "⏹ bash sleep 9 · interrupted after 1.2s", "interrupted")
    assert printed[3].tone == "dim"


def test_a_result_that_changed_a_file_prints_the_diff_of_its_details_not_its_text() -> None:
    view = EventView(Clock(), builtin_tool)
    change = FileDiff("a.py", "old\n", "new\n", "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old\n+new\n")
    text = "Changed a.py.\n\n(whatever the model reads)"
    view.on_event(ToolStart("c1", "made_up", {"path": "a.py"}))
    view.on_event(ToolEnd("c1", ToolResult("c1", "made_up", text, details=(change,))))
    assert view.take_printed()[1:] == [
        Block("output", "Changed a.py.", "dim"),
        Block("diff", "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old\n+new"),
    ]


def test_an_abort_prints_interrupted_with_its_receipt_never_an_error() -> None:
    """R18, R34: the abort is an outcome; what it did is said, survivors and abandoned calls warned."""
    view = EventView(Clock(), builtin_tool)
    restored = (QueuedInput("in-2", "steer me", "steer"), QueuedInput("in-3", "later", "follow_up"))
    receipt = AbortReceipt(
        "user", not_started=("c2",), interrupted=("c1",), abandoned=("c3",),
        survivors=(Survivor(4242, "sleep 100", "ignored KILL"),), restored=("in-2", "in-3"),
    )  # fmt: skip
    view.on_event(RunEnd("run-1", "aborted", restored, receipt=receipt))
    head, abandoned, survivor = view.take_printed()
    assert head.kind == "interrupted"
    assert head.text == (
        "⏹ interrupted · 1 tool call not started · 1 tool call stopped"
        " · 2 queued inputs put back in the editor"
    )
    assert abandoned.kind == "warning" and "may still be running" in abandoned.text
    assert survivor == Block("warning", "process 4242 (sleep 100) is still running")


def test_a_failure_shows_the_providers_message_and_how_to_retry() -> None:
    view = EventView(Clock(), builtin_tool)
    view.on_event(RunEnd("run-1", "error", error="rate limited (429): slow down"))
    error, hint = view.take_printed()
    assert error == Block("error", "✗ the run failed: rate limited (429): slow down")
    assert "continue" in hint.text


def test_steers_and_follow_ups_taken_mid_run_are_labelled() -> None:
    view = EventView(Clock(), builtin_tool)
    view.on_event(RunStart("run-1"))
    view.on_event(InputTaken("steer", (TakenInput("in-1", "first"),)))
    view.on_event(InputTaken("steer", (TakenInput("in-2", "a"), TakenInput("in-3", "b"))))
    view.on_event(InputTaken("follow_up", (TakenInput("in-4", "c"),)))
    assert [b.text for b in view.take_printed()] == ["first", "steer: a", "steer: b", "follow-up: c"]


def test_the_queue_panel_lists_each_entry_with_its_mode() -> None:
    view = EventView(Clock(), builtin_tool)
    queue = (
        QueuedInput("in-1", "fix the tests\nand more", "steer"),
        QueuedInput("in-2", "then docs", "follow_up"),
        QueuedInput("in-3", "!git status", "steer"),
    )
    view.on_event(QueueUpdate(queue))
    text = "".join(t for _s, t in queue_fragments(view.queue, 60))
    assert text.split("\n")[1:] == [
        "  steer      fix the tests …",
        "  follow-up  then docs",
        "  !shell     !git status",
    ]


def test_permission_questions_open_and_close_with_a_note() -> None:
    view = EventView(Clock(), builtin_tool)
    view.on_event(PermissionRequest("perm-1", "c1", "bash", {"command": "rm -rf build"}))
    assert [q.request_id for q in view.questions] == ["perm-1"]
    view.on_event(PermissionResolved("perm-1", "deny"))
    assert view.questions == []
    assert view.take_printed() == [Block("info", "bash rm -rf build: denied", "interrupted")]


def test_a_bang_line_prints_its_command_output_and_a_failing_status() -> None:
    view = EventView(Clock(), builtin_tool)
    view.on_event(BangStart("make test", "in-1"))
    view.on_event(BangEnd("make test", "1 failed\n", 2, "in-1"))
    assert view.take_printed() == [
        Block("bang", "$ make test"),
        Block("output", "1 failed", ""),
        Block("error", "exit status 2"),
    ]


def test_escape_sequences_from_a_model_or_a_command_never_reach_the_terminal() -> None:
    painter = Painter(color=False)
    out = painter.paint([Block("output", "\x1b[2Jcleared\x1b]0;title\x07 \x07bell")], 80)
    assert "\x1b" not in out and "\x07" not in out
    assert out.strip() == "cleared bell"


def test_markdown_is_rendered_and_brackets_stay_brackets() -> None:
    out = Painter(color=False).paint([Block("markdown", "Use **bold** and [red]not markup[/red].")], 80)
    assert out == "Use bold and [red]not markup[/red].\n"


def test_paragraphs_of_a_reply_are_separated_by_a_blank_line() -> None:
    painter = Painter(color=False)
    first = painter.paint([Block("user", "hi"), Block("markdown", "One.")], 80)
    second = painter.paint([Block("markdown", "Two.")], 80)
    assert first == "› hi\n\nOne.\n"
    assert second == "\nTwo.\n"


def test_restored_input_goes_before_what_is_being_typed() -> None:
    """R30: one paragraph each, in submission order, then the text being typed (kept)."""
    assert merge_restored(["one", "two\nlines"], "typing") == "one\n\ntwo\nlines\n\ntyping"
    assert merge_restored(["one"], "  ") == "one"


def test_the_live_area_shows_the_tail_of_a_long_line_wrapped() -> None:
    assert wrap_tail(["x" * 25], 10, 2) == ["x" * 10, "x" * 5]
    assert wrap_tail(["x" * 1000 + "yz"], 10, 2) == ["x" * 10, "yz"]
    assert wrap_tail(["x" * 20], 10, 5) == ["x" * 10, "x" * 10]
    assert wrap_tail(["a", "b", "c"], 10, 2) == ["b", "c"]
    assert wrap_tail(["日本語テキスト"], 6, 5) == ["日本語", "テキス", "ト"]


def test_input_a_rewind_took_back_is_not_called_queued() -> None:
    """A conversation rewind gives back inputs that were sent (``input_restored``), not queued ones."""
    view = EventView(Clock(), builtin_tool)
    view.on_event(
        InputRestored((QueuedInput("in-1", "now sleep", "steer"), QueuedInput("in-2", "x", "steer")))
    )
    assert [b.text for b in view.take_printed()] == ["2 inputs put back in the editor"]
