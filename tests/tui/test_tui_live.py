"""A running tool shows its output as it comes (issue 12: live tool output)."""

from __future__ import annotations

from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.tui.conftest import StartInk

ESC = "\x1b"


def test_a_running_command_shows_its_lines_before_it_ends(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    command = "for i in 1 2 3 4 5; do echo line-$i; sleep 1; done"
    fake_server.script(Reply([tool_call("bash", {"command": command}, id="c1")]), say("Counted."))
    ink = start_ink()
    ink.type_line("count slowly")
    ink.wait_text("│ line-2")  # under the running tool, with its elapsed time
    shown = ink.text()
    assert "│ line-1" in shown and "· running " in shown
    assert "✓ bash" not in "\n".join(ink.scrollback())  # it has not ended
    assert len(fake_server.requests) == 1
    ink.wait_text("Counted.")
    ink.wait_text("○ idle")
    assert "│ line-" not in ink.text()  # the live tail is gone once the result is printed
