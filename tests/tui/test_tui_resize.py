"""Issue 30, layout: a resize lays the screen out again at once, during streaming and during a tool's live
output, at 40 and 100 columns (README). A terminal that reflows (tmux here, as iTerm2 and VTE do) kept a
stale copy of the live area and its rule in the scrollback, every time; one that cuts lines (pyte, as
xterm does) showed the earlier output cut at the narrower width."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal
from tests.tui.tmux import TmuxTerminal

WORDS = [f"word{i}" for i in range(40)]
FIRST = " ".join(f"printed{i}" for i in range(30))  # a paragraph printed before the resize
LOOP = "for i in $(seq 1 400); do echo output-line-$i-of-the-loop; sleep 0.05; done"


def flowing(ink: InkTerminal) -> str:
    """All the terminal holds as one line of words (rows wrap differently at each width)."""
    return " ".join(" ".join(ink.scrollback()).split())


def rules(lines: list[str]) -> int:
    return sum(1 for line in lines if line and set(line) == {"─"})


def streaming(fake_server: FakeModelServer) -> Gate:
    gate = Gate()
    steps = [*(text(w + " ") for w in WORDS), gate, text("THE END.")]
    fake_server.script(say(FIRST), Reply(steps, chunk_delay=0.005))
    return gate


def laid_out_at(ink: InkTerminal, columns: int, printed: str) -> None:
    """Wait until the scrollback was printed again at ``columns``: ``printed`` (printed before the
    resize, wider than 40 columns) reads whole, wrapped."""

    def whole() -> bool:
        shown = ink.scrollback()
        return all(len(line) <= columns for line in shown) and printed in " ".join(" ".join(shown).split())

    ink.wait_for(whole, what=f"the scrollback laid out at {columns} columns")


@pytest.mark.parametrize("sizes", [(100, 40), (40, 100)])
def test_a_resize_during_streaming_lays_everything_out_again(
    fake_server: FakeModelServer, start_ink: StartInk, sizes: tuple[int, int]
) -> None:
    first, second = sizes
    gate = streaming(fake_server)
    ink = start_ink(rows=24, columns=first)
    ink.type_line("first")  # its reply is printed into the scrollback before the resize
    ink.wait_printed("printed29", whole_line=False)
    ink.wait_text("○ idle")
    ink.type_line("go")
    gate.wait_reached()
    ink.resize(24, second)
    laid_out_at(ink, second, FIRST)
    ink.resize(24, first)
    laid_out_at(ink, first, FIRST)
    gate.open()
    ink.wait_text("THE END.")
    ink.wait_text("○ idle")
    # printed on the paint loop's tick, which may come after the app showed its empty live area
    ink.wait_for(lambda: " ".join(WORDS) + " THE END." in flowing(ink), what="the reply printed")
    shown = ink.scrollback()
    assert rules(shown) == 1  # the app's own, once
    assert flowing(ink).count("word39") == 1 and flowing(ink).count("› go") == 1


@pytest.mark.parametrize("sizes", [(100, 40), (40, 100)])
def test_a_resize_during_live_tool_output_lays_everything_out_again(
    fake_server: FakeModelServer, start_ink: StartInk, sizes: tuple[int, int]
) -> None:
    first, second = sizes
    fake_server.script(say(FIRST), Reply([tool_call("bash", {"command": LOOP}, id="c1")]), say("THE END."))
    ink = start_ink(rows=24, columns=first)
    ink.type_line("first")  # its reply is printed into the scrollback before the resize
    ink.wait_printed("printed29", whole_line=False)
    ink.wait_text("○ idle")
    ink.type_line("loop")
    ink.wait_text("│ output-line-3")
    ink.resize(24, second)
    laid_out_at(ink, second, FIRST)
    ink.wait_for(lambda: "│ output-line-" in ink.text(), what="the live output drawn again")
    ink.resize(24, first)
    laid_out_at(ink, first, FIRST)
    ink.send("\x1b")  # stop the loop: the run ends
    ink.wait_text("○ idle")
    ink.wait_for(lambda: "⏹ bash for" in "\n".join(ink.scrollback()), what="the call's line printed")
    shown = ink.scrollback()
    assert rules(shown) == 1
    assert sum(1 for line in shown if "│ output-line-" in line) == 0  # no live row left behind
    assert sum(1 for line in shown if line.startswith("⏹ bash for")) == 1


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux, a terminal that reflows")
@pytest.mark.parametrize("live", ["streaming", "tool output"])
def test_in_a_terminal_that_reflows_no_stale_copy_is_left(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, live: str
) -> None:
    gate = Gate()
    if live == "streaming":
        fake_server.script(Reply([*(text(w + " ") for w in WORDS), gate, text("THE END.")]))
    else:
        fake_server.script(Reply([tool_call("bash", {"command": LOOP}, id="c1")]), say("THE END."))
    env = ink_env(tmp_path, TERM="xterm-256color")
    args = ["--base-url", fake_server.openai_base_url, "--api-key", "k", "--permission-mode", "yolo"]
    ink = TmuxTerminal(args, env, project, tmp_path, 24, 100)
    try:
        ink.wait_for(lambda: "○ idle" in ink.screen(), "the UI")
        ink.send("go")
        ink.enter()
        if live == "streaming":
            gate.wait_reached()
            ink.wait_for(lambda: "word39" in ink.screen(), "the streamed words")
        else:
            ink.wait_for(lambda: "│ output-line-3" in ink.screen(), "the live output")
        for columns in (40, 100, 40, 100):
            ink.resize(24, columns)
            ink.wait_for(lambda: "○ idle" in ink.screen() or "● running" in ink.screen(), "the redraw")
            ink.wait_for(lambda: rules(ink.capture()) == 1, f"one rule at {columns} columns")
        if live == "streaming":
            gate.open()
            ink.wait_for(lambda: "THE END." in ink.screen() and "○ idle" in ink.screen(), "the end")
            ink.wait_for(lambda: tmux_flowing(ink).count("word39") == 1, "the reply once, laid out again")
        else:
            ink.send("\x1b")
            ink.wait_for(lambda: "○ idle" in ink.screen(), "the interrupt")
            ink.wait_for(lambda: "│ output-line-" not in "".join(ink.capture()), "no live row left")
        ink.wait_for(lambda: laid_out(ink.capture(), 100), "one rule at the end")
    finally:
        ink.close()


def tmux_flowing(ink: TmuxTerminal) -> str:
    return " ".join(" ".join(ink.capture()).split())


def laid_out(lines: list[str], columns: int) -> bool:
    """One rule in all the terminal holds, as wide as the terminal: no stale copy at another width."""
    found = [line for line in lines if line and set(line) == {"─"}]
    return len(found) == 1 and len(found[0]) == columns


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux, a terminal that reflows")
@pytest.mark.parametrize("start", ["ink", "ink --resume"])
def test_in_tmux_a_start_on_the_top_row_leaves_no_stale_copy(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, start: str
) -> None:
    """tmux moves the screen into its scrollback when it is cleared from the top row (scroll-on-clear):
    the app drawn there and erased for its first print (the banner), or the picker erased once a session
    is chosen, stayed in the scrollback as a stale copy."""
    env = ink_env(tmp_path, TERM="xterm-256color")
    args = ["--base-url", fake_server.openai_base_url, "--api-key", "k", "--permission-mode", "yolo"]
    fake_server.script(say("THE END."))
    if start == "ink --resume":
        fake_server.script(say("Made."), say("THE END."))
        done = run_ink([*args, "-p", "an earlier session"], env | {"OPENAI_API_KEY": "k"}, project)
        assert done.returncode == 0, done.stderr
        args.append("--resume")
    ink = TmuxTerminal(args, env, project, tmp_path, 24, 100)
    try:
        if start == "ink --resume":
            ink.wait_for(lambda: "esc quit" in ink.screen(), "the picker")
            ink.enter()
        ink.wait_for(lambda: "○ idle" in ink.screen(), "the UI")
        ink.send("go")
        ink.enter()
        ink.wait_for(lambda: "THE END." in ink.screen() and "○ idle" in ink.screen(), "the reply")

        def one_copy(shown: list[str]) -> bool:  # one rule and one status line: the app's own
            return laid_out(shown, 100) and sum("○ idle" in line for line in shown) == 1

        ink.wait_for(lambda: one_copy(ink.capture()), "the app once in all tmux holds")
        assert not any("esc quit" in line for line in ink.capture())
    finally:
        ink.close()
