"""How the TUI lays out: tight markdown with left-aligned headings and highlighted code, a
40-column terminal that still shows whole status, question and tool lines, and a resize in the middle of
a run that re-lays out the screen (SIGWINCH) without leaving stale copies in the scrollback."""

from __future__ import annotations

import re
from pathlib import Path

from ink.frontends.tui.app import HINTS
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal, char_at

RUNNING_HINT = "enter steer · alt+enter follow-up · esc interrupt · ctrl+r redirect · ↑ edit queued"
IDLE_HINT = "enter send · alt+enter follow-up · ctrl+j new line · /help keys and commands"


def whole_items(row: str, full: str) -> bool:
    """``row`` is ``full`` cut at an item boundary (`` · ``), never in the middle of a word."""
    return full.startswith(row) and (row == full or full[len(row) :].startswith(" · "))


def no_stale_copies(ink: InkTerminal) -> None:
    """Once idle, the terminal holds one rule and one status line: none left behind in the scrollback."""
    shown = ink.scrollback()
    assert [line for line in shown if line and set(line) == {"─"}] == ["─" * ink.columns]
    assert not [line for line in shown if line.startswith("● running")]


def test_markdown_is_tight_left_aligned_and_code_is_highlighted(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    reply = "# Plan\n\nFirst do this.\n\n## Steps\n\n```python\ndef f():\n    return 1\n```\n\nDone."
    fake_server.script(say(reply))
    ink = start_ink()
    ink.type_line("plan it")
    ink.wait_text("Done.")
    ink.wait_printed("Done.")
    ink.wait_live_area_empty()  # the last block printed (the live area shows it as it streams), so all are
    shown = ink.scrollback()
    start = shown.index("Plan")  # the whole line: a heading starts at the left edge, not centred
    end = shown.index("Done.")
    assert shown[start : end + 1] == [
        "Plan",
        "",
        "First do this.",
        "",
        "Steps",
        "",
        " def f():",
        "     return 1",
        "",
        "Done.",
    ]  # one blank line between blocks, none doubled, no padding rows around the code
    code = char_at(ink, "def f")
    assert code.fg != "default" and code.bg != "default"  # highlighted, on the theme's background


def test_one_blank_line_separates_blocks_around_tables_and_code(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    """Issue 30: two blank lines followed a code block or a table (rich's empty edge rows)."""
    reply = (
        "Intro.\n\n| name | size |\n|---|---|\n| a.py | 10 |\n\nAfter the table.\n\n"
        "```python\nx = 1\n```\n\nAfter the code.\n\n- one\n- two\n\nThe end."
    )
    fake_server.script(say(reply))
    ink = start_ink()
    ink.type_line("show me")
    ink.wait_printed("The end.")
    ink.wait_live_area_empty()
    shown = ink.scrollback()
    region = shown[shown.index("Intro.") : shown.index("The end.") + 1]
    doubled = [i for i in range(1, len(region)) if not region[i] and not region[i - 1]]
    assert doubled == [], region
    for line in ("After the table.", "After the code.", "The end."):
        at = region.index(line)
        assert region[at - 1] == "" and region[at - 2] != ""  # one blank line before each block
    assert region[region.index("Intro.") + 1] == "" and region[region.index("Intro.") + 2] != ""


def test_a_40_column_terminal_shows_whole_status_question_and_tool_lines(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    command = "for i in 1 2 3; do echo row-$i-of-a-long-output; sleep 0.2; done; touch go-on; sleep 30"
    fake_server.script(Reply([tool_call("bash", {"command": command}, id="c1")]), say("# Done\n\nAll rows."))
    ink = start_ink(permission_mode="ask", columns=40, rows=20)
    ink.type_line("run the loop")
    ink.wait_text("allow bash?")
    ink.wait_text("tab answer it")  # a hand-over would count now
    lines = ink.lines()
    assert " y  once    a  always    n  deny" in lines  # the short labels: all three keys whole
    [status] = [i for i, line in enumerate(lines) if line.startswith("● running")]
    assert whole_items(lines[status + 1], RUNNING_HINT)
    ink.send("\t")
    ink.wait_text("y/a/n answer")
    [status] = [i for i, line in enumerate(ink.lines()) if line.startswith("● running")]
    assert whole_items(ink.lines()[status + 1], HINTS["answering"])
    ink.send("y")
    ink.wait_text("row-3-of-a-long-output")
    lines = ink.lines()
    [tool] = [line for line in lines if line.startswith(("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"))]
    assert tool.startswith("⠋ bash for i in".replace("⠋", tool[0])) and "· running" in tool
    assert "  │ row-3-of-a-long-output" in lines  # the live output under it, one row a line
    [status] = [i for i, line in enumerate(lines) if line.startswith("● running")]
    assert whole_items(lines[status + 1], RUNNING_HINT)
    ink.send("\x1b")  # interrupt the sleep: the run ends, aborted
    ink.wait_text("○ idle")
    lines = ink.lines()
    [status] = [i for i, line in enumerate(lines) if line.startswith("○ idle")]
    assert whole_items(lines[status + 1], IDLE_HINT)
    assert "ask · gpt-4.1" in lines[status]  # the right side lost whole items only
    no_stale_copies(ink)


def test_a_resize_during_a_run_lays_the_screen_out_again(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    command = (
        "for i in $(seq 1 60); do echo line-$i-of-a-rather-long-output-row-that-goes-on; sleep 0.1; done"
    )
    fake_server.script(Reply([tool_call("bash", {"command": command}, id="c1")]), say("All printed."))
    ink = start_ink(columns=100, rows=24)
    ink.type_line("print the lines")
    ink.wait_text("line-3-of")
    ink.resize(24, 44)  # SIGWINCH in the middle of the run
    ink.wait_for(lambda: "─" * 44 in ink.lines(), what="the rule drawn at the new width")
    ink.wait_text("line-12-of")
    lines = ink.lines()
    [row] = [i for i, line in enumerate(lines) if line.startswith("  │ line-12-of-a-rather-long")]
    assert lines[row + 1].startswith(("  │ line-13", "─"))  # cut at the new width, not wrapped
    [status] = [i for i, line in enumerate(lines) if line.startswith("● running")]
    assert whole_items(lines[status + 1], RUNNING_HINT) and len(lines[status + 1]) <= 43
    ink.resize(24, 90)
    ink.wait_for(lambda: "─" * 90 in ink.lines(), what="the rule drawn at the wider width")
    ink.wait_text("All printed.", timeout=30)
    ink.wait_text("○ idle")
    no_stale_copies(ink)


def test_wrapped_rows_keep_their_indent_and_words_stay_whole(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    """Issue 30: /help rows and wrapped tool-result lines fell to column 0 (one help row ended 'those
    starting so'), and streaming text wrapped in the middle of words."""
    long = "a long line of output that is definitely longer than the forty-five columns here"
    words = " ".join(f"streamword{i}" for i in range(30))
    gate = Gate()
    fake_server.script(
        Reply([tool_call("bash", {"command": f"echo '{long}'"}, id="c1")]),
        Reply([text(words), gate, text(" end.")]),
    )
    ink = start_ink(columns=45, rows=30)
    ink.type_line("go")
    gate.wait_reached()
    ink.wait_text("streamword29")
    live = [line for line in ink.lines() if "streamword" in line]
    assert live and all(re.fullmatch(r"(streamword\d+ ?)+", line.strip()) for line in live)  # whole words
    gate.open()
    ink.wait_text("○ idle")
    ink.wait_live_area_empty()
    shown = ink.scrollback()
    rows = [line for line in shown if any(w in line for w in ("a long line", "definitely", "columns here"))]
    rows = [row for row in rows if not row.startswith("✓")]  # the output's rows, not the call's line
    assert len(rows) >= 2 and all(row.startswith("  ") for row in rows), rows  # under the call, indented
    ink.type_line("/help")
    ink.wait_text("runs in the shell")
    ink.wait_live_area_empty()
    shown = ink.scrollback()
    start = shown.index("Keys:")
    listing = shown[start + 1 : shown.index("Commands:")]
    assert all(line.startswith("  ") for line in listing if line), listing  # nothing at column 0
    assert "those starting so" not in " ".join(shown)
