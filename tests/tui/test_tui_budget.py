"""R45 in the terminal UI (the real ``ink`` in a pseudo-terminal): ``/budget`` shows what the session and
the run used of each limit, the 80 % warning and the stop at a limit are said in the scrollback with the
queued input back in the editor, and ``/model`` to an unpriced model is refused under a cost limit."""

from __future__ import annotations

from tests.fakeserver import FakeModelServer, Gate, Reply, call, text
from tests.tui.conftest import StartInk


def test_R45_budget_shows_use_and_limits_and_a_stop_hands_the_queue_back(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    g = Gate()
    fake_server.script(
        call("read", {"path": "a.txt"}, id="r1", say_first="one"),  # 15 tokens a reply
        Reply([text("two"), g, text("!")]),
        call("read", {"path": "a.txt"}, id="r3", say_first="never"),
    )
    ink = start_ink("--model", "gpt-4.1", "--max-tokens", "20", "--max-cost", "5")
    ink.type_line("/budget")
    ink.wait_printed("session tokens", whole_line=False)
    ink.wait_text("0 tokens of 20 tokens (0%)")
    ink.wait_text("run cost")
    ink.type_line("go")
    g.wait_reached()
    ink.type_line("and this too")  # queued: the run ends at its limit, so it comes back
    ink.wait_text("queued (1)")
    g.open()
    ink.wait_printed("budget: the session used 30 tokens of its tokens limit of 20 tokens", whole_line=False)
    ink.wait_printed("⏹ stopped at a budget limit", whole_line=False)
    ink.wait_text("○ idle")
    ink.wait_for(lambda: ink.editor_text() == "and this too", what="the queued input back in the editor")
    ink.wait_printed("put back in the editor", whole_line=False)
    assert sum("back in the editor" in line for line in ink.scrollback()) == 1  # said once
    assert len(fake_server.requests) == 2
    ink.send("\x15")  # clear the editor (Ctrl+U)
    ink.type_line("/budget")
    ink.wait_text("30 tokens of 20 tokens (150%)")


def test_R45_model_refuses_an_unpriced_model_under_a_cost_limit(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    ink = start_ink("--model", "gpt-4.1", "--max-cost", "5")
    ink.type_line("/model my-own-model")
    ink.wait_printed("not switched to my-own-model", whole_line=False)
    ink.wait_text("gpt-4.1")
